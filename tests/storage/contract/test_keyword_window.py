"""KeywordIndex.keyword_ranked with a RankWindow: exactly the candidate set the type defines.

The reference here builds the candidate set from the texts themselves (which rows hold which
phrase, in insertion order) and scores it with the same store's exact ranking (no window:
every matching row, BM25 over the whole corpus), so any backend is held to the definition of
:class:`~recallbox.storage.queries.RankWindow`, scores included.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storage.conftest import StoreFactory

from recallbox.storage.base import (
    CORPUS_MESSAGE,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    LexicalQuery,
    RankWindow,
    SearchFilter,
    Store,
)
from recallbox.types import Message

from .helpers import DENIALS, add, chunk, deny

# Words the index's porter tokenizer keeps as they are; "common" fills most rows.
VOCABULARY = ("common", "beta", "gamma", "delta")
WEIGHTS = (8, 3, 1, 1)
ALL = 10_000


def holds(text: str, phrase: Sequence[str]) -> bool:
    words = text.split()
    width = len(phrase)
    return any(tuple(words[i : i + width]) == tuple(phrase) for i in range(len(words)))


def reference(
    store: Store,
    messages: Sequence[Message],
    query: LexicalQuery,
    window: RankWindow,
    limit: int,
    where: SearchFilter = EVERYTHING,
) -> list[tuple[str, float]]:
    """The best ``limit`` visible candidates of ``window`` (the RankWindow definition)."""
    exact = dict(store.keyword_ranked(CORPUS_MESSAGE, query, where=where, limit=ALL))
    matching = [m for m in messages if any(holds(m.content, p) for p in query.phrases)]
    size = window.matches
    while True:
        if len(matching) <= size:
            candidates = matching
        else:
            older, newest = matching[: len(matching) - size], matching[len(matching) - size :]
            rare = [
                p
                for p in query.phrases
                if 1 <= sum(holds(m.content, p) for m in older) <= window.rare_rows
            ]
            candidates = [m for m in older if any(holds(m.content, p) for p in rare)] + newest
        visible = [(m.id, exact[m.id]) for m in candidates if m.id in exact]
        if len(visible) >= limit or len(matching) <= size:
            return sorted(visible, key=lambda h: (-h[1], h[0]))[:limit]
        size *= window.growth


TEXTS = st.lists(
    st.tuples(
        st.lists(
            st.sampled_from(
                [w for w, n in zip(VOCABULARY, WEIGHTS, strict=True) for _ in range(n)]
            ),
            min_size=1,
            max_size=6,
        ),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)
PHRASES = st.lists(
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=2).map(tuple),
    min_size=1,
    max_size=3,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip
@given(
    TEXTS,
    PHRASES,
    st.integers(1, 12),
    st.integers(0, 5),
    st.integers(1, 15),
    st.booleans(),
)
def test_a_window_ranks_exactly_its_candidate_set(
    store_factory: StoreFactory,
    texts: list[tuple[list[str], bool]],
    phrases: list[tuple[str, ...]],
    matches: int,
    rare_rows: int,
    limit: int,
    scoped: bool,
) -> None:
    store = store_factory("window", fresh=True)
    messages: list[Message] = []
    for n, (words, visible) in enumerate(texts):
        channel = "a" if n % 3 else "b"
        messages += add(store, channel, " ".join(words), model_visible=visible)
    query = LexicalQuery(tuple(phrases))
    window = RankWindow(matches, rare_rows)
    where = SearchFilter(channel="a") if scoped else EVERYTHING
    got = store.keyword_ranked(CORPUS_MESSAGE, query, where=where, limit=limit, window=window)
    expected = reference(store, messages, query, window, limit, where)
    assert [i for i, _ in got] == [i for i, _ in expected]
    # the older rows are scored outside the index's own ranking, with the same floats
    assert [s for _, s in got] == [s for _, s in expected]


def test_an_old_best_match_of_a_common_word_is_outside_the_window(store: Store) -> None:
    old = add(store, "a", "common common common common")[0]
    add(store, "a", *["common beta beta beta beta"] * 6)
    query = LexicalQuery((("common",),))
    exact = store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=1)
    assert exact[0][0] == old.id
    windowed = store.keyword_ranked(
        CORPUS_MESSAGE, query, where=EVERYTHING, limit=1, window=RankWindow(3, 0)
    )
    assert windowed[0][0] != old.id


def test_an_old_row_of_a_rare_word_is_found_with_its_exact_score(store: Store) -> None:
    old = add(store, "a", "gamma common")[0]
    newer = add(store, "a", *["common beta"] * 8)
    query = LexicalQuery((("common",), ("gamma",)))
    exact = store.keyword_ranked(CORPUS_MESSAGE, query, where=EVERYTHING, limit=ALL)
    windowed = store.keyword_ranked(
        CORPUS_MESSAGE, query, where=EVERYTHING, limit=3, window=RankWindow(2, 1)
    )
    assert windowed[0] == exact[0] == (old.id, exact[0][1])
    # the old rare row, then the two newest matches (the older ones are not candidates)
    assert [i for i, _ in windowed[1:]] == sorted(m.id for m in newer[-2:])


def test_hidden_rows_in_the_window_widen_it(store: Store) -> None:
    shown = add(store, "a", *["common"] * 3)
    add(store, "a", *["common"] * 5, model_visible=False)
    query = LexicalQuery((("common",),))
    got = store.keyword_ranked(
        CORPUS_MESSAGE, query, where=EVERYTHING, limit=3, window=RankWindow(2, 0)
    )
    assert sorted(i for i, _ in got) == sorted(m.id for m in shown)


BAD_WINDOWS = (
    {"matches": 0, "rare_rows": 0},
    {"matches": 1, "rare_rows": -1},
    {"matches": 1, "rare_rows": 0, "growth": 1},
)


@pytest.mark.parametrize("fields", BAD_WINDOWS)
def test_a_window_needs_positive_sizes(fields: dict[str, int]) -> None:
    with pytest.raises(ValueError) as refused:
        RankWindow(**fields)
    assert "RankWindow" in str(refused.value)


@pytest.mark.parametrize("matches", [100, 300])
def test_a_tie_across_the_cut_is_broken_by_id(store: Store, matches: int) -> None:
    # 280 rows of one text tie: the best few of a window (or of every matching row, when fewer than
    # it holds but more than a few hundred) are the lowest ids among the candidates
    rows = add(store, "a", *["common words here"] * 280)
    query = LexicalQuery((("common",),))
    got = store.keyword_ranked(
        CORPUS_MESSAGE, query, where=EVERYTHING, limit=5, window=RankWindow(matches, 0)
    )
    candidates = rows[-matches:]
    assert [i for i, _ in got] == sorted(m.id for m in candidates)[:5]
    assert len({s for _, s in got}) == 1


def test_the_chunk_corpus_ranks_its_window_too(store: Store) -> None:
    # one chunk per thread: an old thread of a rare word, then newer threads of a common one
    add(store, "old", "gamma common")
    for n in range(5):
        add(store, f"t{n}", "common beta")
    for channel in ["old", *(f"t{n}" for n in range(5))]:
        chunk(store, channel)
    query = LexicalQuery((("common",), ("gamma",)))
    exact = store.keyword_ranked(CORPUS_TRANSCRIPT_CHUNK, query, where=EVERYTHING, limit=ALL)
    windowed = store.keyword_ranked(
        CORPUS_TRANSCRIPT_CHUNK, query, where=EVERYTHING, limit=3, window=RankWindow(2, 1)
    )
    assert windowed[0] == exact[0] and windowed[0][0] == "old@1"
    assert [i for i, _ in windowed[1:]] == ["t3@1", "t4@1"]  # the two newest chunks


def _add(store: Store, corpus: str, channel: str, *contents: str) -> list[Message]:
    """Append to ``channel`` (and, for the transcript chunks, chunk it: one chunk a thread,
    in the order of the calls)."""
    added = add(store, channel, *contents)
    if corpus == CORPUS_TRANSCRIPT_CHUNK:
        chunk(store, channel)
    return added


@pytest.mark.parametrize("how", DENIALS)
@pytest.mark.parametrize("corpus", [CORPUS_MESSAGE, CORPUS_TRANSCRIPT_CHUNK])
def test_denied_rows_take_no_place_in_the_window(store: Store, how: str, corpus: str) -> None:
    # DESIGN §5: a denied row leaks nothing, not even its count. A query term only denied rows
    # hold ("canary": the newest rows, in a denied thread) must rank the visible rows exactly
    # as a term no row holds: counted in the window, the denied rows would fill it and widen
    # it, and which visible rows are ranked would tell how many there are.
    for n in range(8):  # older rows score higher (fewer words)
        _add(store, corpus, f"t{n}", " ".join(["common"] + ["beta"] * n))
    for n in range(3):
        _add(store, corpus, f"vault{n}", *["canary words"] * 2)
    where = EVERYTHING
    for n in range(3):
        where = deny(store, f"vault{n}", how)
    window = RankWindow(3, 0)

    def ranked(word: str) -> list[tuple[str, float]]:
        query = LexicalQuery((("common",), (word,)))
        return store.keyword_ranked(corpus, query, where=where, limit=2, window=window)

    assert len(ranked("nothing")) == 2
    assert ranked("canary") == ranked("nothing")


@pytest.mark.parametrize("how", DENIALS)
@pytest.mark.parametrize("corpus", [CORPUS_MESSAGE, CORPUS_TRANSCRIPT_CHUNK])
def test_a_phrase_is_rare_by_its_allowed_rows(store: Store, how: str, corpus: str) -> None:
    # "gamma": one allowed row older than the window, two denied ones; rare_rows = 1. Counted
    # with the denied rows it would not be rare, the old allowed row would not be a
    # candidate, and its rarity would tell how many denied rows hold it.
    (old,) = _add(store, corpus, "t0", "gamma common")
    for n in range(2):
        _add(store, corpus, f"vault{n}", "gamma words")
    for n in range(1, 6):
        _add(store, corpus, f"t{n}", "common beta")
    where = EVERYTHING
    for n in range(2):
        where = deny(store, f"vault{n}", how)
    query = LexicalQuery((("common",), ("gamma",)))
    got = store.keyword_ranked(corpus, query, where=where, limit=2, window=RankWindow(2, 1))
    assert got[0][0] == (old.id if corpus == CORPUS_MESSAGE else "t0@1")
