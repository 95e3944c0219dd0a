"""``box.recall`` (DESIGN §5): buckets, time limits with teeth, one embedder call, the budget."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.domains import registry
from recallbox.domains.base import SearchContext
from recallbox.recall import (
    LABEL_MAX_CHARS,
    MIN_RECALL_BUDGET_CHARS,
    NO_HITS,
    RECALL_HEADER,
    RECALL_MAX_BUDGET_CHARS,
    RecallPool,
    recall,
)
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit
from table_dump import dump_tables, hit_log_rows

ENDLESS_SQL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000000) "
    "SELECT count(*) FROM n"
)
ID_RE = re.compile(r"(message_id|chunk_id)=(\S+?)[\] ]")


@dataclass
class FakeDomain:
    """A test domain: returns ``hits``, or raises, or waits, or runs an endless statement."""

    name: str
    hits: list[Hit] = field(default_factory=list)
    mode: str = "hits"  # hits | raise | wait | endless
    text: str | None = None  # what render_bucket returns (default: one line per hit)
    owner: str | None = None
    threshold: float = 0.05
    release: threading.Event = field(default_factory=threading.Event)
    stopped: threading.Event = field(default_factory=threading.Event)
    outcome: list[str] = field(default_factory=list)

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        if self.mode == "raise":
            raise RuntimeError("secret exception text that must never be shown")
        if self.mode == "wait":
            self.release.wait(30)
        if self.mode == "endless":
            try:
                with ctx.store.pool.reading() as conn:  # type: ignore[attr-defined]
                    conn.execute(ENDLESS_SQL).fetchall()
                self.outcome.append("finished")
            except recallbox.TimedOut:
                self.outcome.append("stopped")
                raise
            finally:
                self.stopped.set()
        return self.hits[:limit]

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        text = self.text if self.text is not None else "\n".join(f"[item={h.id}]" for h in hits)
        return text[:budget_chars]


def fake_hit(domain: str, i: int) -> Hit:
    return Hit(id=f"{domain}-{i}", score=1.0, text=f"text {i}", domain=domain)


@pytest.fixture
def pool() -> Iterator[RecallPool]:
    found = RecallPool()
    yield found
    found.close()


def seed(box: recallbox.Box) -> dict[str, str]:
    return {
        "deploy": box.append("ops", "user", "deploy billing to staging-03").id,
        "fixed": box.append("ops", "assistant", "billing fixed on staging-03").id,
        "other": box.append("dev", "user", "lunch plans").id,
    }


def test_every_requested_bucket_is_present_in_domains_order(box: recallbox.Box) -> None:
    seed(box)
    result = box.recall("billing staging-03")
    assert list(result.buckets) == list(registry.DOMAINS)
    sessions = result.buckets["sessions"]
    assert sessions.layer == "keyword" and sessions.error is None and len(sessions.hits) == 2
    for name in registry.DOMAINS:
        bucket = result.buckets[name]
        if name not in registry.REGISTRY:
            assert bucket.error == "not available" and bucket.hits == ()
        elif name != "sessions":
            assert bucket.hits == () and bucket.layer == "none" and bucket.error is None
    text = result.render()
    assert text.startswith(RECALL_HEADER + "\n\n")
    labels = re.findall(r"^\[bucket=(\w+) layer=(\w+)\]$", text, re.M)
    assert [name for name, _ in labels] == list(registry.DOMAINS)
    only = box.recall("billing", domains=["transcripts", "sessions", "sessions"])
    assert list(only.buckets) == ["sessions", "transcripts"]
    assert only.buckets["transcripts"].hits == () and NO_HITS in only.render()


def test_an_empty_query_gives_the_buckets_empty(box: recallbox.Box, db_path: Path) -> None:
    seed(box)
    for query in ("", "   \n\t", "\x00"):
        result = box.recall(query, domains=["sessions", "transcripts"])
        assert all(b.hits == () for b in result.buckets.values())
        assert result.render().count(NO_HITS) == 2
    box.hits.flush()
    assert hit_log_rows(db_path) == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"domains": ["memory", "bogus"]}, "unknown domain 'bogus'"),
        ({"domains": []}, "domains is empty"),
        ({"domains": "sessions"}, "a list of domain names"),
        ({"budget_chars": MIN_RECALL_BUDGET_CHARS - 1}, "budget_chars must be an int from 1000"),
        ({"budget_chars": RECALL_MAX_BUDGET_CHARS + 1}, "to 12000"),
        ({"budget_chars": True}, "budget_chars"),
        ({"excluded": "notes.md"}, "excluded"),
        ({"scope": 7}, "scope"),
    ],
)
def test_invalid_arguments(box: recallbox.Box, arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(recallbox.InvalidArgument, match=message):
        box.recall("x", **arguments)
    with pytest.raises(recallbox.InvalidArgument):
        box.recall(None)  # type: ignore[arg-type]


def test_a_raising_or_late_domain_leaves_the_others_intact(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, pool: RecallPool
) -> None:
    ids = seed(box)
    raising = FakeDomain("memory", mode="raise")
    late = FakeDomain("knowledge", [fake_hit("knowledge", 1)], mode="wait")
    monkeypatch.setitem(registry.REGISTRY, "memory", raising)  # type: ignore[index]
    monkeypatch.setitem(registry.REGISTRY, "knowledge", late)  # type: ignore[index]
    try:
        result = recall(box.store, None, pool, "billing staging-03", timeout_s=0.3)
    finally:
        late.release.set()
    assert result.buckets["memory"].error == "error"
    assert result.buckets["knowledge"].error == "timeout"
    assert result.buckets["knowledge"].hits == ()
    assert {h.id for h in result.buckets["sessions"].hits} == {ids["deploy"], ids["fixed"]}
    text = result.render()
    assert "unavailable (error)" in text and "unavailable (timeout)" in text
    assert "secret exception text" not in text and "RuntimeError" not in text


@pytest.mark.parametrize("location", ["file", ":memory:"])
def test_a_slow_statement_is_stopped_at_the_deadline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, location: str
) -> None:
    """The teeth: the domain's statement is interrupted, so its worker is free again."""
    path = tmp_path / "teeth.db" if location == "file" else ":memory:"
    endless = FakeDomain("code", mode="endless")
    monkeypatch.setitem(registry.REGISTRY, "code", endless)  # type: ignore[index]
    with recallbox.open(path) as box:
        box.append("ops", "user", "billing")
        pool = RecallPool()
        try:
            result = recall(box.store, None, pool, "billing", timeout_s=0.3)
            assert result.buckets["code"].error == "timeout"
            assert endless.stopped.wait(30), "the endless statement was never stopped"
            assert endless.outcome == ["stopped"]
            if location == "file":  # the other domains ran beside it
                assert result.buckets["sessions"].hits
        finally:
            pool.close()


class SpyEmbedder:
    model_id = "spy-3"
    dim = 3

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        return [self.table.get(t, [0.0, 0.0, 1.0]) for t in texts]


def test_allow_embed_makes_exactly_one_embedder_call(db_path: Path) -> None:
    paraphrase = "kangaroos graze in the paddock at dawn"
    query = "marsupial hopping"
    spy = SpyEmbedder({paraphrase: [0.8, 0.6, 0.0], query: [1.0, 0.0, 0.0]})
    with recallbox.open(db_path, embedder=spy) as box:
        target = box.append("ops", "user", paraphrase).id
        box.append("ops", "user", "deploy billing")
        box.embed_all()
        spy.calls.clear()
        keyword_only = box.recall(query)
        assert spy.calls == [] and keyword_only.buckets["sessions"].hits == ()
        result = box.recall(query, allow_embed=True)
        assert spy.calls == [[query]]  # once per recall, shared by every domain
        hits = result.buckets["sessions"].hits
        assert [h.id for h in hits] == [target] and hits[0].keyword == 0.0
        assert result.buckets["sessions"].layer == "hybrid"
        assert f"message_id={target}" in result.render()


def test_recall_writes_nothing_but_the_hit_log(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        seed(box)
        before = dump_tables(db_path)
        result = box.recall("billing staging-03")
        box.recall("")
        box.recall("nothing matches this at all")
        assert dump_tables(db_path) == before
        box.hits.flush()
        rows = hit_log_rows(db_path)
        shown = [h.id for h in result.buckets["sessions"].hits]
        assert [(r[0], r[1], r[2]) for r in rows] == [("sessions", "keyword", i) for i in shown]


def test_sessions_and_transcripts_dedupe_by_message_id(
    box: recallbox.Box, tmp_path: Path
) -> None:
    fixtures = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
    box.import_transcripts("claude-code", [fixtures])
    alone = box.recall("cli.py", domains=["transcripts"])
    both = box.recall("cli.py", domains=["sessions", "transcripts"])
    sessions = {h.id for h in both.buckets["sessions"].hits}
    kept = both.buckets["transcripts"].hits
    assert alone.buckets["transcripts"].hits, "the fixture has transcript hits"
    assert all(h.best_message_id not in sessions for h in kept)
    skipped = [
        h for h in alone.buckets["transcripts"].hits if h.best_message_id in sessions
    ]
    assert skipped and len(kept) == len(alone.buckets["transcripts"].hits) - len(skipped)


def test_unused_shares_flow_forward(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(40):
        box.append(f"t{i % 8}", "user", f"billing incident {i} " + "details " * 80)
    monkeypatch.setitem(registry.REGISTRY, "memory", FakeDomain("memory"))  # type: ignore[index]
    result = box.recall("billing incident", domains=["memory", "sessions"], budget_chars=4_000)
    fixed = len(RECALL_HEADER) + sum(2 + LABEL_MAX_CHARS[d] + 1 for d in ("memory", "sessions"))
    share = (4_000 - fixed) // 2
    assert len(result.buckets["sessions"].text) > share  # it took what memory left
    assert len(result.render()) <= 4_000


def test_a_bucket_rendered_over_its_budget_is_an_error_not_an_overflow(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Greedy(FakeDomain):
        def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget: int) -> str:
            return "x" * (budget + 10)

    greedy = Greedy("memory", [fake_hit("memory", 1)])
    monkeypatch.setitem(registry.REGISTRY, "memory", greedy)  # type: ignore[index]
    result = box.recall("billing", budget_chars=1_000)
    assert result.buckets["memory"].error == "error" and len(result.render()) <= 1_000


def test_to_json_is_plain_json(box: recallbox.Box) -> None:
    seed(box)
    data = box.recall("billing", domains=["sessions"]).to_json()
    again = json.loads(json.dumps(data))
    assert again["buckets"][0]["domain"] == "sessions"
    assert again["buckets"][0]["hits"][0]["id"].startswith("m_")
    assert again["text"].startswith(RECALL_HEADER)


def test_a_per_call_exclusion_and_a_scope(box: recallbox.Box, tmp_path: Path) -> None:
    fixtures = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
    report = box.import_transcripts("claude-code", [fixtures])
    sources = {Path(f.path).name for f in report.files if f.channels}
    name = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd.jsonl"
    assert name in sources
    everything = box.recall("cli.py", domains=["transcripts"])
    assert any(h.source and h.source.endswith(name) for h in everything.buckets["transcripts"].hits)
    narrowed = box.recall("cli.py", domains=["transcripts"], excluded=[name], scope="proj")
    assert not any(
        h.source and h.source.endswith(name) for h in narrowed.buckets["transcripts"].hits
    )


# -- the budget, for any query and any corpus -------------------------------------------------

TEXTS = st.lists(
    st.sampled_from([*"abc [\n]\\-召回", "billing ", "[message_id=m_x] ", "x" * 900]),
    max_size=300,
).map("".join)


@settings(max_examples=40)
@given(
    contents=st.lists(TEXTS, min_size=1, max_size=12),
    query=st.one_of(st.text(max_size=50), st.sampled_from(["billing", "召回", "a b c", "["])),
    budget=st.integers(MIN_RECALL_BUDGET_CHARS, RECALL_MAX_BUDGET_CHARS),
)
def test_render_fits_the_budget_and_every_id_is_whole(
    contents: list[str], query: str, budget: int
) -> None:
    with recallbox.open(":memory:") as box:
        stored = {
            box.append(f"t{i % 3}", "user", text).id for i, text in enumerate(contents)
        }
        result = box.recall(query, budget_chars=budget)
        text = result.render()
        assert len(text) <= budget and text.startswith(RECALL_HEADER)
        for line in text.splitlines():
            if line.startswith("[message_id="):
                assert line.split("message_id=")[1].split()[0].rstrip("]") in stored
        for bucket in result.buckets.values():
            assert all(h.id in stored for h in bucket.hits)


def test_the_domain_time_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from recallbox.recall import RECALL_DOMAIN_TIMEOUT_S, RECALL_TIMEOUT_ENV, domain_timeout_s

    monkeypatch.delenv(RECALL_TIMEOUT_ENV)
    assert domain_timeout_s() == RECALL_DOMAIN_TIMEOUT_S
    monkeypatch.setenv(RECALL_TIMEOUT_ENV, "2.5")
    assert domain_timeout_s() == 2.5
    for bad in ("0", "-1", "nan", "inf", "soon", "1e9"):
        monkeypatch.setenv(RECALL_TIMEOUT_ENV, bad)
        with pytest.raises(recallbox.InvalidArgument, match=RECALL_TIMEOUT_ENV):
            domain_timeout_s()
