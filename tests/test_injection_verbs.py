"""``box.resume_context`` and ``box.first_message_recall`` (DESIGN §7) over a real store."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

import recallbox
from recallbox.domains import registry
from recallbox.domains.base import SearchContext
from recallbox.injection import RESUME_HEADER, RESUME_MIN_BUDGET_CHARS
from recallbox.recall import RECALL_HEADER
from recallbox.text.fts_query import FtsQuery
from recallbox.text.tokens import estimate_tokens
from recallbox.types import Hit
from table_dump import hit_log_rows


def work_thread(box: recallbox.Box, channel: str = "ops") -> None:
    box.append(channel, "user", "Deploy billing to staging-03.")
    box.append(
        channel,
        "assistant",
        "Deploying.",
        tool_calls=[{"id": "c1", "name": "bash", "arguments": {"command": "make deploy"}}],
    )
    box.append(channel, "tool", "deploy: OK in 94s", tool_call_id="c1")
    box.append(channel, "assistant", "Billing is deployed on staging-03.")


# -- resume_context ------------------------------------------------------------------------------


def test_resume_is_deterministic_for_identical_database_state(
    db_path: Path, db_copy: Callable[[str, str], Path | str]
) -> None:
    with recallbox.open(db_path) as box:
        work_thread(box)
        first = box.resume_context("ops")
        assert first == box.resume_context("ops")
    with recallbox.open(db_copy("recall", "copy")) as again:
        assert again.resume_context("ops") == first
    assert first.startswith(RESUME_HEADER) and "Billing is deployed" in first
    assert 'channel="ops"' in first and "make deploy" in first


def test_resume_of_a_thread_of_only_tool_messages(box: recallbox.Box) -> None:
    for i in range(5):
        box.append("tools", "tool", f"step {i}: exit 0")
    text = box.resume_context("tools")
    assert text.startswith(RESUME_HEADER) and "[checkpoint" in text and "step 4" in text


def test_the_checkpoint_survives_the_smallest_budget(box: recallbox.Box) -> None:
    for i in range(200):
        box.append("long", "user" if i % 2 else "assistant", f"turn {i} " + "words " * 100)
    text = box.resume_context("long", budget_chars=1)
    assert len(text) <= RESUME_MIN_BUDGET_CHARS and "[checkpoint" in text
    assert "last user request" in text


def test_unknown_and_denied_channels_give_the_same_checkpoint(box: recallbox.Box) -> None:
    work_thread(box, "secret")
    box.quarantine("secret")
    denied = box.resume_context("secret")
    assert "staging-03" not in denied and "billing" not in denied.lower()
    assert denied == box.resume_context("unknown-channel").replace("unknown-channel", "secret")
    box.unquarantine("secret")
    assert "staging-03" in box.resume_context("secret")


def test_resume_never_raises(box: recallbox.Box, monkeypatch: pytest.MonkeyPatch) -> None:
    work_thread(box)

    def broken(channel: str) -> list[object]:
        raise recallbox.StoreUnavailable("damaged")

    monkeypatch.setattr(box.store, "readable_history", broken)
    assert box.resume_context("ops").startswith(RESUME_HEADER)
    assert box.resume_context("").startswith(RESUME_HEADER)
    assert box.resume_context(None).startswith(RESUME_HEADER)  # type: ignore[arg-type]


def test_resume_records_nothing(box: recallbox.Box, db_path: Path) -> None:
    work_thread(box)
    box.resume_context("ops")
    box.hits.flush()
    assert hit_log_rows(db_path) == []


# -- first_message_recall ------------------------------------------------------------------------
#: The time limit of the recalls below that test what is recalled, not the limit itself (the
#: default 150 ms is wall time, which a loaded machine can spend before the first query).
UNHURRIED_S = 30.0


def test_once_per_generation_from_any_process(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        work_thread(box, "old")
        box.append("new", "user", "Why did the billing deploy on staging-03 fail?")
        text = box.first_message_recall(
            "new", "Why did the billing deploy on staging-03 fail?", timeout_s=UNHURRIED_S
        )
        assert text.startswith(RECALL_HEADER) and "Billing is deployed on staging-03" in text
        assert box.first_message_recall("new", "again about billing") == ""
    with recallbox.open(db_path) as other:  # another process: the row is in the database
        assert other.first_message_recall("new", "billing staging-03") == ""
        other.compact("new", "Talked about the deploy.")
        recalled = other.first_message_recall("new", "billing staging-03", timeout_s=UNHURRIED_S)
        assert recalled.startswith(RECALL_HEADER)
    rows = [r for r in hit_log_rows(db_path) if r[0] == "first_message"]
    assert len(rows) == 2 and rows[0][2] != rows[1][2]  # one row per generation id


def test_the_result_fits_max_tokens(box: recallbox.Box) -> None:
    for i in range(50):
        box.append(f"t{i}", "user", f"billing staging-03 note {i} " + "detail " * 100)
    box.create_thread("new")
    text = box.first_message_recall(
        "new", "billing staging-03", max_tokens=300, timeout_s=UNHURRIED_S
    )
    assert text and estimate_tokens(text) <= 300


def test_unknown_denied_or_empty_gives_nothing(box: recallbox.Box) -> None:
    work_thread(box, "q")
    box.quarantine("q")
    assert box.first_message_recall("q", "billing") == ""
    assert box.first_message_recall("nope", "billing") == ""
    box.create_thread("quiet")
    assert box.first_message_recall("quiet", "the of and") == ""  # no keywords
    with pytest.raises(recallbox.InvalidArgument):
        box.first_message_recall("quiet", "x", timeout_s=0)
    with pytest.raises(recallbox.InvalidArgument):
        box.first_message_recall("quiet", "x", max_tokens=0)


class BlockingDomain:
    """A domain whose search blocks until released (or 30 s)."""

    name = "memory"
    owner = None
    threshold = 0.1

    def __init__(self) -> None:
        self.release = threading.Event()
        self.caller_returned_first = False
        self.caller_done = threading.Event()
        self.searched = threading.Event()

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        self.release.wait(30)
        self.caller_returned_first = self.caller_done.is_set()
        self.searched.set()
        return [Hit(id="PIT01", score=1.0, text="late lesson", domain="memory")]

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        return "[entry=PIT01]\nlate lesson"


def test_a_slow_recall_never_delays_the_caller_and_is_never_injected(
    box: recallbox.Box, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = BlockingDomain()
    monkeypatch.setitem(registry.REGISTRY, "memory", slow)  # type: ignore[index]
    box.create_thread("new")
    try:
        text = box.first_message_recall("new", "lesson about billing", timeout_s=0.2)
        slow.caller_done.set()
    finally:
        slow.release.set()
    assert text == ""
    assert slow.searched.wait(30)
    assert slow.caller_returned_first  # the caller had its answer before the domain ended
    box.hits.flush()
    rows = hit_log_rows(db_path)
    assert [r[0] for r in rows] == ["first_message"]  # the late recall's hits are not recorded
