"""The SQLite side of :class:`~recallbox.storage.retrieval.SignalStore` (#21, a store mixin).

* :meth:`SignalMixin.message_timelines` — the ``(seq, created_at)`` of a range of one
  generation's messages (an index range scan of ``messages_by_generation``), from which the
  ranking cuts episodes (the reference path);
* :meth:`SignalMixin.episode_breaks` — the same range reduced in SQL to where episodes start
  (the gap to the previous message over ``EPISODE_GAP``): the search path;
* :meth:`SignalMixin.newest_created_at` — the ``created_at`` of the last message (by ``seq``)
  of each allowed thread, the newest of them: the anchor of relative dates.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recallbox.storage.sqlite.schema import THREAD_ALLOWED_SQL

if TYPE_CHECKING:
    from recallbox.storage.sqlite.connection import ConnectionPool


class SignalMixin:
    """Timelines and the newest ``created_at`` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def message_timelines(
        self, spans: Sequence[tuple[str, int, int]]
    ) -> dict[str, tuple[tuple[int, datetime], ...]]:
        out: dict[str, tuple[tuple[int, datetime], ...]] = {}
        with self.pool.reading() as conn:
            for generation, first, last in spans:
                rows: list[Any] = conn.execute(
                    "SELECT m.seq, m.created_at FROM generations g "
                    "JOIN threads t ON t.id = g.thread_id "
                    "JOIN messages m ON m.generation_id = g.id "
                    f"WHERE g.uid = ? AND m.seq BETWEEN ? AND ? AND {THREAD_ALLOWED_SQL} "
                    "ORDER BY m.seq",
                    (generation, int(first), int(last)),
                ).fetchall()
                if rows:
                    out[generation] = tuple(
                        (int(r[0]), datetime.fromisoformat(str(r[1]))) for r in rows
                    )
        return out

    def episode_breaks(
        self, spans: Sequence[tuple[str, int, int]], *, gap_seconds: float
    ) -> dict[str, tuple[int, int, tuple[int, ...]]]:
        out: dict[str, tuple[int, int, tuple[int, ...]]] = {}
        # the gaps are computed in SQL (LAG over the range, index order): only the few rows
        # that start an episode come back, not every (seq, created_at)
        sql = (
            "SELECT seq, gap FROM (SELECT m.seq AS seq, "
            "(julianday(m.created_at) - julianday(LAG(m.created_at) OVER (ORDER BY m.seq))) "
            "* 86400.0 AS gap, "
            "row_number() OVER (ORDER BY m.seq DESC) AS from_end "
            "FROM generations g JOIN threads t ON t.id = g.thread_id "
            "JOIN messages m ON m.generation_id = g.id "
            f"WHERE g.uid = ? AND m.seq BETWEEN ? AND ? AND {THREAD_ALLOWED_SQL}) "
            "WHERE gap IS NULL OR gap > ? OR gap < -? OR from_end = 1 ORDER BY seq"
        )
        with self.pool.reading() as conn:
            for generation, first, last in spans:
                rows: list[Any] = conn.execute(
                    sql, (generation, int(first), int(last), gap_seconds, gap_seconds)
                ).fetchall()
                if not rows:
                    continue
                breaks = tuple(
                    int(r[0]) for r in rows if r[1] is None or abs(float(r[1])) > gap_seconds
                )
                out[generation] = (int(rows[0][0]), int(rows[-1][0]), breaks)
        return out

    def newest_created_at(self, channel: str | None) -> datetime | None:
        # each thread's last message by seq (an index lookup), not threads.last_activity:
        # that also moves with the wall-clock time of appends
        sql = (
            "SELECT max((SELECT m.created_at FROM messages m WHERE m.thread_id = t.id "
            f"ORDER BY m.seq DESC LIMIT 1)) FROM threads t WHERE {THREAD_ALLOWED_SQL}"
        )
        params: tuple[object, ...] = ()
        if channel is not None:
            sql += " AND t.channel = ?"
            params = (channel,)
        with self.pool.reading() as conn:
            row = conn.execute(sql, params).fetchone()
        return None if row is None or row[0] is None else datetime.fromisoformat(str(row[0]))
