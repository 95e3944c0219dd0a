"""Knowledge sections of the SQLite backend (migration 5): documents written and read by section.

A document is ``(scope, source)``. :meth:`KnowledgeMixin.write_document` applies one
document's plan in one transaction: a new section gets a row (and its public id ``s_<hex>``);
a changed one is updated in place (its id, drills and vectors stay with it); a removed one is
flagged and its ``content_seg`` emptied, so it leaves the keyword index while its row stays;
a restored one gets its text back. The FTS5 update trigger fires only when ``content_seg``
changes (``schema.KNOWLEDGE_SECTIONS_FTS``), so a section that only moved leaves the index
alone. Every read that serves a search applies the corpus rule
(:data:`~recallbox.storage.sqlite.corpora.SECTIONS`: live, and the document's basename, path
and file identity not excluded) and the filter's narrowing (scope, per-call exclusions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from recallbox.inventory_types import KnowledgeDocument
from recallbox.storage.queries import LexicalQuery, SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import SECTIONS
from recallbox.storage.sqlite.keyword import (
    PHRASE_FREQS_FUNCTION,
    decode_varint,
    register_functions,
)
from recallbox.storage.sqlite.match import any_of, phrase_strings
from recallbox.storage.sqlite.rows import new_id, now, parse_time
from recallbox.storage.values import (
    DocumentWrite,
    KeywordScope,
    RowFrequencies,
    SectionRow,
    SectionWrite,
    StoredSection,
)
from recallbox.text.cjk import segment
from recallbox.types import Section

SECTION_ID_PREFIX = "s_"
_ROW_COLUMNS = (
    "k.uid, k.source, k.scope, k.heading, k.start_line, k.end_line, k.heading_line, "
    "k.content, k.content_hash"
)


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


def _insert(conn: apsw.Connection, doc: DocumentWrite, write: SectionWrite, stamp: str) -> None:
    conn.execute(
        "INSERT INTO knowledge_sections (uid, scope, source, source_path, source_name, "
        "identity, root, heading, level, start_line, end_line, heading_line, content, "
        "content_seg, content_hash, body_hash, removed, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
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
            segment(write.content),
            write.content_hash,
            write.body_hash,
            stamp,
        ),
    )


def _update(conn: apsw.Connection, doc: DocumentWrite, write: SectionWrite, stamp: str) -> None:
    """Rewrite row ``write.id`` of the document: ``content_seg`` only when the text changed
    or the row comes back from removed (the index trigger fires on a changed value only)."""
    conn.execute(
        "UPDATE knowledge_sections SET heading = ?, level = ?, start_line = ?, end_line = ?, "
        "heading_line = ?, content_seg = CASE WHEN removed = 1 OR content_hash != ? THEN ? "
        "ELSE content_seg END, content = ?, content_hash = ?, body_hash = ?, removed = 0, "
        "updated_at = ? WHERE uid = ? AND source = ? AND scope IS ?",
        (
            write.heading,
            write.level,
            write.start_line,
            write.end_line,
            write.heading_line,
            write.content_hash,
            segment(write.content),
            write.content,
            write.content_hash,
            write.body_hash,
            stamp,
            write.id,
            doc.source,
            doc.scope,
        ),
    )


class KnowledgeMixin:
    """:class:`~recallbox.storage.base.KnowledgeStore` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- writing ---------------------------------------------------------------------------
    def document_sections(self, scope: str | None, source: str) -> list[StoredSection]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT uid, heading, start_line, end_line, content_hash, body_hash, removed "
                "FROM knowledge_sections WHERE source = ? AND scope IS ? "
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
                "WHERE root = ? AND scope IS ? AND removed = 0 ORDER BY source",
                (root, scope),
            ).fetchall()
        return [str(r[0]) for r in rows]

    def knowledge_documents(self) -> list[KnowledgeDocument]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT scope, source, max(root), max(identity), coalesce(sum(removed = 0), 0), "
                "coalesce(sum(removed), 0), max(updated_at) FROM knowledge_sections "
                "GROUP BY scope, source ORDER BY source, scope"
            ).fetchall()
        return [
            KnowledgeDocument(
                scope=None if r[0] is None else str(r[0]),
                source=str(r[1]),
                root=None if r[2] is None else str(r[2]),
                sections=int(r[4]),
                removed_sections=int(r[5]),
                last_sync=parse_time(str(r[6])),
                identity=None if r[3] is None else str(r[3]),
            )
            for r in rows
        ]

    def write_document(self, document: DocumentWrite) -> list[Section]:
        stamp = now()
        with self.pool.transaction() as conn:
            if document.writes:  # the document as read now: every row of it follows
                conn.execute(
                    "UPDATE knowledge_sections SET identity = ?, root = ?, source_path = ?, "
                    "source_name = ? WHERE source = ? AND scope IS ?",
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
            conn.executemany(
                "UPDATE knowledge_sections SET removed = 1, content_seg = '', updated_at = ? "
                "WHERE uid = ? AND source = ? AND scope IS ? AND removed = 0",
                [(stamp, rid, document.source, document.scope) for rid in document.removals],
            )
            rows: list[Any] = conn.execute(
                f"SELECT {_ROW_COLUMNS} FROM knowledge_sections k WHERE k.source = ? "
                "AND k.scope IS ? AND k.removed = 0 ORDER BY k.start_line, k.id",
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
            rows: list[Any] = conn.execute(sql, (c.keys(ids), *narrow.params)).fetchall()
        return {str(r[0]): _row(r) for r in rows}

    def knowledge_sources(self, *, where: SearchFilter, name: str | None = None) -> list[str]:
        c = SECTIONS
        narrow = c.narrow(where)
        by_name = " AND k.source_name = ?" if name is not None else ""
        sql = f"SELECT DISTINCT k.source FROM {c.rows_from} WHERE {c.rule}{narrow.sql}{by_name}"
        params = (*narrow.params, *((name,) if name is not None else ()))
        with self.pool.reading() as conn:
            rows = conn.execute(sql + " ORDER BY k.source", params).fetchall()
        return [str(r[0]) for r in rows]

    def source_scope(
        self, source: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """The document is the corpus; its rows are found by source first, then each is
        looked up in the index (FTS5 evaluates the query per row: no corpus-wide scan)."""
        c = SECTIONS
        narrow = c.narrow(where)
        phrases = phrase_strings(query)
        live = f"k.source = ? AND {c.rule}{narrow.sql}"
        params = (source, *narrow.params)
        with self.pool.snapshot() as conn:
            rows = tokens = 0
            for (size,) in conn.execute(
                f"SELECT d.sz FROM {c.table} k JOIN {c.fts}_docsize d ON d.id = k.id WHERE {live}",
                params,
            ):
                rows += 1
                tokens += decode_varint(bytes(size))[0] if size else 0
            if not rows:
                return None
            if not phrases:
                return KeywordScope(rows, tokens, (), ())
            register_functions(conn)
            df = [0] * len(phrases)
            matches: list[RowFrequencies] = []
            for rid, packed in conn.execute(
                f"SELECT k.uid, {PHRASE_FREQS_FUNCTION}({c.fts}) FROM {c.table} k "
                f"CROSS JOIN {c.fts} ON {c.fts}.rowid = k.id WHERE {c.fts} MATCH ? AND {live}",
                (any_of(phrases), *params),
            ):
                length, *freqs = (int(x) for x in str(packed).split())
                for i, freq in enumerate(freqs):
                    df[i] += freq > 0
                matches.append(RowFrequencies(str(rid), length, tuple(freqs)))
        return KeywordScope(rows, tokens, tuple(df), tuple(matches))


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
