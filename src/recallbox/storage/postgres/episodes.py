"""The PostgreSQL side of :class:`~recallbox.storage.base.EpisodeReads` (#21), a store mixin.

The SQLite twin's statements: the ``(seq, created_at)`` of the spans' messages in one statement
(an index range scan of ``messages_by_generation`` per span), cut in Python where the gap to the
previous message exceeds the gap; the newest ``created_at`` of each allowed thread's last
message; the visible messages around given ones in one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recallbox.storage.postgres.connection import PgPool
from recallbox.storage.postgres.corpora import MESSAGES
from recallbox.storage.postgres.rows import utc
from recallbox.storage.postgres.visibility import MESSAGE_VISIBLE_SQL, THREAD_ALLOWED_SQL
from recallbox.storage.queries import SearchFilter
from recallbox.storage.row_maps import adjacent_rows_of, episode_breaks_of, search_rows_by_id
from recallbox.storage.values import EpisodeBreaks, GenerationSpan, SearchRow

#: Microseconds in a second.
_MICROSECONDS = 1_000_000
#: ``created_at`` as integer microseconds since the epoch (exact, as the reference compares).
_MICROS_SQL = "(extract(epoch FROM m.created_at) * 1000000)::bigint"
_SPAN_ROWS_SQL = (
    f"SELECT s.key, g.uid, m.seq, {_MICROS_SQL} FROM "
    "unnest(%s::text[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS s(gen, low, high, key) "
    "JOIN generations g ON g.uid = s.gen "
    "JOIN threads t ON t.id = g.thread_id "
    "JOIN messages m ON m.generation_id = g.id AND m.seq BETWEEN s.low AND s.high "
    "WHERE {gate} ORDER BY s.key, m.seq"
)
_HIT_VISIBLE_SQL = MESSAGE_VISIBLE_SQL.replace("m.", "h.")
_ADJACENT_SQL = (
    "SELECT h.uid, m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, g.uid, "
    "m.seq FROM unnest(%s::text[]) AS j(value) JOIN messages h ON h.uid = j.value "
    "JOIN threads t ON t.id = h.thread_id "
    "LEFT JOIN messages m ON m.generation_id = h.generation_id "
    f"AND m.seq BETWEEN h.seq - %s AND h.seq + %s AND m.id <> h.id AND {MESSAGE_VISIBLE_SQL} "
    "LEFT JOIN generations g ON g.id = m.generation_id "
    f"WHERE {_HIT_VISIBLE_SQL} AND {THREAD_ALLOWED_SQL}{{narrow}} ORDER BY h.uid, m.seq"
)


class EpisodeMixin:
    """Episode breaks, the newest time and adjacent rows for :class:`PostgresStore`."""

    pool: PgPool

    def episode_breaks(
        self, spans: Sequence[GenerationSpan], *, gap_seconds: float, where: SearchFilter
    ) -> dict[str, EpisodeBreaks]:
        if not spans:
            return {}
        narrow = MESSAGES.narrow(where)
        keys = (
            [s.generation for s in spans],
            [int(s.first) for s in spans],
            [int(s.last) for s in spans],
        )
        gap = round(float(gap_seconds) * _MICROSECONDS)
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                _SPAN_ROWS_SQL.replace("{gate}", THREAD_ALLOWED_SQL + narrow.sql),
                (*keys, *narrow.params),
            ).fetchall()
        return episode_breaks_of(rows, gap)

    def newest_created_at(self, *, where: SearchFilter) -> datetime | None:
        narrow = MESSAGES.narrow(where)
        sql = (
            "SELECT max((SELECT m.created_at FROM messages m WHERE m.thread_id = t.id "
            f"ORDER BY m.seq DESC LIMIT 1)) FROM threads t WHERE {THREAD_ALLOWED_SQL}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            row = conn.execute(sql, narrow.params).fetchone()
        return None if row is None or row[0] is None else utc(row[0])

    def search_heads(
        self, ids: Sequence[str], *, lead: int, where: SearchFilter
    ) -> dict[str, SearchRow]:
        if not ids:
            return {}
        narrow = MESSAGES.narrow(where)
        sql = (
            "SELECT m.uid, t.channel, m.role, left(m.content, %s), m.content_hash, m.created_at, "
            f"g.uid, m.seq FROM {MESSAGES.keys_from} "
            f"JOIN generations g ON g.id = m.generation_id WHERE {MESSAGES.rule}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                sql, (max(0, int(lead)), *MESSAGES.keys(ids), *narrow.params)
            ).fetchall()
        return search_rows_by_id(rows, utc)

    def adjacent_rows(
        self, ids: Sequence[str], radius: int, *, where: SearchFilter
    ) -> dict[str, tuple[SearchRow, ...]]:
        if not ids:
            return {}
        narrow = MESSAGES.narrow(where)
        sql = _ADJACENT_SQL.replace("{narrow}", narrow.sql)
        span = max(0, int(radius))
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                sql, (*MESSAGES.keys(ids), span, span, *narrow.params)
            ).fetchall()
        return adjacent_rows_of(rows, utc)
