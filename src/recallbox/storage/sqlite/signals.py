"""The SQLite side of :class:`~recallbox.storage.retrieval.SignalStore` (#21, a store mixin).

* :meth:`SignalMixin.message_timelines` — the ``(seq, created_at)`` of a range of one
  generation's messages (an index range scan of ``messages_by_generation``), from which the
  ranking cuts episodes;
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
