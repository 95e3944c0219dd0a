"""Literal candidates on PostgreSQL (issue #16): complete, and in thread-search order.

Completeness is what ``search_memory`` rests on: every visible message that holds the term —
exactly (the case-sensitive pass) or with case ignored as Python's ``re.IGNORECASE`` ignores it
(the other pass), in its content or in one argument leaf — must be a candidate. A hypothesis
property checks it on texts mixing case pairs, diacritics, Turkish i, final sigma, long s,
CJK, punctuation and wildcards, against a naive scan; another checks that the walk a common
term takes gives exactly the order the sorted path gives.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from postgres_server import RecallboxDatabases
from recallbox.domains.messages import build_row
from recallbox.storage.base import LiteralQuery, SearchFilter
from recallbox.storage.postgres import literal
from recallbox.storage.postgres.connection import Connection
from recallbox.storage.postgres.store import PostgresStore

PIECES = [
    *"aAbBzZ ",
    "İ", "ı", "I", "i", "ſ", "s", "S", "ς", "σ", "Σ", "ß", "ẞ", "K", "k", "K",
    "é", "É", "e\u0301", "Ä", "ä", "召回", "率", "%", "_", "\\", "-", ".", "\n", "\t",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES), min_size=0, max_size=12).map("".join)


@pytest.fixture
def store(recallbox_databases: RecallboxDatabases) -> Iterator[PostgresStore]:
    opened = PostgresStore(recallbox_databases.url())
    try:
        yield opened
    finally:
        opened.close()


@settings(max_examples=120)
@given(
    texts=st.lists(TEXT, min_size=1, max_size=6),
    args=st.lists(TEXT, min_size=0, max_size=2),
    pick=st.integers(0, 100),
    start=st.integers(0, 20),
    width=st.integers(3, 6),
    swap=st.booleans(),
)
def test_every_holder_is_a_candidate(
    recallbox_databases: RecallboxDatabases,
    texts: list[str],
    args: list[str],
    pick: int,
    start: int,
    width: int,
    swap: bool,
) -> None:
    store = PostgresStore(recallbox_databases.url("prop", fresh=True))
    try:
        rows = [build_row("user", t) for t in texts]
        if args:
            rows.append(
                build_row("assistant", "", tool_calls=[{"id": "1", "name": "x", "arguments": args}])
            )
        messages = store.append("t", rows)
        source = [*texts, *args][pick % len([*texts, *args])]
        term = source[start : start + width] if len(source) >= 3 else source + "abc"
        if swap:
            term = term.swapcase()
        if len(term) < literal.TRIGRAM_CHARS:
            return
        fields = [[t] for t in texts] + ([["", *args]] if args else [])
        for case_sensitive in (True, False):
            flags = 0 if case_sensitive else re.IGNORECASE
            found = {
                m.id
                for m in store.literal_candidates(
                    LiteralQuery(term, case_sensitive), where=SearchFilter()
                )
            }
            for message, texts_of in zip(messages, fields, strict=True):
                if any(re.search(re.escape(term), text, flags) for text in texts_of):
                    assert message.id in found, (term, case_sensitive, texts_of)
    finally:
        store.close()


def test_a_walked_common_term_comes_in_the_sorted_order(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for thread in range(12):
        store.append(
            f"t{thread:02d}",
            [build_row("user", f"deploy number {i} of {thread}") for i in range(thread % 4 + 1)],
        )
        if thread % 5 == 0:
            store.append(
                f"t{thread:02d}", [build_row("user", "compacted", kind="compaction_summary")]
            )
    store.set_quarantined("t03", True)
    query = LiteralQuery("deploy", False)
    sorted_ids = [m.id for m in store.literal_candidates(query, where=SearchFilter())]
    monkeypatch.setattr(literal, "SORT_CANDIDATES_MAX", 2)
    monkeypatch.setattr(literal, "WALK_FIRST_THREADS", 1)
    walked = [m.id for m in store.literal_candidates(query, where=SearchFilter())]
    assert walked == sorted_ids and len(walked) > 10
    stopped = store.literal_candidates(query, where=SearchFilter(), limit=5)
    assert [m.id for m in stopped] == sorted_ids[:5] and stopped.truncated


# -- a short CJK term: walked like a long one, ``recent`` merged into the order ----------------

CJK_THREADS = 10
CJK_TERM = "召"
#: Places one statement may return while a common short term is walked (2 threads of 4).
WALKED_PLACES_MAX = 10


@dataclass
class Written:
    """One appended row and what the naive rule needs of it."""

    uid: str
    key: tuple[int, int, int]  # -thread order, -generation, position (search order)
    searchable: bool
    channel: str
    holds: bool


def _cjk_history(store: PostgresStore) -> list[Written]:
    """Threads of CJK matches across generations, with hidden rows and a quarantined thread."""
    written: list[Written] = []
    for thread in range(CJK_THREADS + 1):
        channel = f"t{thread:02d}"
        rows = [
            build_row("user", f"召回 a{thread}"),
            build_row("assistant", f"plain {thread}"),
            build_row("user", f"x 召 b{thread}"),
        ]
        if thread % 3 == 0:
            rows.append(build_row("user", "compacted", kind="compaction_summary"))
        rows += [build_row("user", "召召 c"), build_row("user", f"plain again {thread}")]
        if thread == 5:
            rows += [
                build_row("user", "召 pending", pending=True),
                build_row("user", "召 hidden", model_visible=False),
            ]
        rows.append(build_row("user", f"last 召 {thread}"))
        generation = 1
        for position, (row, message) in enumerate(
            zip(rows, store.append(channel, rows), strict=True)
        ):
            generation += row.kind == "compaction_summary"
            searchable = (
                row.kind == "message"
                and row.model_visible
                and not row.pending
                and thread < CJK_THREADS
            )
            holds = CJK_TERM in row.content
            key = (-thread, -generation, position)
            written.append(Written(message.id, key, searchable, channel, holds))
    store.set_quarantined(f"t{CJK_THREADS:02d}", True)
    return written


def _naive(written: list[Written], recent: int, channel: str | None = None) -> list[str]:
    """The candidates by the rule: the searchable holders and the newest ``recent`` searchable
    rows (in ``channel``), each once, in search order."""
    scope = [w for w in written if w.searchable and channel in (None, w.channel)]
    chosen = {w.uid: w for w in scope if w.holds}
    chosen.update({w.uid: w for w in scope[-recent:]} if recent else {})
    return [w.uid for w in sorted(chosen.values(), key=lambda w: w.key)]


def _record_places(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of places each statement of the plan and the walk returns, from now on."""
    sizes: list[int] = []
    real = literal._places

    def recording(conn: Connection, sql: str, params: Sequence[Any]) -> list[literal.Place]:
        found = real(conn, sql, params)
        sizes.append(len(found))
        return found

    monkeypatch.setattr(literal, "_places", recording)
    return sizes


def _ids(
    store: PostgresStore, *, recent: int = 0, channel: str | None = None, cs: bool = True
) -> list[str]:
    query = LiteralQuery(CJK_TERM, cs)
    where = SearchFilter(channel=channel)
    return [m.id for m in store.literal_candidates(query, where=where, recent=recent)]


def test_a_common_short_cjk_term_is_walked_in_search_order(
    store: PostgresStore, recallbox_databases: RecallboxDatabases, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = _cjk_history(store)
    expected = _naive(written, 0)
    assert len(expected) == 4 * CJK_THREADS
    assert _ids(store) == expected  # the sorted probe
    with recallbox.open(recallbox_databases.url()) as box:
        texts = [box.search_memory(CJK_TERM, channel) for channel in (None, "t03")]
        monkeypatch.setattr(literal, "SORT_CANDIDATES_MAX", 5)
        monkeypatch.setattr(literal, "WALK_FIRST_THREADS", 2)
        monkeypatch.setattr(literal, "WALK_GROWTH", 1)
        sizes = _record_places(monkeypatch)
        assert _ids(store) == expected
        assert _ids(store, cs=False) == expected
        assert sizes and max(sizes) <= WALKED_PLACES_MAX, sizes  # never every match at once
        assert _ids(store, channel="t03") == _naive(written, 0, "t03")
        stopped = store.literal_candidates(
            LiteralQuery(CJK_TERM, True), where=SearchFilter(), limit=7
        )
        assert [m.id for m in stopped] == expected[:7] and stopped.truncated
        assert [box.search_memory(CJK_TERM, channel) for channel in (None, "t03")] == texts


@pytest.mark.parametrize("walked", [False, True])
def test_recent_messages_merge_into_the_order_once(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch, walked: bool
) -> None:
    written = _cjk_history(store)
    if walked:
        monkeypatch.setattr(literal, "SORT_CANDIDATES_MAX", 5)
        monkeypatch.setattr(literal, "WALK_FIRST_THREADS", 2)
        monkeypatch.setattr(literal, "WALK_GROWTH", 1)
    sizes = _record_places(monkeypatch)
    for recent in (1, 4, 9):
        newest = [w for w in written if w.searchable][-recent:]
        assert any(w.holds for w in newest)  # a recent message that is also a match
        expected = _naive(written, recent)
        assert len(set(expected)) == len(expected)
        assert _ids(store, recent=recent, cs=False) == expected
        assert _ids(store, recent=recent) == [u for u in expected if u in _naive(written, 0)]
        assert _ids(store, recent=recent, channel="t06", cs=False) == _naive(written, recent, "t06")
    if walked:
        assert max(sizes) <= max(WALKED_PLACES_MAX, 9), sizes
    # a short term no index holds: the recent scan alone, in search order
    query = LiteralQuery("ab", False)
    found = [m.id for m in store.literal_candidates(query, where=SearchFilter(), recent=4)]
    assert found == [w.uid for w in sorted(newest[-4:], key=lambda w: w.key)]


def test_a_short_term_plan_is_kept_for_its_snapshot(store: PostgresStore) -> None:
    written = _cjk_history(store)
    expected = _naive(written, 4)
    with store.read_snapshot():
        assert _ids(store, recent=4, cs=False) == expected
        assert _ids(store, recent=4) == [u for u in expected if u in _naive(written, 0)]
        assert _ids(store, recent=0, cs=False) == _naive(written, 0)
        assert sorted(key[3] for key in literal._plans) == [0, 4]  # one plan a `recent`
    assert literal._plans == {}


def test_a_hidden_match_takes_no_candidate_place(store: PostgresStore) -> None:
    written = _cjk_history(store)
    expected = _naive(written, 0, "t05")  # t05 also holds a pending and a hidden match
    assert len(expected) == 4
    stream = store.literal_candidates(
        LiteralQuery(CJK_TERM, True), where=SearchFilter(channel="t05"), limit=len(expected)
    )
    assert [m.id for m in stream] == expected and not stream.truncated
