"""The hit-log on SQLite (DESIGN §5): hit and drill rows, the dropped count, the watermarks.

Rows are appended by :meth:`HitLogMixin.append_hit_rows` on the pool's side connection, which
never waits for the write lock unless asked to (``ConnectionPool.write_nowait``): a read that
records a drill never queues behind a long import. Rotation runs in the same transaction and
deletes only the oldest rows beyond the newest ``keep_rows`` that every consumer's watermark has
passed (a consumer that never ran holds everything back).
"""

from __future__ import annotations

from collections.abc import Sequence

import apsw

from recallbox.inventory_types import DayHits
from recallbox.recall_types import HitStats, NeverRecalled
from recallbox.storage.row_maps import column_int, hit_stats_of, rotation_bound
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import CORPORA
from recallbox.storage.sqlite.rows import format_time, now
from recallbox.storage.values import HitRow

#: The consumers whose watermarks rotation waits for (DESIGN §5).
HIT_LOG_CONSUMERS: tuple[str, ...] = ("decay", "embed")
#: Per domain: hits, drills and distinct targets.
DOMAIN_SQL = (
    "SELECT domain, sum(drilled = 0), sum(drilled), count(DISTINCT target_id) "
    "FROM hit_log GROUP BY domain ORDER BY domain"
)
#: The most recalled targets (hits, then drills), ``LIMIT`` bound.
MOST_SQL = (
    "SELECT domain, target_id, sum(drilled = 0) AS hits, sum(drilled) "
    "FROM hit_log GROUP BY domain, target_id HAVING hits > 0 "
    "ORDER BY hits DESC, domain, target_id LIMIT ?"
)
DROPPED_KEY = "dropped"
NEVER_RECALLED_EXAMPLES = 5

_INSERT = (
    "INSERT INTO hit_log (at, query, domain, layer, target_id, drilled, verb, event) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


def _marks(conn: apsw.Connection) -> dict[str, int]:
    return {
        str(c): column_int(u)
        for c, u in conn.execute("SELECT consumer, upto FROM hit_log_watermarks")
    }


def _consumed(conn: apsw.Connection) -> int:
    """The position every consumer has read up to (0 when one never ran)."""
    marks = _marks(conn)
    return min((marks.get(c, 0) for c in HIT_LOG_CONSUMERS), default=0)


def _rotate(conn: apsw.Connection, keep_rows: int) -> int:
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM hit_log").fetchone()
    limit = min(_consumed(conn), int(newest[0] if newest else 0) - keep_rows)
    if limit <= 0:
        return 0
    deleted = conn.execute("DELETE FROM hit_log WHERE id <= ? RETURNING 1", (limit,)).fetchall()
    return len(deleted)


class HitLogMixin:
    """:class:`~recallbox.storage.base.HitLog` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def record_drill(self, target_id: str, *, domain: str = "sessions") -> None:
        with self.pool.transaction() as conn:
            conn.execute(_INSERT, (now(), None, domain, None, target_id, 1, "drill", None))

    def record_hits(
        self, query: str, *, domain: str, layer: str, target_ids: Sequence[str]
    ) -> None:
        if not target_ids:
            return
        stamp = now()
        with self.pool.transaction() as conn:
            conn.executemany(
                _INSERT, [(stamp, query, domain, layer, t, 0, None, None) for t in target_ids]
            )

    def append_hit_rows(
        self,
        rows: Sequence[HitRow],
        *,
        dropped: int = 0,
        keep_rows: int | None = None,
        wait_s: float = 0.0,
    ) -> bool:
        values = [
            (
                format_time(r.at),
                r.query,
                r.domain,
                r.layer,
                r.target_id,
                int(r.drilled),
                r.verb,
                r.event,
            )
            for r in rows
        ]

        def work(conn: apsw.Connection) -> None:
            if values:
                conn.executemany(_INSERT, values)
            if dropped:
                conn.execute(
                    "INSERT INTO hit_log_state (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = value + excluded.value",
                    (DROPPED_KEY, dropped),
                )
            if keep_rows is not None:
                _rotate(conn, keep_rows)

        return self.pool.write_nowait(work, wait_s=wait_s)

    def hit_recorded(self, domain: str, target_id: str) -> bool:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM hit_log WHERE domain = ? AND target_id = ? AND drilled = 0 LIMIT 1",
                (domain, target_id),
            ).fetchone()
        return row is not None

    def hit_high_water(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute("SELECT coalesce(max(id), 0) FROM hit_log").fetchone()
        return int(row[0]) if row else 0

    def hit_watermark(self, consumer: str) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT upto FROM hit_log_watermarks WHERE consumer = ?", (consumer,)
            ).fetchone()
        return int(row[0]) if row else 0

    def advance_hit_watermark(self, consumer: str, upto: int) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "INSERT INTO hit_log_watermarks (consumer, upto, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (consumer) DO UPDATE SET upto = max(upto, excluded.upto), "
                "updated_at = excluded.updated_at",
                (consumer, int(upto), now()),
            )

    def hit_days(self, *, since: str, until: str) -> list[DayHits]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT substr(at, 1, 10) AS day, domain, coalesce(sum(drilled = 0), 0), "
                "coalesce(sum(drilled), 0) FROM hit_log WHERE at >= ? AND at < ? "
                "GROUP BY day, domain ORDER BY day, domain",
                (since, until),
            ).fetchall()
        return [DayHits(str(d), str(m), column_int(h), column_int(r)) for d, m, h, r in rows]

    def hit_stats(self, *, top: int, max_rows: int, never_limit: int | None = None) -> HitStats:
        with self.pool.snapshot() as conn:
            counts = conn.execute(
                "SELECT count(*), coalesce(sum(drilled = 0), 0), coalesce(sum(drilled), 0), "
                "coalesce(max(id), 0) FROM hit_log"
            ).fetchone()
            assert counts is not None
            newest = int(counts[3])
            dropped_row = conn.execute(
                "SELECT value FROM hit_log_state WHERE key = ?", (DROPPED_KEY,)
            ).fetchone()
            domains = conn.execute(DOMAIN_SQL).fetchall()
            most = conn.execute(MOST_SQL, (top,)).fetchall()
            never = _never_recalled(conn, never_limit)
            marks = _marks(conn)
            bound = rotation_bound(marks, HIT_LOG_CONSUMERS, newest, max_rows)
            below = conn.execute("SELECT count(*) FROM hit_log WHERE id <= ?", (bound,)).fetchone()
        return hit_stats_of(
            counts,
            dropped=int(dropped_row[0]) if dropped_row else 0,
            domains=domains,
            most=most,
            never=never,
            marks=marks,
            rotatable=int(below[0]) if below else 0,
            max_rows=max_rows,
        )


def _never_recalled(conn: apsw.Connection, limit: int | None) -> list[NeverRecalled]:
    """Per corpus: the visible rows no hit row names (counted up to ``limit`` when given),
    with the oldest few ids."""
    out = []
    for corpus in CORPORA.values():
        condition = (
            f"{corpus.rule} AND NOT EXISTS (SELECT 1 FROM hit_log h "
            f"WHERE h.target_id = {corpus.public_id} AND h.drilled = 0)"
        )
        matching = f"SELECT 1 FROM {corpus.rows_from} WHERE {condition}"
        if limit is None:
            count = conn.execute(
                f"SELECT count(*) FROM {corpus.rows_from} WHERE {condition}"
            ).fetchone()
        else:
            count = conn.execute(
                f"SELECT count(*) FROM ({matching} LIMIT ?)", (max(0, limit),)
            ).fetchone()
        examples = conn.execute(
            f"SELECT {corpus.public_id} FROM {corpus.rows_from} WHERE {condition} "
            f"ORDER BY {corpus.alias}.id LIMIT ?",
            (NEVER_RECALLED_EXAMPLES,),
        ).fetchall()
        counted = int(count[0]) if count else 0
        out.append(
            NeverRecalled(
                corpus.name,
                counted,
                tuple(str(r[0]) for r in examples),
                capped=limit is not None and counted >= limit,
            )
        )
    return out
