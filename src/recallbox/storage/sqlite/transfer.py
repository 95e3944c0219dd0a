"""``StoreTransfer`` for the SQLite backend: its rows as canonical values, and written back
(``recallbox migrate``, #16 item 5; the tables and the copy loop are ``storage/transfer.py``).

Reading maps SQLite's storage to canonical values (0/1 to ``bool``, ISO text to an aware UTC
``datetime`` or a ``date``). Writing keeps every id, maps back, and fills what this backend
derives: ``content_seg`` (the CJK-segmented text the ranked FTS5 indexes read; the FTS5 rows
follow through their triggers) and, after the last write, the literal index (its backlog,
queued by the insert triggers, is drained).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.backlog import BacklogIndexer
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.rows import format_time, stored_seg
from recallbox.storage.transfer import TABLE_BY_NAME, Key, Row, Table
from recallbox.text.cjk import segment

#: The derived ``content_seg`` of the tables whose rows carry one (not a canonical column).
_DERIVED_SEG = {
    "messages": lambda r: stored_seg(r["content"]),
    "transcript_chunks": lambda r: stored_seg(r["content"]),
    "knowledge_sections": lambda r: "" if r["removed"] else segment(r["content"]),
    "memory_entries": lambda r: segment(r["content"]),
}


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    parsed = datetime.fromisoformat(str(value))
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _read(table: Table, row: Sequence[Any]) -> Row:
    out: list[Any] = []
    for name, value in zip(table.all_columns, row, strict=True):
        if value is None:
            out.append(None)
        elif name in table.bools:
            out.append(bool(value))
        elif name in table.times:
            out.append(_time(value))
        elif name in table.dates:
            out.append(date.fromisoformat(str(value)))
        elif isinstance(value, memoryview):
            out.append(bytes(value))
        else:
            out.append(value)
    return tuple(out)


def _stored(table: Table, row: Row) -> tuple[Any, ...]:
    out: list[Any] = []
    for name, value in zip(table.all_columns, row, strict=True):
        if value is None:
            out.append(None)
        elif name in table.bools:
            out.append(int(bool(value)))
        elif name in table.times:
            out.append(format_time(value))
        elif name in table.dates:
            out.append(value.isoformat())
        else:
            out.append(value)
    derive = _DERIVED_SEG.get(table.name)
    if derive is not None:
        out.append(derive(dict(zip(table.all_columns, row, strict=True))))
    return tuple(out)


def _key_sql(table: Table) -> str:
    return ", ".join(table.key)


class TransferMixin:
    """:class:`~recallbox.storage.transfer.StoreTransfer` for :class:`SQLiteStore`."""

    pool: ConnectionPool
    indexer: BacklogIndexer

    def transfer_count(self, table: str) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(f"SELECT count(*) FROM {TABLE_BY_NAME[table].name}").fetchone()
        return int(row[0]) if row else 0

    def transfer_rows(self, table: str, after: Key | None, limit: int) -> list[Row]:
        t = TABLE_BY_NAME[table]
        where = ""
        params: tuple[Any, ...] = ()
        if after is not None:
            marks = ", ".join("?" for _ in t.key)
            where = f" WHERE ({_key_sql(t)}) > ({marks})"
            params = tuple(after)
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(t.all_columns)} FROM {t.name}{where} "
                f"ORDER BY {_key_sql(t)} LIMIT ?",
                (*params, limit),
            ).fetchall()
        return [_read(t, r) for r in rows]

    def transfer_row(self, table: str, key: Key) -> Row | None:
        t = TABLE_BY_NAME[table]
        where = " AND ".join(f"{k} = ?" for k in t.key)
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {', '.join(t.all_columns)} FROM {t.name} WHERE {where}", tuple(key)
            ).fetchone()
        return _read(t, row) if row else None

    def transfer_last_key(self, table: str) -> Key | None:
        t = TABLE_BY_NAME[table]
        order = ", ".join(f"{k} DESC" for k in t.key)
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {_key_sql(t)} FROM {t.name} ORDER BY {order} LIMIT 1"
            ).fetchone()
        return tuple(row) if row else None

    def transfer_write(self, table: str, rows: Sequence[Row]) -> None:
        t = TABLE_BY_NAME[table]
        columns = [*t.all_columns, *(["content_seg"] if t.name in _DERIVED_SEG else [])]
        sql = (
            f"INSERT INTO {t.name} ({', '.join(columns)}) "
            f"VALUES ({', '.join('?' for _ in columns)})"
        )
        with self.pool.transaction() as conn:
            conn.executemany(sql, [_stored(t, r) for r in rows])

    # -- vectors ---------------------------------------------------------------------------
    def _vector_ids(self, space_id: int, after: int, limit: int) -> list[int]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT target_rowid FROM embeddings WHERE space_id = ? AND target_rowid > ? "
                "ORDER BY target_rowid LIMIT ?",
                (space_id, after, limit),
            ).fetchall()
        return [int(r[0]) for r in rows]

    def transfer_vector_count(self, space_id: int) -> int:
        table = vectors.table_name(space_id)
        with self.pool.reading() as conn:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                vectors.load_sqlite_vec(conn)
                row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
                return int(row[0]) if row else 0
        return 0

    def transfer_last_vector(self, space_id: int) -> int:
        table = vectors.table_name(space_id)
        with self.pool.reading() as conn:
            if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone():
                return 0
            vectors.load_sqlite_vec(conn)
            row = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()
        return int(str(row[0])) if row and row[0] is not None else 0

    def transfer_vectors(
        self, space_id: int, after: int, limit: int
    ) -> list[tuple[int, int, list[float]]]:
        table = vectors.table_name(space_id)
        out = []
        with self.pool.reading() as conn:
            vectors.load_sqlite_vec(conn)
            for rowid in self._vector_ids(space_id, after, limit):
                row = conn.execute(
                    f"SELECT thread_id, embedding FROM {table} WHERE rowid = ?", (rowid,)
                ).fetchone()
                if row is not None:
                    blob = bytes(row[1])
                    floats = list(struct.unpack(f"<{len(blob) // 4}f", blob))
                    out.append((rowid, int(row[0]), floats))
        return out

    def transfer_write_vectors(
        self, space_id: int, dim: int, rows: Sequence[tuple[int, int, list[float]]]
    ) -> None:
        table = vectors.table_name(space_id)
        with self.pool.transaction() as conn:  # the copied space keeps its version
            vectors.create_table(conn, space_id, dim)
            for rowid, partition, vector in rows:
                conn.execute(
                    f"INSERT INTO {table} (rowid, thread_id, embedding) VALUES (?, ?, ?)",
                    (rowid, partition, vectors.to_blob(vector)),
                )

    def transfer_finish(self) -> None:
        self.indexer.drain()


__all__ = ["TransferMixin"]
