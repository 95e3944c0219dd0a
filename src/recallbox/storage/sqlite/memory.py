"""Memory entries of the SQLite backend (migration 5): rows keyed by their key, never deleted.

* ``memory_key_counters`` keeps, per type, the highest key number ever issued: an insert
  raises it, nothing lowers it, so a key is never reused.
* An update rewrites ``content_seg`` only when the indexed text changed; the FTS5 trigger
  fires only on a changed value (``schema.MEMORY_ENTRIES_FTS``), so decay, ``touch`` and state
  edits leave the index alone.
* Every read that serves an agent applies the corpus rule
  (:data:`~recallbox.storage.sqlite.corpora.MEMORY_ENTRIES`: no exclusion of ``MEMORY.md``,
  stored or per call); :meth:`MemoryMixin.memory_entries` and :meth:`MemoryMixin.memory_entry`
  are the audit reads of person-facing verbs.
* Drills for decay are read from the hit-log above a stored watermark
  (``hit_log_watermarks``, consumer ``decay``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

import apsw

from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MEMORY_ENTRIES
from recallbox.storage.sqlite.rows import now
from recallbox.storage.values import MemoryDrill, MemoryRow, MemoryWrite
from recallbox.text.cjk import segment
from recallbox.types import MemoryEntry

#: The hit-log consumer name of ``decay``'s watermark.
DECAY_CONSUMER = "decay"
_ENTRY_COLUMNS = (
    "me.key, me.type, me.title, me.body, me.state, me.created, me.last_referenced, "
    "me.state_since, me.ref_count, me.evergreen, me.superseded_by"
)


def _day(value: Any) -> date | None:
    return date.fromisoformat(str(value)) if value is not None else None


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value is not None else None


def _entry(r: Sequence[Any]) -> MemoryEntry:
    return MemoryEntry(
        key=str(r[0]),
        type=str(r[1]),
        title=str(r[2]) if r[2] is not None else None,
        body=str(r[3]),
        state=str(r[4]),
        created=_day(r[5]),
        last_referenced=_day(r[6]),
        state_since=_day(r[7]),
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
        _iso(e.state_since),
        _iso(e.created),
        _iso(e.last_referenced),
        e.ref_count,
        int(e.evergreen),
        e.superseded_by,
    )


def _raise_counter(conn: apsw.Connection, memory_type: str, number: int) -> None:
    conn.execute(
        "INSERT INTO memory_key_counters (type, highest) VALUES (?, ?) ON CONFLICT (type) "
        "DO UPDATE SET highest = max(highest, excluded.highest)",
        (memory_type, number),
    )


class MemoryMixin:
    """:class:`~recallbox.storage.base.MemoryStore` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- audit reads -----------------------------------------------------------------------
    def memory_entries(self) -> list[MemoryEntry]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me ORDER BY me.id"
            ).fetchall()
        return [_entry(r) for r in rows]

    def memory_entry(self, key: str) -> MemoryEntry | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me WHERE me.key = ?", (key,)
            ).fetchone()
        return _entry(row) if row else None

    def memory_entries_with_identity(self, identity_hash: str) -> list[MemoryEntry]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM memory_entries me WHERE me.identity_hash = ? "
                "AND me.superseded_by IS NULL ORDER BY me.id",
                (identity_hash,),
            ).fetchall()
        return [_entry(r) for r in rows]

    def highest_memory_number(self, memory_type: str) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT highest FROM memory_key_counters WHERE type = ?", (memory_type,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------
    def create_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        stamp = now()
        with self.pool.transaction() as conn:
            for write in writes:
                key = write.entry.key
                if conn.execute("SELECT 1 FROM memory_entries WHERE key = ?", (key,)).fetchone():
                    raise InvalidArgument(f"memory key {key} exists already")
                conn.execute(
                    "INSERT INTO memory_entries (key, type, number, title, body, content, "
                    "content_hash, identity_hash, state, state_since, created, last_referenced, "
                    "ref_count, evergreen, superseded_by, content_seg, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (key, *_values(write), segment(write.content), stamp),
                )
                _raise_counter(conn, write.entry.type, write.number)

    def update_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        stamp = now()
        with self.pool.transaction() as conn:
            for write in writes:
                key = write.entry.key
                found = conn.execute(
                    "SELECT content_hash FROM memory_entries WHERE key = ?", (key,)
                ).fetchone()
                if found is None:
                    raise NotFound(f"unknown memory key {key!r}")
                seg = segment(write.content) if found[0] != write.content_hash else None
                conn.execute(
                    "UPDATE memory_entries SET type = ?, number = ?, title = ?, body = ?, "
                    "content = ?, content_hash = ?, identity_hash = ?, state = ?, "
                    "state_since = ?, created = ?, last_referenced = ?, ref_count = ?, "
                    "evergreen = ?, superseded_by = ?, content_seg = coalesce(?, content_seg), "
                    "updated_at = ? WHERE key = ?",
                    (*_values(write), seg, stamp, key),
                )

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
            rows: list[Any] = conn.execute(sql, narrow.params).fetchall()
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
            rows: list[Any] = conn.execute(sql, (c.keys(keys), *narrow.params)).fetchall()
        return {str(r[0]): _row(r) for r in rows}

    # -- decay's view of the hit-log ---------------------------------------------------------
    def memory_drills(self, *, after: int) -> list[MemoryDrill]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT h.id, h.target_id, h.at FROM hit_log h "
                "WHERE h.drilled = 1 AND h.id > ? "
                "AND EXISTS (SELECT 1 FROM memory_entries me WHERE me.key = h.target_id) "
                "ORDER BY h.id",
                (after,),
            ).fetchall()
        return [MemoryDrill(int(r[0]), str(r[1]), datetime.fromisoformat(str(r[2]))) for r in rows]

    def decay_watermark(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT upto FROM hit_log_watermarks WHERE consumer = ?", (DECAY_CONSUMER,)
            ).fetchone()
        return int(row[0]) if row else 0

    def set_decay_watermark(self, hit_id: int) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "INSERT INTO hit_log_watermarks (consumer, upto, updated_at) VALUES (?, ?, ?) "
                "ON CONFLICT (consumer) DO UPDATE SET upto = excluded.upto, "
                "updated_at = excluded.updated_at",
                (DECAY_CONSUMER, hit_id, now()),
            )
