"""Glue between a search's fused candidates and ``recallbox.ranking.signals`` (#21).

Phase-1 wiring (the phase-2 seams re-apply it): reads, for the candidate set only,

1. each candidate's position (generation, ``seq``, ``created_at``, role, content: already in
   its :class:`~recallbox.storage.retrieval.SearchRow`);
2. the ``(seq, created_at)`` timeline of ``±EPISODE_SCAN_RADIUS`` messages around the candidates
   of each generation (``SignalStore.message_timelines``), cut into episodes;
3. the newest ``created_at`` in scope, which anchors relative dates in the query.

No SQL here, no embedder call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from recallbox.ranking.episodes import (
    NEIGHBOUR_WINDOW,
    Position,
    Timeline,
    episode_keys,
    has_neighbours,
    neighbours,
    timeline_starts,
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
from recallbox.storage.retrieval import SearchRow, SignalStore
from recallbox.text.dates import query_dates
from recallbox.text.participants import participant_of, query_participants

#: The timeline read around each candidate reaches this many messages either way (so one
#: search reads at most ``candidates × (2·radius + 1)`` positions, whatever the thread length);
#: an episode longer than that is cut at the edge of what was read.
EPISODE_SCAN_RADIUS = 64


def _adjacent(
    seq: int,
    step: int,
    episode: Mapping[int, int],
    slots: Mapping[int, str],
    similarity: Mapping[str, float | None],
) -> float | None:
    """The vector similarity of the message ``step`` places from ``seq`` in its episode
    (``episode``: seq → first seq of the generation's episodes; ``slots``: seq → candidate):
    ``None`` when there is none (or it has no vector), 0 when it was not a candidate."""
    first = episode.get(seq)
    if first is None or episode.get(seq + step) != first:
        return None
    other = slots.get(seq + step)
    if other is None:
        return 0.0
    return similarity.get(other)


def timeline_spans(
    positions: Mapping[str, Position], radius: int = EPISODE_SCAN_RADIUS
) -> list[tuple[str, int, int]]:
    """Merged ``(generation, first seq, last seq)`` windows of ``±radius`` around candidates."""
    by_generation: dict[str, list[int]] = {}
    for pos in positions.values():
        by_generation.setdefault(pos.generation, []).append(pos.seq)
    spans: list[tuple[str, int, int]] = []
    for generation, seqs in by_generation.items():
        current: tuple[int, int] | None = None
        for seq in sorted(set(seqs)):
            lo, hi = seq - radius, seq + radius
            if current is not None and lo <= current[1] + 1:
                current = (current[0], max(current[1], hi))
                continue
            if current is not None:
                spans.append((generation, *current))
            current = (lo, hi)
        if current is not None:
            spans.append((generation, *current))
    return spans


def signal_scores(
    store: SignalStore,
    fused: Sequence[Fused],
    rows: Mapping[str, SearchRow],
    *,
    query: str,
    vector_leg: bool,
    channel: str | None,
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
    timelines = [
        Timeline(generation, points)
        for generation, points in store.message_timelines(timeline_spans(positions)).items()
    ]
    starts = timeline_starts(timelines)
    episodes = episode_keys(positions, starts)
    near = neighbours(positions, episodes, window=NEIGHBOUR_WINDOW)
    similarity = {f.id: f.vector for f in present}
    slots: dict[str, dict[int, str]] = {}
    for rid, p in positions.items():
        slots.setdefault(p.generation, {}).setdefault(p.seq, rid)
    authors = {f.id: participant_of(rows[f.id].role, rows[f.id].content) for f in present}
    now: datetime | None = store.newest_created_at(channel)
    signals = QuerySignals(
        participants=query_participants(query, sorted(set(authors.values()))),
        dates=query_dates(query, now=now),
    )
    evidence = []
    use_context = vector_leg and weights.context > 0.0
    for f in present:
        pos = positions.get(f.id)
        context: float | None = None
        if use_context and f.vector is not None:
            previous = following = None
            if pos is not None:
                episode = starts.get(pos.generation, {})
                mine = slots[pos.generation]
                previous = _adjacent(pos.seq, -1, episode, mine, similarity)
                following = _adjacent(pos.seq, 1, episode, mine, similarity)
            context = context_similarity(f.vector, previous, following)
        evidence.append(
            Evidence(
                id=f.id,
                base=f.score,
                context=context,
                episode=episodes.get(f.id),
                neighbours=near.get(f.id, ())
                if pos is not None and has_neighbours(pos, starts)
                else None,
                participant=authors[f.id],
                created_at=rows[f.id].created_at,
            )
        )
    return combine(evidence, signals, weights=weights)
