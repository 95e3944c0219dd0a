"""Glue between a search's fused candidates and ``recallbox.ranking.signals`` (#21).

Reads, for the candidate set only (so the cost follows the candidates, not the history):

1. each candidate's position (generation, ``seq``, ``created_at``, role, content: already in
   its :class:`~recallbox.storage.base.SearchRow`);
2. where episodes start within ``±EPISODE_SCAN_RADIUS`` messages around the candidates of each
   generation (:meth:`~recallbox.storage.base.EpisodeReads.episode_breaks`: the
   ``created_at`` gaps over ``EPISODE_GAP``);
3. the newest ``created_at`` in scope, which anchors relative dates in the query.

No SQL here, no embedder call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from recallbox.ranking.episodes import (
    EPISODE_GAP,
    NEIGHBOUR_WINDOW,
    Position,
    neighbourhoods,
    starts_from_breaks,
)
from recallbox.ranking.fusion import Fused
from recallbox.ranking.signals import (
    DEFAULT_WEIGHTS,
    Evidence,
    QuerySignals,
    Scored,
    Weights,
    combine,
    context_similarity,
)
from recallbox.storage.base import EpisodeReads, GenerationSpan, SearchFilter, SearchRow
from recallbox.text.dates import query_dates
from recallbox.text.participants import participant_of, query_participants

#: The timeline read around each candidate reaches this many messages either way (so one
#: search reads at most ``candidates × (2·radius + 1)`` positions, whatever the thread length);
#: an episode longer than that is cut at the edge of what was read.
EPISODE_SCAN_RADIUS = 64


def _similarity(neighbour: str | None, similarity: Mapping[str, float | None]) -> float | None:
    """The vector similarity of an adjacent message: ``None`` when there is none (or it has no
    vector), 0 when it is not a candidate (``""``)."""
    if neighbour is None:
        return None
    if not neighbour:
        return 0.0
    return similarity.get(neighbour)


def timeline_spans(
    positions: Mapping[str, Position], radius: int = EPISODE_SCAN_RADIUS
) -> list[GenerationSpan]:
    """Merged windows of ``±radius`` positions around the candidates, per generation."""
    by_generation: dict[str, list[int]] = {}
    for pos in positions.values():
        by_generation.setdefault(pos.generation, []).append(pos.seq)
    spans: list[GenerationSpan] = []
    for generation, seqs in by_generation.items():
        current: tuple[int, int] | None = None
        for seq in sorted(set(seqs)):
            lo, hi = seq - radius, seq + radius
            if current is not None and lo <= current[1] + 1:
                current = (current[0], max(current[1], hi))
                continue
            if current is not None:
                spans.append(GenerationSpan(generation, *current))
            current = (lo, hi)
        if current is not None:
            spans.append(GenerationSpan(generation, *current))
    return spans


def signal_scores(
    store: EpisodeReads,
    fused: Sequence[Fused],
    rows: Mapping[str, SearchRow],
    *,
    query: str,
    vector_leg: bool,
    where: SearchFilter,
    weights: Weights = DEFAULT_WEIGHTS,
) -> list[Scored]:
    """The combined score of every fused candidate (same order as ``fused``); ``vector_leg``
    says whether the search had a query vector (the context signal needs one)."""
    present = [f for f in fused if f.id in rows]
    positions = {
        f.id: Position(rows[f.id].generation, rows[f.id].seq, rows[f.id].created_at)
        for f in present
        if rows[f.id].generation
    }
    breaks = store.episode_breaks(
        timeline_spans(positions), gap_seconds=EPISODE_GAP.total_seconds(), where=where
    )
    starts = {
        g: starts_from_breaks(found.first, found.last, found.starts) for g, found in breaks.items()
    }
    places = neighbourhoods(positions, starts, window=NEIGHBOUR_WINDOW)
    similarity = {f.id: f.vector for f in present}
    authors = {f.id: participant_of(rows[f.id].role, rows[f.id].content) for f in present}
    now: datetime | None = store.newest_created_at(where=where)
    signals = QuerySignals(
        participants=query_participants(query, sorted(set(authors.values()))),
        dates=query_dates(query, now=now),
    )
    evidence = []
    use_context = vector_leg and weights.context > 0.0
    for f in present:
        place = places.get(f.id)
        context: float | None = None
        if use_context and f.vector is not None:
            if place is None:
                context = context_similarity(f.vector, None, None)
            else:
                context = context_similarity(
                    f.vector,
                    _similarity(place.previous, similarity),
                    _similarity(place.following, similarity),
                )
        evidence.append(
            Evidence(
                f.id,
                f.score,
                context,
                None if place is None else place.episode,
                None if place is None else place.neighbours,
                authors[f.id],
                rows[f.id].created_at,
            )
        )
    return combine(evidence, signals, weights=weights)
