"""``StoreTransfer`` for the PostgreSQL backend: its rows as canonical values, and written back
(``recallbox migrate``, #16 item 5; the tables and the copy loop are ``storage/transfer.py``).

Its types are already the canonical ones (``boolean``, ``timestamptz`` read in UTC, ``date``,
``bytea``). Writing keeps every id and fills what this backend derives: the keyword documents of
the corpus tables (``fts``, ``fts_len``, overflow terms; the statistics follow through their
triggers, once per statement), while the trigram indexes follow by themselves. After the last
write every identity sequence moves past the copied ids, and a space big enough gets its HNSW
index in one bulk build.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import PgPool
from recallbox.storage.postgres.keyword import KeywordDocument
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import utc
from recallbox.storage.postgres.schema import KEYWORD_CORPORA
from recallbox.storage.transfer import TABLE_BY_NAME, TABLES, Key, Row, Table

#: Rows per ``INSERT`` statement (at most 65 535 bound values; the triggers run per statement).
INSERT_ROWS = 1_000


def _keyword_document(table: str, values: dict[str, Any]) -> KeywordDocument:
    if table == "code_symbols":
        return document_of(str(values["content_seg"]), segmented=True)
    if table == "knowledge_sections" and values["removed"]:
        return document_of("")
    return document_of(str(values["content"]))


def _read(table: Table, row: Sequence[Any]) -> Row:
    return tuple(utc(value) if isinstance(value, datetime) else value for value in row)


class TransferMixin:
    """:class:`~recallbox.storage.transfer.StoreTransfer` for :class:`PostgresStore`."""

    pool: PgPool

    def transfer_count(self, table: str) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(f"SELECT count(*) FROM {TABLE_BY_NAME[table].name}").fetchone()
        return int(row[0]) if row else 0

    def transfer_rows(self, table: str, after: Key | None, limit: int) -> list[Row]:
        t = TABLE_BY_NAME[table]
        keys = ", ".join(t.key)
        where, params = "", ()
        if after is not None:
            where = f" WHERE ({keys}) > ({', '.join('%s' for _ in t.key)})"
            params = tuple(after)
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {', '.join(t.all_columns)} FROM {t.name}{where} ORDER BY {keys} LIMIT %s",
                (*params, limit),
            ).fetchall()
        return [_read(t, r) for r in rows]

    def transfer_row(self, table: str, key: Key) -> Row | None:
        t = TABLE_BY_NAME[table]
        where = " AND ".join(f"{k} = %s" for k in t.key)
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
                f"SELECT {', '.join(t.key)} FROM {t.name} ORDER BY {order} LIMIT 1"
            ).fetchone()
        return tuple(row) if row else None

    def transfer_write(self, table: str, rows: Sequence[Row]) -> None:
        t = TABLE_BY_NAME[table]
        keyword = KEYWORD_CORPORA.get(t.name)
        columns = list(t.all_columns) + (["fts", "fts_len"] if keyword else [])
        marks = ", ".join("%s" for _ in t.all_columns) + (f", {FTS_MARKS}" if keyword else "")
        with self.pool.transaction() as conn:
            for start in range(0, len(rows), INSERT_ROWS):
                batch = rows[start : start + INSERT_ROWS]
                values: list[Any] = []
                docs = []
                for row in batch:
                    values += row
                    if keyword is not None:
                        named = dict(zip(t.all_columns, row, strict=True))
                        doc = _keyword_document(t.name, named)
                        docs.append((int(named["id"]), int(named[keyword.scope_column]), doc))
                        values += [doc.tsvector, doc.length]
                conn.execute(
                    f"INSERT INTO {t.name} ({', '.join(columns)}) VALUES "
                    + ", ".join([f"({marks})"] * len(batch)),
                    values,
                )
                if keyword is not None:
                    put_overflow(conn, keyword, docs)

    # -- vectors ---------------------------------------------------------------------------
    def transfer_vector_count(self, space_id: int) -> int:
        with self.pool.reading() as conn:
            if not vectors.table_exists(conn, space_id):
                return 0
            row = conn.execute(f"SELECT count(*) FROM {vectors.table_name(space_id)}").fetchone()
        return int(row[0]) if row else 0

    def transfer_last_vector(self, space_id: int) -> int:
        with self.pool.reading() as conn:
            if not vectors.table_exists(conn, space_id):
                return 0
            row = conn.execute(
                f"SELECT max(target_id) FROM {vectors.table_name(space_id)}"
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else 0

    def transfer_vectors(
        self, space_id: int, after: int, limit: int
    ) -> list[tuple[int, int, list[float]]]:
        with self.pool.reading() as conn:
            if not vectors.table_exists(conn, space_id):
                return []
            rows = conn.execute(
                f"SELECT target_id, part, embedding::text FROM {vectors.table_name(space_id)} "
                "WHERE target_id > %s ORDER BY target_id LIMIT %s",
                (after, limit),
            ).fetchall()
        return [
            (int(r[0]), int(r[1]), [float(x) for x in str(r[2]).strip("[]").split(",")])
            for r in rows
        ]

    def transfer_write_vectors(
        self, space_id: int, dim: int, rows: Sequence[tuple[int, int, list[float]]]
    ) -> None:
        with self.pool.transaction() as conn:
            vectors.create_table(conn, space_id, dim)
            conn.execute(
                f"INSERT INTO {vectors.table_name(space_id)} (target_id, part, embedding) "
                f"SELECT u.id, u.part, u.v::vector({int(dim)}) FROM "
                "unnest(%s::bigint[], %s::bigint[], %s::text[]) AS u(id, part, v)",
                (
                    [r[0] for r in rows],
                    [r[1] for r in rows],
                    [vectors.literal(r[2]) for r in rows],
                ),
            )

    def transfer_finish(self) -> None:
        with self.pool.transaction() as conn:
            for t in TABLES:
                if t.key == ("id",):  # an identity column: past the copied ids
                    conn.execute(
                        f"SELECT setval(pg_get_serial_sequence('{t.name}', 'id'), "
                        f"greatest((SELECT max(id) FROM {t.name}), 1), "
                        f"(SELECT max(id) FROM {t.name}) IS NOT NULL)"
                    )
            for space_id, _, dim in vectors.spaces(conn):
                if dim <= vectors.HNSW_MAX_DIM and not vectors.has_hnsw(conn, space_id):
                    count = conn.execute(
                        f"SELECT count(*) FROM {vectors.table_name(space_id)}"
                    ).fetchone()
                    if count and int(count[0]) >= vectors.HNSW_MIN_VECTORS:
                        vectors.create_hnsw(conn, space_id)


__all__ = ["TransferMixin"]
