"""The storage protocol of the ranking signals (#21): where episodes start, the newest time,
the messages next to a hit.

Part of the storage contract (``recallbox.storage.base`` re-exports it and composes it into
``Store``); in a module of its own so ``base.py`` stays readable. ``docs/ARCHITECTURE.md``
("EpisodeReads") describes each read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from recallbox.storage.queries import SearchFilter
from recallbox.storage.values import EpisodeBreaks, GenerationSpan, SearchRow


@runtime_checkable
class EpisodeReads(Protocol):
    """The ranking signals' reads (#21); reference: ``ranking.episodes.episode_starts``."""

    def episode_breaks(
        self, spans: Sequence[GenerationSpan], *, gap_seconds: float, where: SearchFilter
    ) -> dict[str, EpisodeBreaks]:
        """Per generation: lowest/highest ``seq`` of its messages (any kind) in the spans, and
        where episodes start (each span's first message, each ``created_at`` more than
        ``gap_seconds`` from the previous one's); denied threads absent."""

    def newest_created_at(self, *, where: SearchFilter) -> datetime | None:
        """The newest ``created_at`` of the last message (by ``seq``) of each allowed thread."""

    def search_heads(
        self, ids: Sequence[str], *, lead: int, where: SearchFilter
    ) -> dict[str, SearchRow]:
        """:meth:`~recallbox.storage.base.ThreadStore.search_rows`, each row's ``content`` cut
        to its first ``lead`` characters: what the ranking reads of every candidate (a
        participant's ``Name:``), without reading whole texts; the hits shown read theirs."""

    def adjacent_rows(
        self, ids: Sequence[str], radius: int, *, where: SearchFilter
    ) -> dict[str, tuple[SearchRow, ...]]:
        """Per visible id: its generation's visible messages within ``±radius`` seq (seq order)."""
