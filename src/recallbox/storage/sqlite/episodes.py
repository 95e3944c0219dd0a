"""The SQLite side of :class:`~recallbox.storage.base.EpisodeReads` (#21), a store mixin.

* :meth:`EpisodeMixin.episode_breaks` — a range of one generation's messages (an index range
  scan of ``messages_by_generation``) reduced in SQL to where episodes start (``LAG`` over the
  range: only the rows that start an episode, and the range's last row, come back);
* :meth:`EpisodeMixin.newest_created_at` — the ``created_at`` of the last message (by ``seq``,
  an index lookup) of each thread the filter lets through, the newest of them;
* :meth:`EpisodeMixin.adjacent_rows` — the visible messages around given ones, one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.visibility import MESSAGE_VISIBLE_SQL, THREAD_ALLOWED_SQL
from recallbox.storage.values import EpisodeBreaks, GenerationSpan, SearchRow

if TYPE_CHECKING:
    from recallbox.storage.sqlite.connection import ConnectionPool

#: Seconds from a ``julianday`` difference.
_DAY_SECONDS = 86400.0

_BREAKS_SQL = (
    "SELECT seq, gap FROM (SELECT m.seq AS seq, "
    "(julianday(m.created_at) - julianday(LAG(m.created_at) OVER (ORDER BY m.seq))) "
    f"* {_DAY_SECONDS} AS gap, row_number() OVER (ORDER BY m.seq DESC) AS from_end "
    "FROM generations g JOIN threads t ON t.id = g.thread_id "
    "JOIN messages m ON m.generation_id = g.id "
    "WHERE g.uid = ? AND m.seq BETWEEN ? AND ? AND {gate}) "
    "WHERE gap IS NULL OR abs(gap) > ? OR from_end = 1 ORDER BY seq"
)

_HIT_VISIBLE_SQL = MESSAGE_VISIBLE_SQL.replace("m.", "h.")
_ADJACENT_SQL = (
    "SELECT h.uid, m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, g.uid, "
    "m.seq FROM json_each(?) AS j JOIN messages h ON h.uid = j.value "
    "JOIN threads t ON t.id = h.thread_id "
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
        narrow = MESSAGES.narrow(where)
        sql = _BREAKS_SQL.format(gate=THREAD_ALLOWED_SQL + narrow.sql)
        out: dict[str, EpisodeBreaks] = {}
        gap = float(gap_seconds)
        with self.pool.reading() as conn:
            for span in spans:
                params = (span.generation, int(span.first), int(span.last), *narrow.params, gap)
                rows: list[Any] = conn.execute(sql, params).fetchall()
                if not rows:
                    continue
                starts = tuple(
                    int(r[0]) for r in rows if r[1] is None or abs(float(r[1])) > gap
                )
                found = out.get(span.generation)
                if found is not None:  # two spans of one generation: merge them
                    starts = tuple(sorted({*found.starts, *starts}))
                    first, last = min(found.first, int(rows[0][0])), max(found.last, int(rows[-1][0]))
                else:
                    first, last = int(rows[0][0]), int(rows[-1][0])
                out[span.generation] = EpisodeBreaks(first, last, starts)
        return out

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

    def adjacent_rows(
        self, ids: Sequence[str], radius: int, *, where: SearchFilter
    ) -> dict[str, tuple[SearchRow, ...]]:
        if not ids:
            return {}
        narrow = MESSAGES.narrow(where)
        sql = _ADJACENT_SQL.format(narrow=narrow.sql)
        span = max(0, int(radius))
        out: dict[str, list[SearchRow]] = {}
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                sql, (MESSAGES.keys(ids), span, span, *narrow.params)
            ).fetchall()
        for r in rows:
            found = out.setdefault(str(r[0]), [])
            if r[1] is None:  # visible, with no visible message that close
                continue
            found.append(
                SearchRow(
                    id=str(r[1]),
                    channel=str(r[2]),
                    role=str(r[3]),
                    content=str(r[4]),
                    content_hash=str(r[5]),
                    created_at=datetime.fromisoformat(str(r[6])),
                    generation=str(r[7]),
                    seq=int(r[8]),
                )
            )
        return {key: tuple(value) for key, value in out.items()}
