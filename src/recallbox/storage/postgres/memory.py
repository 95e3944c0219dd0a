"""Memory entries of the PostgreSQL backend (migration 5): rows keyed by their key, never deleted
— the SQLite twin's rules (``storage/sqlite/memory.py``).

``remember`` reads the entries with the same text and the highest key number, then writes, in
one transaction: those reads take the memory keys' advisory lock inside a write transaction,
so two processes remembering at once take turns (never the same key, never a duplicate entry).
An update rewrites the keyword document only when the indexed text changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.codecs import storable
from recallbox.storage.postgres.connection import Connection, PgPool, lock_resource
from recallbox.storage.postgres.corpora import MEMORY_ENTRIES
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import utc
from recallbox.storage.postgres.schema import MEMORY_KEYWORDS
from recallbox.storage.queries import SearchFilter
from recallbox.storage.values import MemoryDrill, MemoryRow, MemoryWrite
from recallbox.types import MemoryEntry

#: The hit-log consumer name of ``decay``'s watermark.
DECAY_CONSUMER = "decay"
_ENTRY_COLUMNS = (
    "me.key, me.type, me.title, me.body, me.state, me.created, me.last_referenced, "
    "me.state_since, me.ref_count, me.evergreen, me.superseded_by"
)
_VALUE_COLUMNS = (
    "type, number, title, body, content, content_hash, identity_hash, state, state_since, "
    "created, last_referenced, ref_count, evergreen, superseded_by"
)


def _entry(r: Sequence[Any]) -> MemoryEntry:
    return MemoryEntry(
        key=str(r[0]),
        type=str(r[1]),
        title=str(r[2]) if r[2] is not None else None,
        body=str(r[3]),
        state=str(r[4]),
        created=r[5],
        last_referenced=r[6],
        state_since=r[7],
        ref_count=int(r[8]),
        evergreen=bool(r[9]),
        superseded_by=str(r[10]) if r[10] is not None else None,
    )


def _row(r: Sequence[Any]) -> MemoryRow:
    return MemoryRow(_entry(r), content=str(r[11]), content_hash=str(r[12]))


def _values(write: MemoryWrite) -> tuple[object, ...]:
    e = write.entry
    return (
        e.type,
        write.number,
        e.title,
        e.body,
        write.content,
        write.content_hash,
        write.identity_hash,
        e.state,
        e.state_since,
        e.created,
        e.last_referenced,
        e.ref_count,
        bool(e.evergreen),
        e.superseded_by,
    )


def _lock_keys(conn: Connection) -> None:
    lock_resource(conn, "memory keys")


class MemoryMixin:
    """:class:`~recallbox.storage.base.MemoryStore` for :class:`PostgresStore`."""

    pool: PgPool

    # -- audit reads -----------------------------------------------------------------------
    def memory_entries(self) -> list[MemoryEntry]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me ORDER BY me.id"
            ).fetchall()
        return [_entry(r) for r in rows]

    def memory_entry(self, key: str) -> MemoryEntry | None:
        if not storable(key):
            return None
        with self.pool.reading() as conn:
            if self.pool.in_write():
                _lock_keys(conn)
            row = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me WHERE me.key = %s", (key,)
            ).fetchone()
        return _entry(row) if row else None

    def memory_entries_with_identity(self, identity_hash: str) -> list[MemoryEntry]:
        with self.pool.reading() as conn:
            if self.pool.in_write():
                _lock_keys(conn)
            rows = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me WHERE me.identity_hash = %s "
                "AND me.superseded_by IS NULL ORDER BY me.id",
                (identity_hash,),
            ).fetchall()
        return [_entry(r) for r in rows]

    def highest_memory_number(self, memory_type: str) -> int:
        with self.pool.reading() as conn:
            if self.pool.in_write():
                _lock_keys(conn)
            row = conn.execute(
                "SELECT highest FROM memory_key_counters WHERE type = %s", (memory_type,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------
    def create_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        stamp = datetime.now(UTC)
        with self.pool.transaction() as conn:
            _lock_keys(conn)
            for write in writes:
                key = write.entry.key
                if conn.execute("SELECT 1 FROM memory_entries WHERE key = %s", (key,)).fetchone():
                    raise InvalidArgument(f"memory key {key} exists already")
                doc = document_of(write.content)
                row = conn.execute(
                    f"INSERT INTO memory_entries (key, {_VALUE_COLUMNS}, updated_at, fts, fts_len) "
                    f"VALUES (%s, {', '.join(['%s'] * 14)}, %s, {FTS_MARKS}) RETURNING id",
                    (key, *_values(write), stamp, doc.tsvector, doc.length),
                ).fetchone()
                assert row is not None
                put_overflow(conn, MEMORY_KEYWORDS, [(int(row[0]), 0, doc)])
                conn.execute(
                    "INSERT INTO memory_key_counters (type, highest) VALUES (%s, %s) "
                    "ON CONFLICT (type) DO UPDATE SET highest = greatest("
                    "memory_key_counters.highest, excluded.highest)",
                    (write.entry.type, write.number),
                )

    def update_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        stamp = datetime.now(UTC)
        with self.pool.transaction() as conn:
            for write in writes:
                key = write.entry.key
                found = conn.execute(
                    "SELECT id, content_hash FROM memory_entries WHERE key = %s FOR UPDATE", (key,)
                ).fetchone()
                if found is None:
                    raise NotFound(f"unknown memory key {key!r}")
                assignments = ", ".join(f"{name} = %s" for name in _VALUE_COLUMNS.split(", "))
                conn.execute(
                    f"UPDATE memory_entries SET {assignments}, updated_at = %s WHERE id = %s",
                    (*_values(write), stamp, found[0]),
                )
                if found[1] != write.content_hash:
                    doc = document_of(write.content)
                    conn.execute(
                        f"UPDATE memory_entries SET (fts, fts_len) = ({FTS_MARKS}) WHERE id = %s",
                        (doc.tsvector, doc.length, found[0]),
                    )
                    put_overflow(conn, MEMORY_KEYWORDS, [(int(found[0]), 0, doc)], replace=True)

    # -- agent-facing reads (the corpus rule applies) ----------------------------------------
    def memory_allowed(self, *, where: SearchFilter) -> bool:
        c = MEMORY_ENTRIES
        narrow = c.narrow(where)
        with self.pool.reading() as conn:
            row = conn.execute(f"SELECT {c.gate}{narrow.sql}", narrow.params).fetchone()
        return bool(row and row[0])

    def visible_memory(self, *, where: SearchFilter) -> list[MemoryRow]:
        c = MEMORY_ENTRIES
        narrow = c.narrow(where)
        sql = (
            f"SELECT {_ENTRY_COLUMNS}, me.content, me.content_hash FROM {c.rows_from} "
            f"WHERE {c.rule}{narrow.sql} ORDER BY me.id"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, narrow.params).fetchall()
        return [_row(r) for r in rows]

    def memory_rows(self, keys: Sequence[str], *, where: SearchFilter) -> dict[str, MemoryRow]:
        c = MEMORY_ENTRIES
        narrow = c.narrow(where)
        if not keys:
            return {}
        sql = (
            f"SELECT {_ENTRY_COLUMNS}, me.content, me.content_hash FROM {c.keys_from} "
            f"WHERE {c.rule}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (*c.keys(keys), *narrow.params)).fetchall()
        return {str(r[0]): _row(r) for r in rows}

    # -- decay's view of the hit-log ---------------------------------------------------------
    def memory_drills(self, *, after: int) -> list[MemoryDrill]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT h.id, h.target_id, h.at FROM hit_log h WHERE h.drilled AND h.id > %s "
                "AND EXISTS (SELECT 1 FROM memory_entries me WHERE me.key = h.target_id) "
                "ORDER BY h.id",
                (after,),
            ).fetchall()
        return [MemoryDrill(int(r[0]), str(r[1]), utc(r[2])) for r in rows]

    def decay_watermark(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT upto FROM hit_log_watermarks WHERE consumer = %s", (DECAY_CONSUMER,)
            ).fetchone()
        return int(row[0]) if row else 0

    def set_decay_watermark(self, hit_id: int) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "INSERT INTO hit_log_watermarks (consumer, upto, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (consumer) DO UPDATE SET upto = excluded.upto, "
                "updated_at = excluded.updated_at",
                (DECAY_CONSUMER, hit_id, datetime.now(UTC)),
            )
