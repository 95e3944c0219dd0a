"""The ``sessions`` domain (DESIGN §4.5): every searchable message of every thread, one hit each.

One search runs both legs over the store and fuses them (``recallbox.ranking.fusion``):

* keyword: the sanitised FTS5 query (``recallbox.text.fts_query``) ranked by ``s = −bm25()``
  with the statistics of the corpus searched — the whole index for a search of every thread
  (FTS5's ``bm25()``), the thread for a ``channel`` search (its row count, average length and
  document frequencies, ``recallbox.ranking.bm25``) — best :data:`KEYWORD_CANDIDATES` rows;
* vector: the :data:`VECTOR_CANDIDATES` nearest rows to the query vector, plus the similarity
  of every keyword candidate that has a vector, so a row is scored on the same legs whichever
  leg found it.

Candidate pools do not depend on ``limit`` (up to the pool size), so a smaller ``limit`` returns
a prefix of a larger one. The store applies every exclusion (pending, superseded, invisible,
machine events, compaction summaries, denied threads) in SQL; this module never sees those
rows. No SQL here and no embedder call: the query vector is handed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from recallbox.domains.signal_inputs import signal_scores
from recallbox.ranking.bm25 import BM25_B, BM25_K1, SCOPED_BM25_B, SCOPED_BM25_K1, scope_scores
from recallbox.ranking.fusion import (
    THRESHOLD_SESSIONS,
    Candidate,
    Fused,
    fuse,
    vector_similarity,
)
from recallbox.ranking.signals import DEFAULT_WEIGHTS, Weights
from recallbox.storage.retrieval import EmbeddingSpace, RetrievalStore, SearchRow, SignalStore
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit

DOMAIN = "sessions"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over). 400 rather
#: than 200 since #21: the signals need the turns around a match in the pool (measured on
#: LoCoMo dev: +0.1 turn R@10 for this pool, +0.2 for the vector one, more for temporal).
KEYWORD_CANDIDATES = 400
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 400
#: The pools of the plain hybrid before #21 (the measurement baseline).
PLAIN_CANDIDATES = 200


@dataclass(frozen=True, slots=True)
class Ranking:
    """How ``search`` ranks (the shipped default; other values are for measurements).

    ``weights`` are the ranking signals' (``None``: the plain hybrid, no signals); the pools
    and the thread-scoped BM25 ``k1``/``b`` are the keyword leg's and the vector leg's.
    """

    weights: Weights | None = DEFAULT_WEIGHTS
    keyword_pool: int = KEYWORD_CANDIDATES
    vector_pool: int = VECTOR_CANDIDATES
    bm25_k1: float = SCOPED_BM25_K1
    bm25_b: float = SCOPED_BM25_B


DEFAULT_RANKING = Ranking()
#: The plain 0.6/0.4 hybrid of FTS5's BM25 constants and the former pools (the baseline).
PLAIN_RANKING = Ranking(
    weights=None,
    keyword_pool=PLAIN_CANDIDATES,
    vector_pool=PLAIN_CANDIDATES,
    bm25_k1=BM25_K1,
    bm25_b=BM25_B,
)


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's embedding and the space whose stored vectors it may be compared with."""

    vector: Sequence[float]
    space: EmbeddingSpace


class ScoredRow(Protocol):
    """What fusion reads of a candidate's row besides its text."""

    @property
    def content_hash(self) -> str: ...


R = TypeVar("R", bound=ScoredRow)


class Nearest(Protocol):
    """A store's nearest-vector search (``nearest_messages``, ``nearest_chunks``)."""

    def __call__(
        self, vector: Sequence[float], *, space: EmbeddingSpace, channel: str | None, limit: int
    ) -> list[tuple[str, float]]: ...


class Distances(Protocol):
    """A store's distances of given ids (``message_distances``, ``chunk_distances``)."""

    def __call__(
        self, vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace
    ) -> dict[str, float]: ...


def literal_misses(text: str, literals: Sequence[str]) -> int:
    """How many identifier literals ``text`` lacks (compared case-insensitively)."""
    if not literals:
        return 0
    folded = text.casefold()
    return sum(1 for literal in literals if literal.casefold() not in folded)


def keyword_leg(
    store: RetrievalStore,
    query: FtsQuery,
    *,
    channel: str | None,
    pool: int,
    k1: float = SCOPED_BM25_K1,
    b: float = SCOPED_BM25_B,
) -> dict[str, float]:
    """``{id: s}`` of the best ``pool`` keyword matches in scope, ``s = −bm25()``.

    Trigger: a ``channel`` search. Why: inside one thread, words in most of its rows (the
    speakers' names, the project's name) carry no information, yet the IDF of the whole index
    rates them as rare and lets them outweigh the words that matter; measured on LoCoMo, scoped
    statistics lift hybrid turn recall@10 by about 2 points. Outcome: BM25 over the thread as
    the corpus — still exact BM25, of the corpus actually searched.
    """
    if query.is_empty:
        return {}
    if channel is None:
        return dict(store.keyword_messages_ranked(query.expression, channel=None, limit=pool))
    scope = store.keyword_scope(query.phrases, channel=channel)
    if scope is None:
        return {}
    scores = scope_scores(
        scope.rows,
        scope.tokens,
        scope.df,
        [(m.length, m.freqs) for m in scope.matches],
        k1=k1,
        b=b,
    )
    ranked = sorted(
        zip((m.id for m in scope.matches), scores, strict=True), key=lambda p: (-p[1], p[0])
    )
    return dict(ranked[:pool])


def fuse_legs(
    keyword: Mapping[str, float] | None,
    query_vector: QueryVector | None,
    *,
    nearest: Nearest,
    distances: Distances,
    rows_of: Callable[[Sequence[str]], Mapping[str, R]],
    text_of: Callable[[R], str],
    literals: Sequence[str],
    channel: str | None,
    pool: int,
    limit: int | None,
    threshold: float,
) -> tuple[list[Fused], Mapping[str, R]]:
    """Run the vector leg next to the ``keyword`` scores and fuse both; returns the fused
    candidates (best first, at most ``limit``) and the rows they were read from.

    ``keyword`` is ``{id: s}`` of the keyword leg, ``None`` when it did not run. The vector leg
    takes the ``pool`` ``nearest`` ids plus the ``distances`` of every keyword candidate it did
    not find, so an id is scored on the same
    legs whichever leg found it. Ids without a row (``rows_of``) are dropped.
    """
    keyword_scores: Mapping[str, float] = keyword or {}
    similarity: dict[str, float] = {}
    if query_vector is not None:
        found = nearest(
            query_vector.vector,
            space=query_vector.space,
            channel=channel,
            limit=pool,
        )
        similarity = {rid: vector_similarity(d) for rid, d in found}
        unscored = [rid for rid in keyword_scores if rid not in similarity]
        measured = distances(query_vector.vector, unscored, space=query_vector.space)
        similarity.update((rid, vector_similarity(d)) for rid, d in measured.items())
    ids = list(dict.fromkeys([*keyword_scores, *similarity]))
    rows = rows_of(ids)
    candidates = [
        Candidate(
            id=rid,
            keyword=keyword_scores.get(rid, 0.0) if keyword is not None else None,
            vector=similarity.get(rid),
            content_hash=rows[rid].content_hash,
            literal_misses=literal_misses(text_of(rows[rid]), literals),
        )
        for rid in ids
        if rid in rows
    ]
    return fuse(candidates, threshold=threshold, limit=limit), rows


def _hit(
    row: SearchRow,
    score: float,
    k: float | None,
    v: float | None,
    query: FtsQuery,
    explain: Mapping[str, float | None] | None = None,
) -> Hit:
    return Hit(
        id=row.id,
        score=score,
        text=excerpt(row.content, query.terms, query.literals),
        domain=DOMAIN,
        channel=row.channel,
        created_at=row.created_at,
        keyword=k,
        vector=v,
        role=row.role,
        explain=explain,
    )


def search(
    store: RetrievalStore,
    query: FtsQuery,
    *,
    channel: str | None,
    limit: int,
    query_vector: QueryVector | None,
    use_keyword: bool = True,
    text: str = "",
    ranking: Ranking = DEFAULT_RANKING,
) -> list[Hit]:
    """Rank the messages in scope for ``query``; best first, at most ``limit``.

    ``use_keyword=False`` (and an empty ``query``) skips the keyword leg; ``query_vector=None``
    skips the vector leg. With neither, nothing is found. ``text`` is the query as typed (the
    participants and dates it names); ``ranking`` is for measurements.
    """
    weights = ranking.weights
    keyword: dict[str, float] | None = None
    if use_keyword and not query.is_empty:
        keyword = keyword_leg(
            store,
            query,
            channel=channel,
            pool=max(limit, ranking.keyword_pool),
            k1=ranking.bm25_k1,
            b=ranking.bm25_b,
        )
    fused, rows = fuse_legs(
        keyword,
        query_vector,
        nearest=store.nearest_messages,
        distances=store.message_distances,
        rows_of=store.search_rows,
        text_of=lambda row: row.content,
        literals=query.literals,
        channel=channel,
        pool=max(limit, ranking.vector_pool),
        limit=None if weights is not None else limit,
        threshold=THRESHOLD_SESSIONS,
    )
    if weights is None or not isinstance(store, SignalStore):
        return [_hit(rows[f.id], f.score, f.keyword, f.vector, query) for f in fused[:limit]]
    scored = signal_scores(
        store,
        fused,
        rows,
        query=text,
        vector_leg=query_vector is not None,
        channel=channel,
        weights=weights,
    )
    by_id = {f.id: f for f in fused}
    ranked = sorted(scored, key=lambda s: (by_id[s.id].literal_misses, -s.score, s.id))
    return [
        _hit(rows[s.id], s.score, by_id[s.id].keyword, by_id[s.id].vector, query, s.components)
        for s in ranked[:limit]
    ]
