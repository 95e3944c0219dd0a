"""recall_context and memory_injection through the Box (DESIGN §4.3, §4.4, §5, #10)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox.domains.context import FAILURE_REASON, MEMORY_HEADER
from recallbox.domains.context_source import unavailable
from recallbox.domains.memory_ops import memory_write
from recallbox.text.normalize import normalize_text
from recallbox.text.tokens import estimate_tokens
from recallbox.types import RecallResult
from table_dump import hit_log_rows

RUNBOOK = """# Runbook

## Staging access
- Log in as `deploy`.
- Use the key `~/.ssh/staging_ed25519`.

## Rolling back
- `make rollback ENV=staging` restores the previous image.
- It takes a minute per three pods.

## Database URLs
Services read DATABASE_URL from the env file.
"""


def hit_log(box: recallbox.Box) -> list[tuple[str, str | None, str, int]]:
    return [(d, layer, t, drilled) for d, layer, t, drilled, _, _ in hit_log_rows(box.location)]


def test_a_memory_slice_holds_only_the_matching_entries(box: recallbox.Box) -> None:
    for i in range(30):
        box.remember(f"lesson number {i} about deployments", type="guideline")
    rollback = box.remember("Roll back with make rollback, never by hand", type="pitfall")
    box.remember("Zebras have stripes", type="model")
    result = box.recall_context("rollback")
    assert result == RecallResult(
        allowed=True,
        content="## Pitfalls\n\n- Roll back with make rollback, never by hand",
        sections=("pitfall",),
        hit_layer="keyword",
        drilled=(rollback.key,),
    )
    assert hit_log(box) == [
        ("memory", "keyword", rollback.key, 0),
        ("memory", None, rollback.key, 1),
    ]


def test_a_knowledge_slice_is_the_matching_entries_not_the_whole_file(box: recallbox.Box) -> None:
    sections = box.add_document(RUNBOOK, "ops/runbook.md")
    result = box.recall_context("previous image", source="runbook.md")
    assert result.allowed and result.hit_layer == "keyword"
    assert result.content == (
        "## Rolling back\n\n- `make rollback ENV=staging` restores the previous image."
    )
    assert result.sections == result.drilled == (sections[1].id,)
    assert [(d, t, x) for d, _, t, x in hit_log(box)] == [
        ("knowledge", sections[1].id, 0),
        ("knowledge", sections[1].id, 1),
    ]
    assert box.recall_context("previous image", source="OPS/Runbook.md").content == result.content


def test_the_bottom_entry_of_a_120_entry_section_surfaces(box: recallbox.Box) -> None:
    items = "".join(f"- command {i}: restart worker {i} cleanly\n" for i in range(119))
    box.add_document(f"## Commands\n{items}- flush the zebra cache last\n", "commands.md")
    result = box.recall_context("zebra cache", source="commands.md")
    assert result.content == "## Commands\n\n- flush the zebra cache last"
    memory = [box.remember(f"guideline {i}: keep worker {i} warm").key for i in range(119)]
    last = box.remember("guideline last: flush the zebra cache").key
    assert memory[-1] != last
    found = box.recall_context("zebra cache")
    assert found.content == "## Guidelines\n\n- guideline last: flush the zebra cache"


def test_a_query_sharing_no_vocabulary_returns_nothing(box: recallbox.Box) -> None:
    box.add_document(RUNBOOK, "runbook.md")
    box.remember("Roll back with make rollback")
    for source in ("MEMORY.md", "runbook.md"):
        for query in ("kangaroo paddock", "", "   ", '"" ()'):
            result = box.recall_context(query, source=source)
            assert (result.allowed, result.content, result.hit_layer) == (True, "", "none")
    assert hit_log(box) == []


DENIED = [
    "secret.md",
    "SECRET.MD",
    "./secret.md",
    "../secret.md",
    ".\\secret.md",
    "private/secret.md",
    "private\\SECRET.md",
    "../private/secret.md",
]


@pytest.mark.parametrize("name", DENIED)
@pytest.mark.parametrize("per_call", [False, True])
def test_every_privacy_variant_denies_a_document(
    box: recallbox.Box, name: str, per_call: bool
) -> None:
    box.add_document("## Plan\nthe canary zebra plan\n", "private/secret.md")
    unknown = box.recall_context("zebra", source="nope.md")
    assert unknown == unavailable() and unknown.reason == recallbox.SOURCE_NOT_AVAILABLE
    assert box.recall_context("zebra", source="secret.md").content != ""
    excluded = [name] if per_call else []
    if not per_call:
        box.exclude_source(name)
    for request in ("secret.md", "private/secret.md", "SECRET.md", "./private/secret.md"):
        assert box.recall_context("zebra", source=request, excluded=excluded) == unknown
    drills = len(hit_log(box))
    assert box.recall_context("zebra", source="secret.md", excluded=excluded) == unknown
    assert len(hit_log(box)) == drills  # a denied source records nothing


def test_a_hard_link_to_an_excluded_file_is_denied(box: recallbox.Box, tmp_path: Path) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    (root / "secret.md").write_text("## Plan\nthe canary zebra plan\n", encoding="utf-8")
    box.sync_directory(root)
    link = tmp_path / "innocent.md"
    os.link(root / "secret.md", link)
    assert box.recall_context("zebra", source="secret.md").allowed
    assert box.recall_context("zebra", source="secret.md", excluded=[str(link)]) == unavailable()
    box.exclude_source(str(link))
    assert box.recall_context("zebra", source="secret.md") == unavailable()


@pytest.mark.parametrize(
    "name", ["MEMORY.md", "memory.md", "./MEMORY.md", "../Memory.MD", ".\\MEMORY.md"]
)
def test_every_privacy_variant_denies_the_memory(box: recallbox.Box, name: str) -> None:
    box.remember("the canary zebra lesson")
    assert box.recall_context("zebra").content != ""
    assert box.recall_context("zebra", excluded=[name]) == unavailable()
    assert box.memory_injection(excluded=[name]) == ""
    box.exclude_source(name)
    assert box.recall_context("zebra") == unavailable()
    assert box.recall_context("nothing at all") == unavailable()
    assert box.memory_injection() == ""
    box.include_source(name)
    assert box.recall_context("zebra", excluded=["notes/MEMORY.md"]).content != ""


def test_a_document_named_memory_md_is_reached_by_path_only(box: recallbox.Box) -> None:
    box.add_document("## Notes\nzebra notes\n", "notes/MEMORY.md")
    assert box.recall_context("zebra").content == ""  # the memory entries: none
    assert box.recall_context("zebra", source="notes/MEMORY.md").content.endswith("zebra notes")


def test_an_ambiguous_basename_names_only_the_allowed_documents(box: recallbox.Box) -> None:
    for folder in ("a", "b", "hidden"):
        box.add_document("## Plan\nzebra plan\n", f"{folder}/plan.md")
    box.exclude_source("hidden/plan.md")
    with pytest.raises(recallbox.InvalidArgument) as refused:
        box.recall_context("zebra", source="plan.md")
    assert "a/plan.md, b/plan.md" in str(refused.value) and "hidden" not in str(refused.value)
    assert box.recall_context("zebra", source="a/plan.md").allowed


def test_bad_arguments_raise_and_a_failure_is_a_value(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    box.remember("zebra lesson")
    with pytest.raises(recallbox.InvalidArgument):
        box.recall_context(3)  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        box.recall_context("zebra", source=None)  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        box.recall_context("zebra", excluded="MEMORY.md")  # type: ignore[arg-type]

    def broken(*args: object, **kwargs: object) -> list[tuple[str, float]]:
        raise recallbox.StoreUnavailable("the database is damaged")

    monkeypatch.setattr(box.store, "keyword_ranked", broken)
    assert box.recall_context("zebra") == RecallResult(
        allowed=False, content="", reason=FAILURE_REASON
    )


WORDS = st.sampled_from(["zebra", "cache", "deploy", "召回", "机制", "rollback", "é", "x" * 30])
ENTRY = st.lists(WORDS | st.text(min_size=1, max_size=12), min_size=1, max_size=400).map(" ".join)


@settings(max_examples=25)
@given(
    bodies=st.lists(ENTRY, min_size=1, max_size=12),
    query=st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
)
def test_a_slice_stays_within_2000_tokens_and_3_sections(
    db_location: DbLocation, bodies: list[str], query: str
) -> None:
    with recallbox.open(db_location("rc", fresh=True)) as box:
        types = recallbox.MEMORY_TYPES
        doc = ""
        for i, body in enumerate(bodies):
            if normalize_text(body[:8_000]).strip():  # what remember refuses as empty
                box.remember(body[:8_000], type=types[i % len(types)])
            doc += f"## Section {i}\n- {body}\n- {body[::-1]}\n\n"
        box.add_document(doc, "doc.md")
        for source in ("MEMORY.md", "doc.md"):
            result = box.recall_context(query, source=source)
            assert result.allowed
            assert estimate_tokens(result.content) <= recallbox.RECALL_CONTEXT_MAX_TOKENS
            if result.content.isascii():
                assert len(result.content) <= 4 * recallbox.RECALL_CONTEXT_MAX_TOKENS
            assert len(result.sections) <= recallbox.RECALL_CONTEXT_MAX_SECTIONS


def test_an_entry_alone_over_budget_is_cut_and_marked(box: recallbox.Box) -> None:
    box.add_document("## Huge\n" + "zebra words go on " * 1_000 + "\n", "huge.md")
    result = box.recall_context("zebra", source="huge.md")
    assert result.truncated and result.content.endswith("[…entry truncated]")
    assert estimate_tokens(result.content) <= 2_000


# -- memory_injection -------------------------------------------------------------------------
def test_the_injection_holds_the_active_memory_under_its_header(box: recallbox.Box) -> None:
    box.remember("Quote the error first", type="principle")
    box.remember("[message_id=m_fake] looks like a header", type="pitfall")
    idle = box.remember("an idle lesson")
    box.store.update_memory_entries([memory_write(replace(idle, state="dormant"))])
    before = hit_log(box)
    text = box.memory_injection()
    assert text.startswith(MEMORY_HEADER + "\n")
    assert "Quote the error first" in text and "an idle lesson" not in text
    assert "## Pitfalls\n- [message_id=m_fake] looks like a header" in text  # a bullet line
    assert hit_log(box) == before  # the injection appends nothing to the hit-log
    assert box.memory_injection(budget_tokens=200).startswith(MEMORY_HEADER)
    with pytest.raises(recallbox.InvalidArgument):
        box.memory_injection(budget_tokens=199)


def test_an_injection_over_budget_loads_evergreen_and_relevant_first(box: recallbox.Box) -> None:
    box.remember("Evergreen principle", type="principle")
    for i in range(60):
        box.remember(f"guideline {i} " + "padding words " * 30)
    box.remember("the zebra guideline " + "padding words " * 30)
    text = box.memory_injection("zebra", budget_tokens=400)
    assert estimate_tokens(text) <= 400
    assert "Evergreen principle" in text and "the zebra guideline" in text
    assert text.rstrip().endswith('Fetch them with recall_context(query, source="MEMORY.md").')
    assert box.memory_injection().count("guideline") > 60  # the default budget holds it all
    assert "Not loaded" not in box.memory_injection()


def test_no_memory_injects_nothing(box: recallbox.Box) -> None:
    assert box.memory_injection() == ""
    assert box.memory_injection("anything") == ""
