"""Hybrid fusion of the keyword and vector legs (DESIGN §4.2), as pure functions.

``score = 0.6·v + 0.4·k`` only means something with three conditions, all kept here:

1. ``k`` comes from real corpus-level BM25 (``s = −bm25()``, ``recallbox.ranking.bm25``);
2. only the keyword leg is normalised, min-max **within the candidate set** (the union of what
   both legs returned): ``k = (s − min) / (max − min)``; a lone candidate scores
   ``s / (s + BM25_K1)``; when all candidates tie (``max − min < 1e-9·max``) each gets 1.0. A
   candidate that was searched by keyword and did not match has ``s = 0`` and takes part (a
   measurement, not a missing leg). ``v = max(0, 1 − d)`` stays absolute;
3. a candidate with no vector is scored on ``k`` alone (the weights renormalised over the legs
   present), never given ``v = 0``; symmetrically, when no keyword leg ran (a query with nothing
   searchable) a candidate is scored on ``v`` alone.

Then, in order: a candidate below the domain's threshold is dropped (see :func:`fuse` for the
one exemption), candidates with the same content hash collapse into the best one, and the rest
is sorted: fewer missing identifier literals first (DESIGN §4.1: ``search_memory`` ranks above
"search memory"), then score descending, then id ascending.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from recallbox.ranking.bm25 import BM25_K1

#: Weight of the vector similarity ``v`` in the hybrid score.
HYBRID_VECTOR_WEIGHT = 0.6
#: Weight of the normalised keyword score ``k`` in the hybrid score.
HYBRID_KEYWORD_WEIGHT = 0.4
#: Candidates tie when ``max − min`` is below this fraction of ``max``.
TIE_RELATIVE_EPSILON = 1e-9
#: Minimum hybrid score per domain (DESIGN §4.2).
THRESHOLD_SESSIONS = 0.05
THRESHOLD_KNOWLEDGE = 0.05
THRESHOLD_TRANSCRIPTS = 0.05
THRESHOLD_MEMORY = 0.10
THRESHOLD_CODE = 0.05
#: ``Hit.explain`` keys (DESIGN §4.2, §9): the raw keyword score ``s``, the normalised ``k``,
#: the vector similarity ``v``, the fused score, and the leg that carried it.
EXPLAIN_BM25 = "bm25"
EXPLAIN_KEYWORD = "keyword"
EXPLAIN_VECTOR = "vector"
EXPLAIN_FUSED = "fused"
EXPLAIN_LEG = "leg"
DOMAIN_THRESHOLDS: dict[str, float] = {
    "memory": THRESHOLD_MEMORY,
    "knowledge": THRESHOLD_KNOWLEDGE,
    "sessions": THRESHOLD_SESSIONS,
    "transcripts": THRESHOLD_TRANSCRIPTS,
    "code": THRESHOLD_CODE,
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One row a search leg returned, with its raw leg scores.

    ``keyword`` is ``s = −bm25()`` (``0.0``: searched, did not match; ``None``: no keyword leg
    ran for this search). ``vector`` is ``v = max(0, 1 − d)`` (``None``: the row has no vector,
    or no query vector exists). ``content_hash`` (optional) collapses duplicates;
    ``literal_misses`` counts the query's identifier literals the row's text lacks.
    """

    id: str
    keyword: float | None
    vector: float | None
    content_hash: str | None = None
    literal_misses: int = 0


@dataclass(frozen=True, slots=True)
class Fused:
    """A ranked candidate: the hybrid ``score`` and the leg scores it came from.

    ``keyword`` is the normalised ``k`` (``None`` when no keyword leg ran), ``vector`` is ``v``
    (``None`` when the row has no vector).
    """

    id: str
    score: float
    keyword: float | None
    vector: float | None
    literal_misses: int = 0
    raw_keyword: float | None = field(default=None, compare=False)
    """``s = −bm25()`` before normalisation (``None`` when no keyword leg ran)."""

    def sort_key(self) -> tuple[int, float, str]:
        """Fewer missing literals first, then higher score, then id."""
        return (self.literal_misses, -self.score, self.id)

    def explain(self) -> dict[str, float | str]:
        """Each leg's score, the fused score and the leg that carried it (``Hit.explain``)."""
        out: dict[str, float | str] = {EXPLAIN_FUSED: self.score}
        if self.raw_keyword is not None:
            out[EXPLAIN_BM25] = self.raw_keyword
        if self.keyword is not None:
            out[EXPLAIN_KEYWORD] = self.keyword
        if self.vector is not None:
            out[EXPLAIN_VECTOR] = self.vector
        out[EXPLAIN_LEG] = carrying_leg(self.keyword, self.vector)
        return out


def carrying_leg(k: float | None, v: float | None) -> str:
    """The leg whose weighted part of the hybrid score is larger (``keyword`` on a tie)."""
    if v is None:
        return EXPLAIN_KEYWORD
    if k is None:
        return EXPLAIN_VECTOR
    return (
        EXPLAIN_VECTOR if HYBRID_VECTOR_WEIGHT * v > HYBRID_KEYWORD_WEIGHT * k else EXPLAIN_KEYWORD
    )


def vector_similarity(distance: float) -> float:
    """``v = max(0, 1 − d)`` for a cosine distance ``d`` (``1 − cos``)."""
    return max(0.0, 1.0 - distance)


def normalize_keyword(scores: Sequence[float]) -> list[float]:
    """Min-max normalise keyword scores within one candidate set (condition 2 above)."""
    if not scores:
        return []
    if len(scores) == 1:
        s = max(0.0, scores[0])
        return [s / (s + BM25_K1)]
    high, low = max(scores), min(scores)
    if high <= 0.0:
        return [0.0] * len(scores)
    if high - low <= TIE_RELATIVE_EPSILON * high:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def hybrid_score(k: float | None, v: float | None) -> float:
    """``0.6·v + 0.4·k`` renormalised over the legs present (a missing leg is never 0)."""
    if v is None:
        return k if k is not None else 0.0
    if k is None:
        return v
    return HYBRID_VECTOR_WEIGHT * v + HYBRID_KEYWORD_WEIGHT * k


def fuse(
    candidates: Sequence[Candidate], *, threshold: float = 0.0, limit: int | None = None
) -> list[Fused]:
    """Rank ``candidates`` (ids are unique) by the hybrid score; best first.

    A candidate scoring below ``threshold`` is dropped unless it matched by keyword
    (``keyword > 0``). Trigger: min-max puts the weakest keyword match of every set at
    ``k = 0``. Why: that says "weakest of the pool", not "irrelevant", and dropping it would make
    a query that matches two rows return one. Outcome: the threshold prunes weak vector-only
    evidence, and every keyword match stays rankable.
    """
    keyword_values = [c.keyword for c in candidates if c.keyword is not None]
    normalised = iter(normalize_keyword(keyword_values))
    scored: list[tuple[Fused, str | None]] = []
    for candidate in candidates:
        k = next(normalised) if candidate.keyword is not None else None
        score = hybrid_score(k, candidate.vector)
        matched = candidate.keyword is not None and candidate.keyword > 0.0
        if score < threshold and not matched:
            continue
        fused = Fused(
            candidate.id, score, k, candidate.vector, candidate.literal_misses, candidate.keyword
        )
        scored.append((fused, candidate.content_hash))
    scored.sort(key=lambda pair: pair[0].sort_key())
    out: list[Fused] = []
    seen_hashes: set[str] = set()
    for fused, digest in scored:
        if digest is not None:
            if digest in seen_hashes:
                continue
            seen_hashes.add(digest)
        out.append(fused)
        if limit is not None and len(out) >= limit:
            break
    return out
