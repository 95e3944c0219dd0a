"""The ranking signals of one search's candidates, column-wise: a numpy path and its reference.

:func:`score_columns` scores every candidate of a search (``recallbox.ranking.signals``: the
weighted mean of the base and the signals each candidate has) from :class:`Columns` (one
entry per candidate) and the episode starts the store found around them. Two implementations
give **identical** floats (the same IEEE operations in the same order; a differential test
holds them to it):

* :func:`score_columns_numpy` — vectorised, used when numpy is installed (the ``embed``
  extra depends on it; imported on first use): sorted position keys and ``searchsorted`` instead of per-candidate
  dictionaries, so the signal step costs well under a millisecond for a thousand candidates;
* :func:`score_columns_reference` — pure Python, the definition
  (``recallbox.ranking.episodes.neighbourhoods`` and ``recallbox.ranking.signals.combine``).

Pure functions: no storage, no SQL.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from recallbox.ranking.bm25 import bm25_idf
from recallbox.ranking.episodes import (
    NEIGHBOUR_WINDOW,
    Position,
    neighbourhoods,
    starts_from_breaks,
)
from recallbox.ranking.signals import (
    CONTEXT_NEXT_SHARE,
    CONTEXT_PREVIOUS_SHARE,
    DEFAULT_WEIGHTS,
    EPISODE_DOC_K1,
    EPISODE_DOC_TIE_EPSILON,
    EPISODE_DOC_VECTOR_SHARE,
    SIGNAL_NAMES,
    WEIGHT_BASE,
    Evidence,
    QuerySignals,
    Scored,
    Weights,
    combine,
    context_similarity,
    date_value,
    episode_documents,
    participant_value,
)

#: True when the vectorised path can run (the embed extra brings numpy; without it the
#: reference path runs). numpy is imported on the first search, never at import time: importing
#: recallbox loads no model runtime.
HAS_NUMPY = importlib.util.find_spec("numpy") is not None
#: Position keys are ``generation code << SEQ_BITS | seq``.
SEQ_BITS = 32
_SEQ_MASK = (1 << SEQ_BITS) - 1


class Breaks(Protocol):
    """Where episodes start in a generation (``storage.base.EpisodeBreaks``)."""

    @property
    def first(self) -> int: ...

    @property
    def last(self) -> int: ...

    @property
    def starts(self) -> Sequence[int]: ...


@dataclass(frozen=True, slots=True)
class Columns:
    """One search's candidates, one entry each (ids unique): the fused ``base`` score, the
    vector similarity (``None``: no vector), the position and who wrote it when."""

    ids: Sequence[str]
    base: Sequence[float]
    vector: Sequence[float | None]
    generation: Sequence[str]
    seq: Sequence[int]
    participant: Sequence[str | None]
    created_at: Sequence[datetime | None]
    freqs: Sequence[Sequence[int] | None] | None = None
    """How often each query phrase occurs in each candidate (``None``: not known)."""


@dataclass(frozen=True, slots=True)
class ColumnScores:
    """Every candidate's combined ``score`` and each component, column-wise (NaN: absent),
    in :data:`~recallbox.ranking.signals.SIGNAL_NAMES` order; :meth:`scored` builds one row."""

    ids: Sequence[str]
    score: Sequence[float]
    components: Sequence[Sequence[float]]

    def scored(self, index: int) -> Scored:
        """Candidate ``index`` as a :class:`Scored` (absent components ``None``)."""
        values = tuple(None if c[index] != c[index] else c[index] for c in self.components)
        return Scored(self.ids[index], self.score[index], values)


def score_columns(
    cols: Columns,
    breaks: Mapping[str, Breaks],
    query: QuerySignals,
    *,
    vector_leg: bool,
    weights: Weights = DEFAULT_WEIGHTS,
    window: int = NEIGHBOUR_WINDOW,
) -> ColumnScores:
    """Every candidate's combined score, in input order (numpy when available)."""
    scorer = score_columns_numpy if HAS_NUMPY else score_columns_reference
    return scorer(cols, breaks, query, vector_leg=vector_leg, weights=weights, window=window)


def score_columns_reference(
    cols: Columns,
    breaks: Mapping[str, Breaks],
    query: QuerySignals,
    *,
    vector_leg: bool,
    weights: Weights = DEFAULT_WEIGHTS,
    window: int = NEIGHBOUR_WINDOW,
) -> ColumnScores:
    """The definition: per-candidate neighbourhoods, then :func:`signals.combine`."""
    positions = {
        rid: Position(g, s, t or datetime.min)
        for rid, g, s, t in zip(cols.ids, cols.generation, cols.seq, cols.created_at, strict=True)
    }
    starts = {g: starts_from_breaks(b.first, b.last, b.starts) for g, b in breaks.items()}
    places = neighbourhoods(positions, starts, window=window)
    similarity = dict(zip(cols.ids, cols.vector, strict=True))
    use_context = vector_leg and weights.context > 0.0
    codes: dict[object, int] = {}
    numbered = [codes.setdefault(places[rid].episode, len(codes)) for rid in cols.ids]
    freqs = cols.freqs if cols.freqs is not None else [None] * len(cols.ids)
    docs = episode_documents(numbered, cols.vector, freqs)
    evidence = []
    for i, rid in enumerate(cols.ids):
        place = places[rid]
        own = cols.vector[i]
        context: float | None = None
        if use_context and own is not None:
            context = context_similarity(
                own, _adjacent(place.previous, similarity), _adjacent(place.following, similarity)
            )
        evidence.append(
            Evidence(
                rid,
                cols.base[i],
                context,
                place.episode,
                place.neighbours,
                cols.participant[i],
                cols.created_at[i],
                docs[i],
            )
        )
    scored = combine(evidence, query, weights=weights)
    components: list[list[float]] = [[] for _ in SIGNAL_NAMES]
    for row in scored:
        for column, value in zip(components, row.values, strict=True):
            column.append(math.nan if value is None else value)
    return ColumnScores(cols.ids, [row.score for row in scored], components)


def _adjacent(neighbour: str | None, similarity: Mapping[str, float | None]) -> float | None:
    """An adjacent message's similarity: ``None`` when there is none (or it has no vector),
    0 when it is not a candidate (``""``)."""
    if neighbour is None:
        return None
    return similarity.get(neighbour) if neighbour else 0.0


def _per_candidate_values(cols: Columns, query: QuerySignals) -> tuple[list[float], list[float]]:
    """The participant and date values (NaN: absent), each computed once per author/day."""
    nan = math.nan
    by_author: dict[str | None, float | None] = {}
    participant = []
    for author in cols.participant:
        if author not in by_author:
            by_author[author] = participant_value(author, query.participants)
        value = by_author[author]
        participant.append(nan if value is None else value)
    if not query.dates:
        return participant, [nan] * len(cols.ids)
    by_time: dict[datetime | None, float | None] = {}
    dated = []
    for created in cols.created_at:
        if created not in by_time:
            by_time[created] = date_value(created, query.dates)
        value = by_time[created]
        dated.append(nan if value is None else value)
    return participant, dated


def score_columns_numpy(
    cols: Columns,
    breaks: Mapping[str, Breaks],
    query: QuerySignals,
    *,
    vector_leg: bool,
    weights: Weights = DEFAULT_WEIGHTS,
    window: int = NEIGHBOUR_WINDOW,
) -> ColumnScores:
    """The vectorised path; the same floats as :func:`score_columns_reference`."""
    import numpy as np

    n = len(cols.ids)
    if n == 0:
        return ColumnScores(cols.ids, [], [[] for _ in SIGNAL_NAMES])
    codes: dict[str, int] = {}
    for g in cols.generation:
        codes.setdefault(g, len(codes))
    gen = np.fromiter((codes[g] for g in cols.generation), dtype=np.int64, count=n)
    seq = np.fromiter(cols.seq, dtype=np.int64, count=n)
    first = np.ones(len(codes), dtype=np.int64)
    last = np.zeros(len(codes), dtype=np.int64)
    start_keys: list[int] = []
    for g, code in codes.items():
        b = breaks.get(g)
        if b is None:
            continue
        first[code], last[code] = b.first, b.last
        kept = sorted({b.first, *(s for s in b.starts if b.first <= s <= b.last)})
        start_keys.extend((code << SEQ_BITS) | s for s in kept)
    starts = np.array(start_keys, dtype=np.int64)

    def episode_start(at: Any) -> tuple[Any, Any]:
        """The start of ``at``'s episode and whether ``at`` is covered by the breaks."""
        covered = (at >= first[gen]) & (at <= last[gen])
        keys = (gen << SEQ_BITS) | np.where(covered, at, 0)
        if not len(starts):
            return np.zeros(n, dtype=np.int64), covered & False
        index = np.searchsorted(starts, keys, side="right") - 1
        found = starts[np.maximum(index, 0)]
        covered &= (index >= 0) & ((found >> SEQ_BITS) == gen)
        return found & _SEQ_MASK, covered

    own_start, own_covered = episode_start(seq)
    own_keys = (gen << SEQ_BITS) | seq
    order = np.argsort(own_keys, kind="stable")
    sorted_keys = own_keys[order]
    base = np.nan_to_num(np.clip(np.array(cols.base, dtype=np.float64), 0.0, 1.0), nan=0.0)
    vector = np.array([math.nan if v is None else v for v in cols.vector], dtype=np.float64)

    def at_offset(d: int) -> tuple[Any, Any, Any]:
        """For each candidate: is ``seq + d`` in its episode, is it a candidate, which."""
        other_start, other_covered = episode_start(seq + d)
        same = own_covered & other_covered & (other_start == own_start)
        pos = np.minimum(np.searchsorted(sorted_keys, own_keys + d), n - 1)
        match = same & (sorted_keys[pos] == own_keys + d)
        return same, match, order[pos]

    close = np.zeros(n, dtype=bool)
    best = np.zeros(n, dtype=np.float64)
    adjacent: dict[int, tuple[Any, Any, Any]] = {}
    for delta in range(1, max(0, window) + 1):
        for d in (-delta, delta):
            same, match, other = at_offset(d)
            if delta == 1:
                adjacent[d] = (same, match, other)
            close |= same
            best = np.maximum(best, np.where(match, base[other], 0.0))
    for d in (-1, 1):
        if d not in adjacent:
            adjacent[d] = at_offset(d)
    nan = np.full(n, math.nan)
    neighbour = np.where(close, best, nan)

    episode_keys = np.where(own_covered, (gen << SEQ_BITS) | own_start, own_keys)
    _, inverse = np.unique(episode_keys, return_inverse=True)
    top = np.full(int(inverse.max()) + 1, -1.0)
    np.maximum.at(top, inverse, base)
    episode = top[inverse]
    doc = _episode_documents_numpy(inverse, len(top), vector, cols.freqs)

    context = nan
    if vector_leg and weights.context > 0.0:
        has_own = ~np.isnan(vector)
        total = np.clip(np.where(has_own, vector, 0.0), 0.0, 1.0)
        norm = np.ones(n)
        for d, share in ((-1, CONTEXT_PREVIOUS_SHARE), (1, CONTEXT_NEXT_SHARE)):
            same, match, other = adjacent[d]
            value = np.where(match, vector[other], np.where(same, 0.0, math.nan))
            present = ~np.isnan(value)
            if share > 0.0:
                total = total + np.where(present, share * np.clip(value, 0.0, 1.0), 0.0)
                norm = norm + np.where(present, share, 0.0)
        context = np.where(has_own, total / norm, nan)

    participant_list, dated_list = _per_candidate_values(cols, query)
    participant = np.array(participant_list, dtype=np.float64)
    dated = np.array(dated_list, dtype=np.float64)
    total = WEIGHT_BASE * base
    norm = np.full(n, WEIGHT_BASE)
    parts = (context, neighbour, episode, doc, participant, dated)
    for value, weight in zip(
        parts,
        (
            weights.context,
            weights.neighbour,
            weights.episode,
            weights.episode_doc,
            weights.participant,
            weights.date,
        ),
        strict=True,
    ):
        if weight > 0.0:
            present = ~np.isnan(value)
            total = total + np.where(present, weight * np.clip(value, 0.0, 1.0), 0.0)
            norm = norm + np.where(present, weight, 0.0)
    score = (total / norm).tolist()
    return ColumnScores(cols.ids, score, [base.tolist(), *(p.tolist() for p in parts)])


def _episode_documents_numpy(
    inverse: Any, count: int, vector: Any, freqs: Sequence[Sequence[int] | None] | None
) -> Any:
    """:func:`~recallbox.ranking.signals.episode_documents`, vectorised (NaN: absent)."""
    import numpy as np

    has = ~np.isnan(vector)
    sums = np.zeros(count)
    np.add.at(sums, inverse[has], vector[has])
    seen = np.bincount(inverse[has], minlength=count)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(seen > 0, sums / np.maximum(seen, 1), math.nan)
    known = [i for i, f in enumerate(freqs or ()) if f is not None]
    if not known or freqs is None:
        return mean[inverse]
    phrases = max(len(freqs[i] or ()) for i in known)
    table = np.zeros((len(known), phrases), dtype=np.int64)
    for row, i in enumerate(known):
        f = freqs[i] or ()
        table[row, : len(f)] = f
    summed = np.zeros((count, phrases), dtype=np.int64)
    np.add.at(summed, inverse[np.array(known, dtype=np.int64)], table)
    k1 = EPISODE_DOC_K1
    raw = np.zeros(count)
    for p in range(phrases):
        idf = bm25_idf(count, int((summed[:, p] > 0).sum()))
        n = summed[:, p].astype(np.float64)
        raw = raw + (idf * (n * (k1 + 1.0))) / (n + k1)
    high, low = float(raw.max()), float(raw.min())
    if high <= 0.0:
        keyword = np.zeros(count)
    elif high - low <= EPISODE_DOC_TIE_EPSILON * high:
        keyword = np.ones(count)
    else:
        keyword = (raw - low) / (high - low)
    share = EPISODE_DOC_VECTOR_SHARE
    doc = np.where(np.isnan(mean), keyword, share * mean + (1.0 - share) * keyword)
    return doc[inverse]
