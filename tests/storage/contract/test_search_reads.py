"""LiteralSearch and KeywordIndex: candidates in thread-search order, ranked keyword hits."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storage.conftest import StoreFactory

import recallbox
from recallbox.storage.base import (
    CORPUS_MESSAGE,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    LexicalQuery,
    LiteralQuery,
    SearchableMessage,
    SearchFilter,
    Store,
)

from .helpers import add, chunk, row


def literal(
    store: Store,
    term: str,
    *,
    case_sensitive: bool = True,
    channel: str | None = None,
    limit: int = 10,
    recent: int = 0,
) -> list[str]:
    found = store.literal_candidates(
        LiteralQuery(term, case_sensitive),
        where=SearchFilter(channel=channel),
        limit=limit,
        recent=recent,
    )
    return [m.id for m in found]


def test_literal_candidates_come_in_thread_search_order(store: Store) -> None:
    old = [m.id for m in add(store, "a", "needle 0", "needle 1")]
    newer = [m.id for m in add(store, "b", "needle 2")]
    store.append("b", [row("summary", role="system", kind="compaction_summary")])
    newest = [m.id for m in add(store, "b", "needle 3")]
    assert literal(store, "needle", limit=10) == [*newest, *newer, *old]
    assert literal(store, "needle", limit=10, channel="a") == old
    cut = store.literal_candidates(LiteralQuery("needle", True), where=EVERYTHING, limit=2)
    assert [m.id for m in cut] == [*newest, *newer] and cut.truncated
    whole = store.literal_candidates(LiteralQuery("needle", True), where=EVERYTHING, limit=4)
    assert len(list(whole)) == 4 and not whole.truncated


def test_a_stream_yields_every_candidate_in_search_order(store: Store) -> None:
    ids = []
    for t in range(6):
        ids = [m.id for m in add(store, f"t{t}", f"needle {t}", "hay")] + ids
    stream = store.literal_candidates(LiteralQuery("needle", True), where=EVERYTHING)
    seen = [message.id for message in stream]
    assert seen == [i for i in ids if i in seen] and len(seen) == 6


def test_literal_candidates_are_a_superset_of_exact_matches(store: Store) -> None:
    exact = add(store, "a", "Error: disk")[0]
    upper = add(store, "a", "ERROR: disk")[0]
    call = {"id": "c", "name": "bash", "arguments": {"command": "grep Error log"}}
    in_args = store.append("a", [row("", role="assistant", tool_calls=[call])])[0]
    assert {exact.id, in_args.id} <= set(literal(store, "Error"))
    assert {exact.id, upper.id, in_args.id} <= set(literal(store, "Error", case_sensitive=False))
    found = store.literal_candidates(LiteralQuery("disk", True), where=EVERYTHING, limit=1)
    message = next(iter(found))
    assert (message.channel, message.role, message.generation) == ("a", "user", 1)
    assert message.content in ("Error: disk", "ERROR: disk")
    assert next(m for m in literal_rows(store, "grep")).tool_calls == [call]
    assert literal(store, "a_b%") == []  # no syntax: "_" and "%" are characters


def literal_rows(store: Store, term: str) -> list[SearchableMessage]:
    return list(store.literal_candidates(LiteralQuery(term, True), where=EVERYTHING, limit=10))


def test_the_recent_scan_finds_what_no_index_holds(store: Store) -> None:
    ids = [m.id for m in add(store, "a", "x ab y", "ab", "zz")]
    assert literal(store, "ab") == []  # a short term no index holds: nothing without a scan
    assert set(literal(store, "ab", recent=10)) >= {ids[0], ids[1]}
    assert set(literal(store, "ab", recent=1)) <= {ids[2]}  # only the newest message is read
    assert set(literal(store, "ab", recent=10, channel="b")) == set()


def test_keyword_ranked_is_bm25_best_first(store: Store) -> None:
    twice, once, none = add(store, "a", "deploy deploy billing", "deploy billing", "other")
    add(store, "b", "deploy elsewhere")
    query = LexicalQuery((("deploy",),))
    ranked = store.keyword_ranked(CORPUS_MESSAGE, query, where=SearchFilter(channel="a"), limit=10)
    assert [i for i, _ in ranked] == [twice.id, once.id]
    assert all(score > 0 for _, score in ranked) and ranked[0][1] > ranked[1][1]
    assert len(store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=10)) == 3
    assert len(store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=1)) == 1
    assert store.keyword_ranked(CORPUS_MESSAGE, LexicalQuery(), where=EVERYTHING, limit=5) == []
    assert none.id not in dict(ranked)


def test_a_phrase_needs_its_words_adjacent_and_in_order(store: Store) -> None:
    near, apart = add(store, "a", "search memory now", "memory of a search")
    ident = add(store, "a", "call search_memory()")[0]
    query = LexicalQuery((("search_memory",),))
    ids = [i for i, _ in store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=10)]
    assert set(ids) == {near.id, ident.id} and apart.id not in ids


def test_cjk_bigram_phrases_match(store: Store) -> None:
    hit = add(store, "a", "召回机制很好")[0]
    add(store, "a", "机制")
    query = LexicalQuery((("召回", "回机"),))
    ranked = store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=10)
    assert [i for i, _ in ranked] == [hit.id]


def test_keyword_ranked_ties_are_broken_by_id(store: Store) -> None:
    rows = add(store, "a", "same words", "same words", "same words")
    ranked = store.keyword_ranked(
        CORPUS_MESSAGE, LexicalQuery((("same",),)), where=EVERYTHING, limit=10
    )
    assert [i for i, _ in ranked] == sorted(m.id for m in rows)


def test_keyword_scope_reports_a_threads_statistics(store: Store) -> None:
    rows = add(store, "a", "alpha beta", "alpha", "gamma gamma gamma")
    add(store, "a", "alpha hidden", model_visible=False)
    add(store, "b", "alpha elsewhere")
    query = LexicalQuery((("alpha",), ("gamma",), ("zeta",)))
    scope = store.keyword_scope(CORPUS_MESSAGE, query, where=SearchFilter(channel="a"))
    assert scope is not None
    assert scope.rows == 4 and scope.tokens == 2 + 1 + 3 + 2  # hidden rows count, as in FTS5
    assert scope.df == (3, 1, 0)
    by_id = {m.id: m for m in scope.matches}
    assert set(by_id) == {r.id for r in rows}  # the hidden row matches but is not returned
    assert (by_id[rows[0].id].length, by_id[rows[0].id].freqs) == (2, (1, 0, 0))
    assert by_id[rows[2].id].freqs == (0, 3, 0)
    assert store.keyword_scope(CORPUS_MESSAGE, query, where=SearchFilter(channel="nope")) is None
    empty = store.keyword_scope(CORPUS_MESSAGE, LexicalQuery(), where=SearchFilter(channel="a"))
    assert empty is not None and empty.matches == () and empty.df == ()
    with pytest.raises(recallbox.InvalidArgument):
        store.keyword_scope(CORPUS_MESSAGE, query, where=EVERYTHING)


def test_the_chunk_corpus_has_the_same_keyword_index(store: Store) -> None:
    add(store, "a", "deploy billing", "unrelated")
    add(store, "b", "deploy again")
    chunk(store, "a")
    chunk(store, "b")
    query = LexicalQuery((("deploy",),))
    ranked = store.keyword_ranked(CORPUS_TRANSCRIPT_CHUNK, query, where=EVERYTHING, limit=10)
    assert sorted(i for i, _ in ranked) == ["a@1", "b@1"]
    only_b = store.keyword_ranked(
        CORPUS_TRANSCRIPT_CHUNK, query, where=SearchFilter(channel="b"), limit=10
    )
    assert [i for i, _ in only_b] == ["b@1"]
    scope = store.keyword_scope(CORPUS_TRANSCRIPT_CHUNK, query, where=SearchFilter(channel="a"))
    assert scope is not None and scope.rows == 1 and scope.df == (1,)
    assert [m.id for m in scope.matches] == ["a@1"]


def test_an_unknown_corpus_is_an_error(store: Store) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        store.keyword_ranked("nonsense", LexicalQuery((("x",),)), where=EVERYTHING, limit=1)


# Rows of one word repeated 1-4 times, visible or hidden, in channel "a" or "b".
RANKED_ROWS = st.lists(
    st.tuples(st.integers(1, 4), st.booleans(), st.sampled_from(("a", "b"))),
    min_size=1,
    max_size=30,
)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RANKED_ROWS, st.integers(1, 12), st.booleans())
def test_keyword_ranked_top_k_is_the_head_of_the_whole_ranking(
    store_factory: StoreFactory,
    rows: list[tuple[int, bool, str]],
    limit: int,
    scoped: bool,
) -> None:
    # Hidden and other-channel rows often rank best, and scores tie: whatever a top-k
    # fetch skips, the answer is the first ``limit`` of the complete ranking.
    store = store_factory("ranked", fresh=True)
    for repeats, visible, channel in rows:
        add(store, channel, " ".join(["deploy"] * repeats) + " x" * (4 - repeats),
            model_visible=visible)  # fmt: skip
    query = LexicalQuery((("deploy",),))
    where = SearchFilter(channel="a") if scoped else EVERYTHING
    everything = store.keyword_ranked(CORPUS_MESSAGE, query, where=where, limit=len(rows) + 1)
    assert (
        store.keyword_ranked(CORPUS_MESSAGE, query, where=where, limit=limit)
        == (everything[:limit])
    )
    expected = sum(1 for _, visible, channel in rows if visible and (channel == "a" or not scoped))
    assert len(everything) == expected
    assert [s for _, s in everything] == sorted((s for _, s in everything), reverse=True)
