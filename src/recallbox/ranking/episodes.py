"""Episodes and neighbours of ranked messages, from stored positions only (#21, DESIGN §4.2).

An *episode* is a maximal run of consecutive messages (by ``seq``) of one thread and
generation whose ``created_at`` gaps stay within :data:`EPISODE_GAP`: in a chat transcript a
sitting, in an agent thread a stretch of work without a long pause. A message's *neighbours*
are the messages at most :data:`NEIGHBOUR_WINDOW` places away by ``seq`` in the same episode.

The store hands in, per generation, the ``(seq, created_at)`` of a run of consecutive messages
around the candidates (:class:`Timeline`); these functions cut it into episodes. A timeline
with a hole in ``seq`` breaks the episode at the hole (a message that is not known is not
assumed to be close in time). Pure functions: no storage, no SQL.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import NamedTuple

#: Consecutive messages further apart in time than this start a new episode. Not tuned: in
#: the LoCoMo protocol every turn of a session carries the session's date, so any gap from one
#: second to a day gives the same episodes there; one hour is a pause in a sitting of work.
EPISODE_GAP = timedelta(hours=1)
#: Neighbours are at most this many messages away (by ``seq``) within the episode. Tuned on
#: LoCoMo dev (all 7 conversations; ±1 and ±3 measured, see README "LoCoMo retrieval").
NEIGHBOUR_WINDOW = 2


class Position(NamedTuple):
    """Where a candidate message sits: its generation, ``seq`` and ``created_at``."""

    generation: str
    seq: int
    created_at: datetime


class EpisodeKey(NamedTuple):
    """An episode: its generation and the ``seq`` of its first known message."""

    generation: str
    first_seq: int


@dataclass(frozen=True, slots=True)
class Timeline:
    """Known consecutive-ish messages of one generation: ``(seq, created_at)`` pairs."""

    generation: str
    points: tuple[tuple[int, datetime], ...]


def _gap_ok(a: datetime, b: datetime, gap: timedelta) -> bool:
    try:
        return abs(b - a) <= gap
    except TypeError:  # naive vs aware: not comparable, so not known to be close
        return False


def episode_starts(
    points: Sequence[tuple[int, datetime]], *, gap: timedelta = EPISODE_GAP
) -> dict[int, int]:
    """``{seq: first seq of its episode}`` for the ``(seq, created_at)`` points given.

    Points are sorted by ``seq`` first (duplicates keep the first). An episode breaks where the
    ``created_at`` gap exceeds ``gap`` or where ``seq`` skips a number.
    """
    ordered = sorted(dict(reversed(list(points))).items())
    out: dict[int, int] = {}
    start: int | None = None
    previous: tuple[int, datetime] | None = None
    for seq, created in ordered:
        if previous is None or seq != previous[0] + 1 or not _gap_ok(previous[1], created, gap):
            start = seq
        out[seq] = start if start is not None else seq
        previous = (seq, created)
    return out


def starts_from_breaks(first: int, last: int, breaks: Sequence[int]) -> dict[int, int]:
    """``{seq: first seq of its episode}`` for ``first..last`` of one generation, from the seqs
    where an episode starts (``breaks``; ``first`` always starts one). The store's fast path:
    it returns the breaks instead of every ``(seq, created_at)``."""
    starts = sorted({first, *(b for b in breaks if first <= b <= last)})
    out: dict[int, int] = {}
    index = 0
    for seq in range(first, last + 1):
        while index + 1 < len(starts) and starts[index + 1] <= seq:
            index += 1
        out[seq] = starts[index]
    return out


def timeline_starts(
    timelines: Iterable[Timeline], *, gap: timedelta = EPISODE_GAP
) -> dict[str, dict[int, int]]:
    """``{generation: {seq: first seq of its episode}}`` of every timeline."""
    return {t.generation: episode_starts(t.points, gap=gap) for t in timelines}


def episode_keys(
    positions: Mapping[str, Position],
    starts: Mapping[str, Mapping[int, int]],
) -> dict[str, EpisodeKey]:
    """``{id: episode}`` of every candidate, from :func:`timeline_starts`.

    A candidate whose generation has no timeline (or whose ``seq`` is missing from it) gets
    an episode of its own position, so it is still its own neighbourhood.
    """
    out: dict[str, EpisodeKey] = {}
    for rid, pos in positions.items():
        first = starts.get(pos.generation, {}).get(pos.seq, pos.seq)
        out[rid] = EpisodeKey(pos.generation, first)
    return out


def neighbours(
    positions: Mapping[str, Position],
    episodes: Mapping[str, EpisodeKey],
    *,
    window: int = NEIGHBOUR_WINDOW,
) -> dict[str, tuple[str, ...]]:
    """``{id: ids of the other candidates within ±window seq in its episode}``, nearest first
    (the earlier one first at equal distance)."""
    by_seq: dict[str, dict[int, str]] = {}
    for rid, pos in positions.items():
        if rid in episodes:
            by_seq.setdefault(pos.generation, {}).setdefault(pos.seq, rid)
    offsets = [d for delta in range(1, max(0, window) + 1) for d in (-delta, delta)]
    out: dict[str, tuple[str, ...]] = {}
    for rid, pos in positions.items():
        key = episodes.get(rid)
        if key is None:
            out[rid] = ()
            continue
        slots = by_seq[pos.generation]
        found = []
        for d in offsets:
            other = slots.get(pos.seq + d)
            if other is not None and other != rid and episodes[other] == key:
                found.append(other)
        out[rid] = tuple(found)
    return out


def has_neighbours(
    pos: Position, starts: Mapping[str, Mapping[int, int]], *, window: int = NEIGHBOUR_WINDOW
) -> bool:
    """True when the timeline holds another message within ``±window`` of ``pos`` in its
    episode (whether or not it is a candidate)."""
    episode = starts.get(pos.generation)
    if not episode:
        return False
    first = episode.get(pos.seq)
    if first is None:
        return False
    return any(
        episode.get(pos.seq + d) == first
        for delta in range(1, max(0, window) + 1)
        for d in (-delta, delta)
    )


class Neighbourhood(NamedTuple):
    """A candidate's place among the others, from one pass (:func:`neighbourhoods`).

    ``neighbours`` are the other candidates within ``±window`` in its episode, nearest first
    (``None``: no message at all is that close in its episode); ``previous``/``following``
    the candidate just before/after it (``""``: that message is in the episode but is not a
    candidate; ``None``: there is no such message in the episode).
    """

    episode: EpisodeKey
    neighbours: tuple[str, ...] | None
    previous: str | None
    following: str | None


def neighbourhoods(
    positions: Mapping[str, Position],
    starts: Mapping[str, Mapping[int, int]],
    *,
    window: int = NEIGHBOUR_WINDOW,
) -> dict[str, Neighbourhood]:
    """:func:`episode_keys`, :func:`neighbours`, :func:`has_neighbours` and the adjacent
    candidates in one pass (the search path; the separate functions say the same)."""
    by_seq: dict[str, dict[int, str]] = {}
    for rid, pos in positions.items():
        by_seq.setdefault(pos.generation, {}).setdefault(pos.seq, rid)
    offsets = [d for delta in range(1, max(0, window) + 1) for d in (-delta, delta)]
    empty: dict[int, int] = {}
    out: dict[str, Neighbourhood] = {}
    for rid, (generation, seq, _) in positions.items():
        episode = starts.get(generation, empty)
        first = episode.get(seq)
        slots = by_seq[generation]
        if first is None:  # not covered: its own episode, no known neighbour
            out[rid] = Neighbourhood(EpisodeKey(generation, seq), None, None, None)
            continue
        found: list[str] = []
        close = False
        for d in offsets:
            if episode.get(seq + d) != first:
                continue
            close = True
            other = slots.get(seq + d)
            if other is not None and other != rid:
                found.append(other)
        previous = following = None
        if episode.get(seq - 1) == first:
            previous = slots.get(seq - 1, "")
        if episode.get(seq + 1) == first:
            following = slots.get(seq + 1, "")
        out[rid] = Neighbourhood(
            EpisodeKey(generation, first), tuple(found) if close else None, previous, following
        )
    return out
