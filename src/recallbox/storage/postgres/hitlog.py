"""The hit-log on PostgreSQL (DESIGN §5): hit and drill rows, the dropped count, the watermarks.

The SQLite twin's rules (``storage/sqlite/hitlog.py``). :meth:`HitLogMixin.append_hit_rows`
writes on a connection of its own that waits at most ``wait_s`` for a lock
(``PgPool.write_nowait``), so a read that records a drill never queues behind a long write.
Rotation runs in the same transaction and deletes only rows every consumer's watermark has
passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from recallbox.inventory_types import DayHits
from recallbox.recall_types import HitStats, NeverRecalled
from recallbox.storage.codecs import storable
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import CORPORA
from recallbox.storage.row_maps import column_int, hit_stats_of, rotation_bound
from recallbox.storage.values import HitRow

#: The consumers whose watermarks rotation waits for (DESIGN §5).
HIT_LOG_CONSUMERS: tuple[str, ...] = ("decay", "embed")
#: Per domain: hits, drills and distinct targets.
DOMAIN_SQL = (
    "SELECT domain, count(*) FILTER (WHERE NOT drilled), "
    "count(*) FILTER (WHERE drilled), count(DISTINCT target_id) "
    "FROM hit_log GROUP BY domain ORDER BY domain"
)
#: The most recalled targets (hits, then drills), ``LIMIT`` bound.
MOST_SQL = (
    "SELECT domain, target_id, count(*) FILTER (WHERE NOT drilled) AS hits, "
    "count(*) FILTER (WHERE drilled) FROM hit_log GROUP BY domain, target_id "
    "HAVING count(*) FILTER (WHERE NOT drilled) > 0 "
    "ORDER BY hits DESC, domain, target_id LIMIT %s"
)
DROPPED_KEY = "dropped"
NEVER_RECALLED_EXAMPLES = 5

_INSERT = (
    "INSERT INTO hit_log (at, query, domain, layer, target_id, drilled, verb, event) "
    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
)
#: A hit row's UTC day, ``YYYY-MM-DD``.
_DAY_SQL = "to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"


def _marks(conn: Connection) -> dict[str, int]:
    rows = conn.execute("SELECT consumer, upto FROM hit_log_watermarks").fetchall()
    return {str(c): column_int(u) for c, u in rows}


def _consumed(conn: Connection) -> int:
    marks = _marks(conn)
    return min((marks.get(c, 0) for c in HIT_LOG_CONSUMERS), default=0)


def _rotate(conn: Connection, keep_rows: int) -> int:
    newest = conn.execute("SELECT coalesce(max(id), 0) FROM hit_log").fetchone()
    limit = min(_consumed(conn), int(newest[0] if newest else 0) - keep_rows)
    if limit <= 0:
        return 0
    deleted = conn.execute("DELETE FROM hit_log WHERE id <= %s RETURNING 1", (limit,)).fetchall()
    return len(deleted)


def _storable_row(row: HitRow) -> bool:
    texts = (row.domain, row.target_id, row.query, row.layer, row.verb, row.event)
    return all(t is None or storable(t) for t in texts)


class HitLogMixin:
    """:class:`~recallbox.storage.base.HitLog` for :class:`PostgresStore`."""

    pool: PgPool

    def record_drill(self, target_id: str, *, domain: str = "sessions") -> None:
        if not storable(target_id):
            return
        with self.pool.transaction() as conn:
            conn.execute(
                _INSERT, (datetime.now(UTC), None, domain, None, target_id, True, "drill", None)
            )

    def record_hits(
        self, query: str, *, domain: str, layer: str, target_ids: Sequence[str]
    ) -> None:
        if not target_ids or not storable(query):
            return
        stamp = datetime.now(UTC)
        with self.pool.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                _INSERT, [(stamp, query, domain, layer, t, False, None, None) for t in target_ids]
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
            (r.at, r.query, r.domain, r.layer, r.target_id, r.drilled, r.verb, r.event)
            for r in rows
            if _storable_row(r)
        ]

        def work(conn: Connection) -> None:
            if values:
                with conn.cursor() as cur:
                    cur.executemany(_INSERT, values)
            if dropped:
                conn.execute(
                    "INSERT INTO hit_log_state (key, value) VALUES (%s, %s) ON CONFLICT (key) "
                    "DO UPDATE SET value = hit_log_state.value + excluded.value",
                    (DROPPED_KEY, dropped),
                )
            if keep_rows is not None:
                _rotate(conn, keep_rows)

        return self.pool.write_nowait(work, wait_s=wait_s)

    def hit_recorded(self, domain: str, target_id: str) -> bool:
        if not storable(target_id):
            return False
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM hit_log WHERE domain = %s AND target_id = %s AND NOT drilled "
                "LIMIT 1",
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
                "SELECT upto FROM hit_log_watermarks WHERE consumer = %s", (consumer,)
            ).fetchone()
        return int(row[0]) if row else 0

    def advance_hit_watermark(self, consumer: str, upto: int) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "INSERT INTO hit_log_watermarks (consumer, upto, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (consumer) DO UPDATE SET upto = greatest(hit_log_watermarks.upto, "
                "excluded.upto), updated_at = excluded.updated_at",
                (consumer, int(upto), datetime.now(UTC)),
            )

    def hit_days(self, *, since: str, until: str) -> list[DayHits]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {_DAY_SQL} AS day, domain, count(*) FILTER (WHERE NOT drilled), "
                f"count(*) FILTER (WHERE drilled) FROM hit_log WHERE {_DAY_SQL} >= %s "
                f"AND {_DAY_SQL} < %s GROUP BY day, domain ORDER BY day, domain",
                (since, until),
            ).fetchall()
        return [DayHits(str(d), str(m), column_int(h), column_int(r)) for d, m, h, r in rows]

    def hit_stats(self, *, top: int, max_rows: int, never_limit: int | None = None) -> HitStats:
        with self.pool.snapshot() as conn:
            counts = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE NOT drilled), "
                "count(*) FILTER (WHERE drilled), coalesce(max(id), 0) FROM hit_log"
            ).fetchone()
            assert counts is not None
            newest = int(counts[3])
            dropped_row = conn.execute(
                "SELECT value FROM hit_log_state WHERE key = %s", (DROPPED_KEY,)
            ).fetchone()
            domains = conn.execute(DOMAIN_SQL).fetchall()
            most = conn.execute(MOST_SQL, (top,)).fetchall()
            never = _never_recalled(conn, never_limit)
            marks = _marks(conn)
            bound = rotation_bound(marks, HIT_LOG_CONSUMERS, newest, max_rows)
            below = conn.execute("SELECT count(*) FROM hit_log WHERE id <= %s", (bound,)).fetchone()
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


def _never_recalled(conn: Connection, limit: int | None) -> list[NeverRecalled]:
    """Per corpus: the visible rows no hit row names (counted up to ``limit`` when given),
    with the oldest few ids."""
    out = []
    for corpus in CORPORA.values():
        condition = (
            f"{corpus.rule} AND NOT EXISTS (SELECT 1 FROM hit_log h "
            f"WHERE h.target_id = {corpus.public_id} AND NOT h.drilled)"
        )
        matching = f"SELECT 1 FROM {corpus.rows_from} WHERE {condition}"
        count: Any
        if limit is None:
            count = conn.execute(f"SELECT count(*) FROM ({matching}) AS r").fetchone()
        else:
            count = conn.execute(
                f"SELECT count(*) FROM ({matching} LIMIT %s) AS r", (max(0, limit),)
            ).fetchone()
        examples = conn.execute(
            f"SELECT {corpus.public_id} FROM {corpus.rows_from} WHERE {condition} "
            f"ORDER BY {corpus.alias}.id LIMIT %s",
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
