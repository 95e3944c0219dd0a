"""Glue between a search's fused candidates and the ranking signals (#21, DESIGN §4.2).

Reads, for the candidate set only (so the cost follows the candidates, not the history):

1. each candidate's position (generation, ``seq``, ``created_at``, role, content: already in
   its :class:`~recallbox.storage.base.SearchRow`);
2. where episodes start around the candidates
   (:meth:`~recallbox.storage.base.EpisodeReads.episode_breaks`: the ``created_at`` gaps over
   ``EPISODE_GAP``) — ``±NEIGHBOUR_WINDOW`` around each candidate, and the stretch between two
   candidates of one generation at most :data:`EPISODE_SCAN_RADIUS` apart (so whether they
   share an episode is known); candidates further apart are in different episodes;
3. the newest ``created_at`` in scope, which anchors relative dates — only when the query
   may name one.

Then ``recallbox.ranking.signal_columns`` scores them (numpy when available). No SQL here, no
embedder call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from recallbox.ranking.episodes import EPISODE_GAP, NEIGHBOUR_WINDOW
from recallbox.ranking.fusion import Fused
from recallbox.ranking.signal_columns import Columns, ColumnScores, score_columns
from recallbox.ranking.signals import DEFAULT_WEIGHTS, QuerySignals, Weights
from recallbox.storage.base import EpisodeReads, SearchFilter, SearchRow
from recallbox.storage.values import GenerationSpan
from recallbox.text.dates import may_need_anchor, query_dates
from recallbox.text.participants import MAX_PREFIX_CHARS, participants_of, query_participants

#: Characters of each candidate's content the ranking reads (a participant's ``Name:`` and the
#: space after it end within them); the hits shown read their whole texts.
CANDIDATE_LEAD_CHARS = MAX_PREFIX_CHARS + 2
#: Two candidates of one generation at most this many places apart are read as one stretch
#: (are they in one episode?); further apart, they are in different episodes. Bounds what one
#: search reads: at most ``candidates × (EPISODE_SCAN_RADIUS + 2·NEIGHBOUR_WINDOW + 1)``
#: positions, whatever the thread length.
EPISODE_SCAN_RADIUS = 64


def timeline_spans(
    places: Sequence[tuple[str, int]],
    *,
    reach: int = NEIGHBOUR_WINDOW,
    bridge: int = EPISODE_SCAN_RADIUS,
) -> list[GenerationSpan]:
    """The stretches to read around ``(generation, seq)`` places: ``±reach`` around each, and
    the gap between two places of one generation at most ``bridge`` apart."""
    joins = max(bridge, 2 * reach + 1)  # windows that touch always join
    merged: list[list[Any]] = []  # [generation, first, last]
    for generation, seq in sorted(set(places)):
        if merged and merged[-1][0] == generation and seq - (merged[-1][2] - reach) <= joins:
            merged[-1][2] = seq + reach
        else:
            merged.append([generation, max(0, seq - reach), seq + reach])
    return [GenerationSpan(g, first, last) for g, first, last in merged]


def columns(
    fused: Sequence[Fused],
    rows: Mapping[str, SearchRow],
    freqs: Mapping[str, tuple[int, ...]] | None = None,
) -> Columns:
    """The candidates that have a row, as :class:`Columns` (fused order); ``freqs`` are the
    keyword matches' phrase frequencies (``None``: not known; a candidate without: 0s)."""
    present = [f for f in fused if f.id in rows]
    found = [rows[f.id] for f in present]
    return Columns(
        ids=[f.id for f in present],
        base=[f.score for f in present],
        vector=[f.vector for f in present],
        generation=[r.generation for r in found],
        seq=[r.seq for r in found],
        participant=participants_of((r.role, r.content) for r in found),
        created_at=[r.created_at for r in found],
        freqs=None if freqs is None else [freqs.get(f.id, ()) for f in present],
    )


def signal_scores(
    store: EpisodeReads,
    fused: Sequence[Fused],
    rows: Mapping[str, SearchRow],
    *,
    query: str,
    vector_leg: bool,
    where: SearchFilter,
    weights: Weights = DEFAULT_WEIGHTS,
    freqs: Mapping[str, tuple[int, ...]] | None = None,
) -> ColumnScores:
    """The combined score of every fused candidate that has a row (fused order);
    ``vector_leg`` says whether the search had a query vector (the context signal needs one),
    ``freqs`` the keyword matches' phrase frequencies (the episode document's keyword part)."""
    cols = columns(fused, rows, freqs)
    spans = timeline_spans(list(zip(cols.generation, cols.seq, strict=True)))
    breaks = store.episode_breaks(spans, gap_seconds=EPISODE_GAP.total_seconds(), where=where)
    now = store.newest_created_at(where=where) if may_need_anchor(query) else None
    signals = QuerySignals(
        participants=query_participants(query, sorted({p for p in cols.participant if p})),
        dates=query_dates(query, now=now),
    )
    return score_columns(cols, breaks, signals, vector_leg=vector_leg, weights=weights)
