"""The storage protocols of recall's bookkeeping (#12): the hit-log and stored tool outputs.

Part of the storage contract (``recallbox.storage.base`` re-exports both and composes them into
``Store``); in a module of their own so ``base.py`` stays readable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from recallbox.inventory_types import DayHits
from recallbox.recall_types import HitStats
from recallbox.storage.values import HitRow, NewToolOutput


@runtime_checkable
class HitLog(Protocol):
    """The append-only hit-log (DESIGN §5): telemetry, bounded by rotation.

    Agent-facing verbs record through :meth:`append_hit_rows`, which never waits for the write
    lock (``recallbox.hitlog.HitRecorder`` buffers what it could not write).
    :meth:`record_drill` and :meth:`record_hits` are the plain, waiting writes.
    """

    def record_drill(self, target_id: str, *, domain: str = "sessions") -> None:
        """Append a drill: recall's caller opened ``target_id`` (waits for the write lock)."""

    def record_hits(
        self, query: str, *, domain: str, layer: str, target_ids: Sequence[str]
    ) -> None:
        """Append one hit row per returned target (waits for the write lock)."""

    def append_hit_rows(
        self,
        rows: Sequence[HitRow],
        *,
        dropped: int = 0,
        keep_rows: int | None = None,
        wait_s: float = 0.0,
    ) -> bool:
        """Append ``rows`` in one transaction, waiting at most ``wait_s`` for the write lock;
        ``False`` (nothing written) when another writer holds it that long, or when the calling
        thread cannot write now (inside a read snapshot). ``dropped`` adds to the stored count of
        rows lost; ``keep_rows`` rotates in the same transaction: the oldest rows beyond the
        newest ``keep_rows`` are deleted, but only below every consumer's watermark."""

    def hit_recorded(self, domain: str, target_id: str) -> bool:
        """True when a hit row of ``domain`` names ``target_id``."""

    def hit_stats(self, *, top: int, max_rows: int, never_limit: int | None = None) -> HitStats:
        """The hit-log summarised: counts per domain, the ``top`` most recalled targets, the
        rows of each corpus never recalled, the dropped count, the watermarks, and how many
        rows over ``max_rows`` rotation must keep. With ``never_limit``, each corpus's
        never-recalled rows are counted only up to it (``NeverRecalled.capped`` when reached),
        so the statistics cost no scan of a whole corpus."""

    def hit_high_water(self) -> int:
        """The position of the newest hit-log row (0 for an empty log)."""

    def hit_watermark(self, consumer: str) -> int:
        """The last position ``consumer`` has read (0 when it never ran)."""

    def advance_hit_watermark(self, consumer: str, upto: int) -> None:
        """Record that ``consumer`` has read every row up to position ``upto`` (never moves
        back)."""

    def hit_days(self, *, since: str, until: str) -> list[DayHits]:
        """Hit and drill rows per UTC day and domain from day ``since`` up to, not including,
        day ``until`` (both ``YYYY-MM-DD``), by day then domain (the inspector's chart, #20)."""


@runtime_checkable
class ToolOutputStore(Protocol):
    """Originals of compressed tool outputs, under their handles (DESIGN §6)."""

    def put_tool_output(self, output: NewToolOutput) -> None:
        """Keep an original under its handle (no time-to-live); its thread is created when
        missing. ``InvalidArgument`` when the handle is taken."""

    def tool_output(self, handle: str) -> str | None:
        """The original under ``handle``, or ``None`` when unknown **or** denied (its thread
        quarantined or its source excluded)."""
