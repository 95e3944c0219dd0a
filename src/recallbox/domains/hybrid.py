"""The two legs of a ranked domain search and their fusion, shared by every hybrid domain.

A domain hands :func:`fuse_legs` its keyword scores and its store's vector calls; the vector
leg takes the ``pool`` nearest ids plus the distances of every keyword candidate it did not
find, so an id is scored on the same legs whichever leg found it, and the candidates are fused
by ``recallbox.ranking.fusion`` (threshold, duplicate collapse, identifier recheck). No SQL and
no embedder call here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from recallbox.domains.base import QueryVector
from recallbox.ranking.bm25 import RANK_RARE_PHRASE_ROWS, RANK_WINDOW_MATCHES
from recallbox.ranking.fusion import Candidate, Fused, fuse, vector_similarity
from recallbox.storage.base import EmbeddingSpace, RankWindow, SearchFilter

#: The candidate window of a global keyword search over a history corpus (``RankWindow``).
HISTORY_RANK_WINDOW = RankWindow(RANK_WINDOW_MATCHES, RANK_RARE_PHRASE_ROWS)


class ScoredRow(Protocol):
    """What fusion reads of a candidate's row besides its text."""

    @property
    def content_hash(self) -> str: ...


R = TypeVar("R", bound=ScoredRow)


class Nearest(Protocol):
    """A store's nearest-vector search (:meth:`~recallbox.storage.base.VectorIndex.nearest`)."""

    def __call__(
        self, vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]: ...


class Distances(Protocol):
    """A store's distances of given ids (:meth:`~recallbox.storage.base.VectorIndex.distances`)."""

    def __call__(
        self,
        vector: Sequence[float],
        ids: Sequence[str],
        *,
        space: EmbeddingSpace,
        where: SearchFilter,
    ) -> dict[str, float]: ...


def literal_misses(text: str, literals: Sequence[str]) -> int:
    """How many identifier literals ``text`` lacks (compared case-insensitively)."""
    if not literals:
        return 0
    folded = text.casefold()
    return sum(1 for literal in literals if literal.casefold() not in folded)


def fuse_legs(
    keyword: Mapping[str, float] | None,
    query_vector: QueryVector | None,
    *,
    nearest: Nearest,
    distances: Distances,
    rows_of: Callable[[Sequence[str]], Mapping[str, R]],
    text_of: Callable[[R], str],
    literals: Sequence[str],
    where: SearchFilter,
    pool: int,
    limit: int | None,
    threshold: float,
    misses_of: Callable[[str], int] | None = None,
) -> tuple[list[Fused], Mapping[str, R]]:
    """Run the vector leg next to the ``keyword`` scores and fuse both; returns the fused
    candidates (best first, at most ``limit``; ``None``: all) and the rows they were read from.

    ``keyword`` is ``{id: s}`` of the keyword leg, ``None`` when it did not run. Ids without a
    row (``rows_of``) are dropped. ``misses_of(id)``: how many ``literals`` a candidate lacks,
    where its row holds only the head of its text (default: counted in ``text_of(row)``).
    """
    keyword_scores: Mapping[str, float] = keyword or {}
    similarity: dict[str, float] = {}
    if query_vector is not None:
        found = nearest(query_vector.vector, space=query_vector.space, where=where, limit=pool)
        similarity = {rid: vector_similarity(d) for rid, d in found}
        unscored = [rid for rid in keyword_scores if rid not in similarity]
        measured = distances(query_vector.vector, unscored, space=query_vector.space, where=where)
        similarity.update((rid, vector_similarity(d)) for rid, d in measured.items())
    ids = list(dict.fromkeys([*keyword_scores, *similarity]))
    rows = rows_of(ids)
    candidates = [
        Candidate(
            id=rid,
            keyword=keyword_scores.get(rid, 0.0) if keyword is not None else None,
            vector=similarity.get(rid),
            content_hash=rows[rid].content_hash,
            literal_misses=(
                misses_of(rid)
                if misses_of is not None
                else literal_misses(text_of(rows[rid]), literals)
            ),
        )
        for rid in ids
        if rid in rows
    ]
    return fuse(candidates, threshold=threshold, limit=limit), rows
