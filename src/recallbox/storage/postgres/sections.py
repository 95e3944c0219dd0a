"""Knowledge sections of the PostgreSQL backend (migration 5): documents written and read by
section — the SQLite twin's rules (``storage/sqlite/sections.py``).

A removed section keeps its row with an empty keyword document (it leaves the statistics and
the index) and comes back with its id when its content does; an update rewrites the keyword
document only when the text changed or the row comes back. Reading a document to plan its
writes inside a transaction takes the document's advisory lock, so two syncs of one document
take turns (two of different documents never wait).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from recallbox.inventory_types import KnowledgeDocument
from recallbox.storage.codecs import SECTION_ID_PREFIX, new_id, storable
from recallbox.storage.postgres.connection import Connection, PgPool, lock_resource
from recallbox.storage.postgres.corpora import SECTIONS
from recallbox.storage.postgres.keyword import KeywordDocument
from recallbox.storage.postgres.keyword_index import document_scope
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import utc
from recallbox.storage.postgres.schema import SECTIONS_KEYWORDS
from recallbox.storage.queries import LexicalQuery, SearchFilter
from recallbox.storage.values import (
    DocumentWrite,
    KeywordScope,
    SectionRow,
    SectionWrite,
    StoredSection,
)
from recallbox.types import Section

_ROW_COLUMNS = (
    "k.uid, k.source, k.scope, k.heading, k.start_line, k.end_line, k.heading_line, "
    "k.content, k.content_hash"
)
#: ``scope IS NOT DISTINCT FROM``: SQLite's ``scope IS ?`` (a NULL scope is the library).
SAME_SCOPE = "scope IS NOT DISTINCT FROM %s"
#: The keyword document of a removed section: nothing.
EMPTY = document_of("")


def _row(r: Sequence[Any]) -> SectionRow:
    return SectionRow(
        id=str(r[0]),
        source=str(r[1]),
        scope=str(r[2]) if r[2] is not None else None,
        heading=str(r[3]) if r[3] is not None else None,
        start_line=int(r[4]),
        end_line=int(r[5]),
        heading_line=int(r[6]) if r[6] is not None else None,
        content=str(r[7]),
        content_hash=str(r[8]),
    )


def _insert(conn: Connection, doc: DocumentWrite, write: SectionWrite, stamp: object) -> None:
    entry = document_of(write.content)
    row = conn.execute(
        "INSERT INTO knowledge_sections (uid, scope, source, source_path, source_name, "
        "identity, root, heading, level, start_line, end_line, heading_line, content, "
        "content_hash, body_hash, removed, updated_at, fts, fts_len) VALUES (%s, %s, %s, %s, "
        f"%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, false, %s, {FTS_MARKS}) RETURNING id",
        (
            new_id(SECTION_ID_PREFIX),
            doc.scope,
            doc.source,
            doc.source_path,
            doc.source_name,
            doc.identity,
            doc.root,
            write.heading,
            write.level,
            write.start_line,
            write.end_line,
            write.heading_line,
            write.content,
            write.content_hash,
            write.body_hash,
            stamp,
            entry.tsvector,
            entry.length,
        ),
    ).fetchone()
    assert row is not None
    put_overflow(conn, SECTIONS_KEYWORDS, [(int(row[0]), 0, entry)])


def _set_document(conn: Connection, rowid: int, entry: KeywordDocument) -> None:
    conn.execute(
        f"UPDATE knowledge_sections SET (fts, fts_len) = ({FTS_MARKS}) WHERE id = %s",
        (entry.tsvector, entry.length, rowid),
    )
    put_overflow(conn, SECTIONS_KEYWORDS, [(rowid, 0, entry)], replace=True)


def _update(conn: Connection, doc: DocumentWrite, write: SectionWrite, stamp: object) -> None:
    """Rewrite row ``write.id`` of the document; its keyword document only when the text
    changed or the row comes back from removed."""
    row = conn.execute(
        "SELECT id, removed OR content_hash <> %s FROM knowledge_sections WHERE uid = %s "
        f"AND source = %s AND {SAME_SCOPE}",
        (write.content_hash, write.id, doc.source, doc.scope),
    ).fetchone()
    if row is None:
        return
    conn.execute(
        "UPDATE knowledge_sections SET heading = %s, level = %s, start_line = %s, end_line = %s, "
        "heading_line = %s, content = %s, content_hash = %s, body_hash = %s, removed = false, "
        "updated_at = %s WHERE id = %s",
        (
            write.heading,
            write.level,
            write.start_line,
            write.end_line,
            write.heading_line,
            write.content,
            write.content_hash,
            write.body_hash,
            stamp,
            row[0],
        ),
    )
    if row[1]:
        _set_document(conn, int(row[0]), document_of(write.content))


class KnowledgeMixin:
    """:class:`~recallbox.storage.base.KnowledgeStore` for :class:`PostgresStore`."""

    pool: PgPool

    # -- writing ---------------------------------------------------------------------------
    def document_sections(self, scope: str | None, source: str) -> list[StoredSection]:
        if not storable(source) or (scope is not None and not storable(scope)):
            return []
        with self.pool.reading() as conn:
            if self.pool.in_write():
                lock_resource(conn, "document", scope, source)
            rows = conn.execute(
                "SELECT uid, heading, start_line, end_line, content_hash, body_hash, removed "
                f"FROM knowledge_sections WHERE source = %s AND {SAME_SCOPE} "
                "ORDER BY start_line, id",
                (source, scope),
            ).fetchall()
        return [
            StoredSection(
                id=str(r[0]),
                heading=str(r[1]) if r[1] is not None else None,
                start_line=int(r[2]),
                end_line=int(r[3]),
                content_hash=str(r[4]),
                body_hash=str(r[5]),
                removed=bool(r[6]),
            )
            for r in rows
        ]

    def document_sources(self, scope: str | None, root: str) -> list[str]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT DISTINCT source FROM knowledge_sections "
                f"WHERE root = %s AND {SAME_SCOPE} AND NOT removed ORDER BY source",
                (root, scope),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def knowledge_documents(self) -> list[KnowledgeDocument]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT scope, source, max(root), max(identity), count(*) FILTER (WHERE NOT "
                "removed), count(*) FILTER (WHERE removed), max(updated_at) "
                "FROM knowledge_sections GROUP BY scope, source ORDER BY source, scope NULLS FIRST"
            ).fetchall()
        return [
            KnowledgeDocument(
                scope=None if r[0] is None else str(r[0]),
                source=str(r[1]),
                root=None if r[2] is None else str(r[2]),
                sections=int(r[4]),
                removed_sections=int(r[5]),
                last_sync=utc(r[6]),
                identity=None if r[3] is None else str(r[3]),
            )
            for r in rows
        ]

    def write_document(self, document: DocumentWrite) -> list[Section]:
        with self.pool.transaction() as conn:
            lock_resource(conn, "document", document.scope, document.source)
            stamp = datetime.now(UTC)
            if document.writes:  # the document as read now: every row of it follows
                conn.execute(
                    "UPDATE knowledge_sections SET identity = %s, root = %s, source_path = %s, "
                    f"source_name = %s WHERE source = %s AND {SAME_SCOPE}",
                    (
                        document.identity,
                        document.root,
                        document.source_path,
                        document.source_name,
                        document.source,
                        document.scope,
                    ),
                )
            for write in document.writes:
                if write.id is None:
                    _insert(conn, document, write, stamp)
                else:
                    _update(conn, document, write, stamp)
            for rid in document.removals:
                row = conn.execute(
                    "UPDATE knowledge_sections SET removed = true, updated_at = %s WHERE uid = %s "
                    f"AND source = %s AND {SAME_SCOPE} AND NOT removed RETURNING id",
                    (stamp, rid, document.source, document.scope),
                ).fetchone()
                if row is not None:
                    _set_document(conn, int(row[0]), EMPTY)
            rows = conn.execute(
                f"SELECT {_ROW_COLUMNS} FROM knowledge_sections k WHERE k.source = %s "
                f"AND k.{SAME_SCOPE} AND NOT k.removed ORDER BY k.start_line, k.id",
                (document.source, document.scope),
            ).fetchall()
        return [_section(_row(r)) for r in rows]

    # -- reading (every read applies the corpus rule) ----------------------------------------
    def section_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, SectionRow]:
        c = SECTIONS
        narrow = c.narrow(where)
        if not ids:
            return {}
        sql = f"SELECT {_ROW_COLUMNS} FROM {c.keys_from} WHERE {c.rule}{narrow.sql}"
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (*c.keys(ids), *narrow.params)).fetchall()
        return {str(r[0]): _row(r) for r in rows}

    def knowledge_sources(self, *, where: SearchFilter, name: str | None = None) -> list[str]:
        c = SECTIONS
        narrow = c.narrow(where)
        if name is not None and not storable(name):
            return []
        by_name = " AND k.source_name = %s" if name is not None else ""
        sql = f"SELECT DISTINCT k.source FROM {c.rows_from} WHERE {c.rule}{narrow.sql}{by_name}"
        params = (*narrow.params, *((name,) if name is not None else ()))
        with self.pool.reading() as conn:
            rows = conn.execute(sql + " ORDER BY k.source", params).fetchall()
        return [str(r[0]) for r in rows]

    def source_scope(
        self, source: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        narrow = SECTIONS.narrow(where)
        if not storable(source):
            return None
        with self.pool.snapshot() as conn:
            return document_scope(conn, SECTIONS, source, query, narrow)


def _section(row: SectionRow) -> Section:
    return Section(
        id=row.id,
        source=row.source,
        heading=row.heading,
        lines=(row.start_line, row.end_line),
        content=row.content,
        content_hash=row.content_hash,
        scope=row.scope,
    )
