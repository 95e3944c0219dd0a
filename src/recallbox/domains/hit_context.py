"""What a sessions hit carries to be used without another call (#21): its episode's neighbours.

The first :data:`HITS_WITH_NEIGHBOURS` hits of a search get the nearest visible message before
and after them (within :data:`NEIGHBOUR_REACH` places by ``seq``) that is in the same episode
(its ``created_at`` within ``EPISODE_GAP`` of the hit's), each cut to
:data:`NEIGHBOUR_EXCERPT_CHARS`. One store read for all of them; no SQL here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from recallbox.ranking.episodes import EPISODE_GAP
from recallbox.storage.base import EpisodeReads, SearchFilter, SearchRow
from recallbox.text.participants import participant_of
from recallbox.text.windows import ELLIPSIS
from recallbox.types import Neighbour

#: Hits of one search that carry their neighbours (the default ``limit``: what an agent reads).
HITS_WITH_NEIGHBOURS = 10
#: A neighbour is at most this many places away by ``seq`` (hidden messages are skipped).
NEIGHBOUR_REACH = 2
#: Longest neighbour text, the ``…`` included.
NEIGHBOUR_EXCERPT_CHARS = 240


def _close(a: datetime, b: datetime) -> bool:
    try:
        return abs(a - b) <= EPISODE_GAP
    except TypeError:  # naive vs aware: not known to be close
        return False


def _text(content: str) -> str:
    if len(content) <= NEIGHBOUR_EXCERPT_CHARS:
        return content
    return content[: NEIGHBOUR_EXCERPT_CHARS - len(ELLIPSIS)].rstrip() + ELLIPSIS


def _neighbour(hit: SearchRow, row: SearchRow) -> Neighbour:
    return Neighbour(
        id=row.id,
        offset=row.seq - hit.seq,
        role=row.role,
        participant=participant_of(row.role, row.content),
        created_at=row.created_at,
        text=_text(row.content),
    )


def neighbours_of(hit: SearchRow, around: Sequence[SearchRow]) -> tuple[Neighbour, ...]:
    """The nearest message before and after ``hit`` among ``around`` in its episode."""
    before = [r for r in around if r.seq < hit.seq and _close(r.created_at, hit.created_at)]
    after = [r for r in around if r.seq > hit.seq and _close(r.created_at, hit.created_at)]
    chosen = [max(before, key=lambda r: r.seq)] if before else []
    chosen += [min(after, key=lambda r: r.seq)] if after else []
    return tuple(_neighbour(hit, r) for r in chosen)


def hit_neighbours(
    store: object, hits: Sequence[SearchRow], *, where: SearchFilter
) -> dict[str, tuple[Neighbour, ...]]:
    """``{hit id: its neighbours}`` for the first :data:`HITS_WITH_NEIGHBOURS` of ``hits``
    (``{}`` when the store cannot read positions)."""
    first = list(hits[:HITS_WITH_NEIGHBOURS])
    if not first or not isinstance(store, EpisodeReads):
        return {}
    around = store.adjacent_rows([h.id for h in first], NEIGHBOUR_REACH, where=where)
    return {h.id: neighbours_of(h, around.get(h.id, ())) for h in first}
