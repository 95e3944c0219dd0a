"""The SQLite side of :class:`~recallbox.storage.base.EpisodeReads` (#21), a store mixin.

* :meth:`EpisodeMixin.episode_breaks` — the ``(seq, created_at)`` of the spans' messages in one
  statement (a range scan of the covering index ``messages_by_generation`` per span; migration
  13 put ``created_at`` in it), cut where the gap to the previous message exceeds the gap;
* :meth:`EpisodeMixin.search_heads` — the candidates' rows without their whole texts (the
  first characters only; ``content_hash`` and ``created_at`` from the covering index);
* :meth:`EpisodeMixin.newest_created_at` — the ``created_at`` of the last message (by ``seq``,
  an index lookup) of each thread the filter lets through, the newest of them;
* :meth:`EpisodeMixin.adjacent_rows` — the visible messages around given ones, one statement.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recallbox.storage.queries import SearchFilter
from recallbox.storage.row_maps import (
    adjacent_rows_of,
    episode_breaks_of,
    iso_when,
    search_rows_by_id,
)
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.visibility import MESSAGE_VISIBLE_SQL, THREAD_ALLOWED_SQL
from recallbox.storage.values import EpisodeBreaks, GenerationSpan, SearchRow

if TYPE_CHECKING:
    from recallbox.storage.sqlite.connection import ConnectionPool

#: Microseconds in a second.
_MICROSECONDS = 1_000_000
#: ``created_at`` as integer microseconds (``rows.format_time`` writes UTC with six fraction
#: digits): exact, as the pure reference compares datetimes.
_MICROS_SQL = "unixepoch(m.created_at) * 1000000 + CAST(substr(m.created_at, 21, 6) AS INTEGER)"

# every message of the spans, in index order: one statement for all spans (a search's spans
# are many at scale); the gaps are cut in Python, cheaper here than a window function
_SPAN_ROWS_SQL = (
    f"SELECT s.key, g.uid, m.seq, {_MICROS_SQL} FROM json_each(?) AS s "
    "CROSS JOIN generations g ON g.uid = s.value ->> 0 "
    "CROSS JOIN threads t ON t.id = g.thread_id "
    "CROSS JOIN messages m ON m.generation_id = g.id "
    "AND m.seq BETWEEN s.value ->> 1 AND s.value ->> 2 "
    "WHERE {gate} ORDER BY s.key, m.seq"
)


# a candidate's head: the columns before ``content`` from the row, ``content_hash`` and
# ``created_at`` from the covering generation index (migration 13), never the whole text
_HEADS_SQL = (
    "SELECT m.uid, t.channel, m.role, substr(m.content, 1, ?), x.content_hash, x.created_at, "
    f"g.uid, m.seq FROM {MESSAGES.keys_from} "
    "JOIN generations g ON g.id = m.generation_id "
    "JOIN messages x INDEXED BY messages_by_generation "
    "ON x.generation_id = m.generation_id AND x.seq = m.seq "
    f"WHERE {MESSAGES.rule}{{narrow}}"
)

_HIT_VISIBLE_SQL = MESSAGE_VISIBLE_SQL.replace("m.", "h.")
_ADJACENT_SQL = (
    "SELECT h.uid, m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, g.uid, "
    "m.seq FROM json_each(?) AS j CROSS JOIN messages h ON h.uid = j.value "
    "CROSS JOIN threads t ON t.id = h.thread_id "
    "LEFT JOIN messages m ON m.generation_id = h.generation_id "
    f"AND m.seq BETWEEN h.seq - ? AND h.seq + ? AND m.id != h.id AND {MESSAGE_VISIBLE_SQL} "
    "LEFT JOIN generations g ON g.id = m.generation_id "
    f"WHERE {_HIT_VISIBLE_SQL} AND {THREAD_ALLOWED_SQL}{{narrow}} ORDER BY h.uid, m.seq"
)


class EpisodeMixin:
    """Episode breaks, the newest time and adjacent rows for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def episode_breaks(
        self, spans: Sequence[GenerationSpan], *, gap_seconds: float, where: SearchFilter
    ) -> dict[str, EpisodeBreaks]:
        if not spans:
            return {}
        narrow = MESSAGES.narrow(where)
        keys = json.dumps([[s.generation, int(s.first), int(s.last)] for s in spans])
        gap = round(float(gap_seconds) * _MICROSECONDS)
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                _SPAN_ROWS_SQL.format(gate=THREAD_ALLOWED_SQL + narrow.sql),
                (keys, *narrow.params),
            ).fetchall()
        return episode_breaks_of(rows, gap)

    def newest_created_at(self, *, where: SearchFilter) -> datetime | None:
        # each thread's last message by seq (an index lookup), not threads.last_activity:
        # that also moves with the wall-clock time of appends
        narrow = MESSAGES.narrow(where)
        sql = (
            "SELECT max((SELECT m.created_at FROM messages m WHERE m.thread_id = t.id "
            f"ORDER BY m.seq DESC LIMIT 1)) FROM threads t WHERE {THREAD_ALLOWED_SQL}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            row = conn.execute(sql, narrow.params).fetchone()
        return None if row is None or row[0] is None else datetime.fromisoformat(str(row[0]))

    def search_heads(
        self, ids: Sequence[str], *, lead: int, where: SearchFilter
    ) -> dict[str, SearchRow]:
        narrow = MESSAGES.narrow(where)
        if not ids:
            return {}
        sql = _HEADS_SQL.format(narrow=narrow.sql)
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                sql, (max(0, int(lead)), MESSAGES.keys(ids), *narrow.params)
            ).fetchall()
        return search_rows_by_id(rows, iso_when)

    def adjacent_rows(
        self, ids: Sequence[str], radius: int, *, where: SearchFilter
    ) -> dict[str, tuple[SearchRow, ...]]:
        if not ids:
            return {}
        narrow = MESSAGES.narrow(where)
        sql = _ADJACENT_SQL.format(narrow=narrow.sql)
        span = max(0, int(radius))
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                sql, (MESSAGES.keys(ids), span, span, *narrow.params)
            ).fetchall()
        return adjacent_rows_of(rows, iso_when)
