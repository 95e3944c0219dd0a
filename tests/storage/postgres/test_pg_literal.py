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
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from postgres_server import RecallboxDatabases
from recallbox.domains.messages import build_row
from recallbox.storage.base import LiteralQuery, SearchFilter
from recallbox.storage.postgres import literal
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
            store.append(f"t{thread:02d}", [build_row("user", "compacted", kind="compaction_summary")])
    store.set_quarantined("t03", True)
    query = LiteralQuery("deploy", False)
    sorted_ids = [m.id for m in store.literal_candidates(query, where=SearchFilter())]
    monkeypatch.setattr(literal, "SORT_CANDIDATES_MAX", 2)
    monkeypatch.setattr(literal, "WALK_FIRST_THREADS", 1)
    walked = [m.id for m in store.literal_candidates(query, where=SearchFilter())]
    assert walked == sorted_ids and len(walked) > 10
    stopped = store.literal_candidates(query, where=SearchFilter(), limit=5)
    assert [m.id for m in stopped] == sorted_ids[:5] and stopped.truncated
