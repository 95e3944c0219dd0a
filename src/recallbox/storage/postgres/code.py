"""The code index of the PostgreSQL backend (migration 7): scopes, files, symbols, edges — the
SQLite twin's rules (``storage/sqlite/code.py``).

One transaction per index run, under the scope's advisory lock (two runs of one scope take
turns). A written file's symbols are upserted by symbol id (an unchanged record keeps its row
and its vector), its edges replaced; a deleted file goes with its symbols, edges and their
vectors. The search reads apply the corpus rule and the filter to every symbol they return or
count, callers and callees included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime

from recallbox.storage.codecs import storable
from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import Connection, PgPool, lock_resource
from recallbox.storage.postgres.corpora import CODE_KEY_SQL, CODE_SYMBOLS
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import utc
from recallbox.storage.postgres.schema import CODE_KEYWORDS
from recallbox.storage.postgres.visibility import Clause, narrowing, source_allowed_sql
from recallbox.storage.queries import CORPUS_CODE_SYMBOL, SearchFilter
from recallbox.storage.row_maps import (
    CODE_EDGE_COLUMNS,
    CODE_FILE_COLUMNS,
    CODE_ROW_COLUMNS,
    CODE_SYMBOL_FIELDS,
    code_edge_row,
    code_file_row,
    code_symbol_values,
)
from recallbox.storage.values_code import (
    CodeEdgeRecord,
    CodeFile,
    CodeFileWrite,
    CodeGraphFile,
    CodeIndexWrite,
    CodeScope,
    CodeSymbolRecord,
    CodeSymbolRef,
    CodeSymbolRow,
)


def caller_gate(alias: str, where: SearchFilter) -> Clause:
    """The gate and the filter's exclusions on another symbol's file ``<alias>`` (a caller)."""
    rule = source_allowed_sql(
        f"{alias}.name_norm", f"{alias}.path_norm", f"{alias}.identity", suffix=False
    )
    narrow = narrowing(
        replace(where, scope=None),
        channel_sql=None,
        source_sql=f"{alias}.name_norm",
        path_sql=f"{alias}.path_norm",
        identity_sql=f"{alias}.identity",
        suffix=False,
    )
    return Clause(f" AND {rule}{narrow.sql}", narrow.params)


def _scope_id(conn: Connection, scope: str) -> int | None:
    if not storable(scope):
        return None
    row = conn.execute("SELECT id FROM code_scopes WHERE name = %s", (scope,)).fetchone()
    return int(row[0]) if row else None


def _delete_symbols(conn: Connection, rowids: Sequence[int]) -> None:
    """Drop symbols with their vectors and their bookkeeping."""
    vectors.delete_rows(conn, CORPUS_CODE_SYMBOL, "code_symbols", rowids)


def _delete_file(conn: Connection, scope_id: int, path: str) -> None:
    row = conn.execute(
        "SELECT id FROM code_files WHERE scope_id = %s AND path = %s", (scope_id, path)
    ).fetchone()
    if row is None:
        return
    file_id = int(row[0])
    symbols = conn.execute("SELECT id FROM code_symbols WHERE file_id = %s", (file_id,)).fetchall()
    _delete_symbols(conn, [int(r[0]) for r in symbols])
    conn.execute("DELETE FROM code_edges WHERE file_id = %s", (file_id,))
    conn.execute("DELETE FROM code_files WHERE id = %s", (file_id,))


def _insert_symbols(
    conn: Connection, scope_id: int, file_id: int, records: Sequence[CodeSymbolRecord]
) -> None:
    """Insert new symbols with their keyword documents in one statement."""
    if not records:
        return
    marks = "(" + ", ".join(["%s"] * (3 + len(CODE_SYMBOL_FIELDS))) + f", {FTS_MARKS})"
    values: list[object] = []
    docs = {}
    for record in records:
        doc = docs[record.symbol_id] = document_of(record.content_seg, segmented=True)
        values += [scope_id, file_id, record.symbol_id, *code_symbol_values(record)]
        values += [doc.tsvector, doc.length]
    rows = conn.execute(
        f"INSERT INTO code_symbols (scope_id, file_id, symbol_id, {', '.join(CODE_SYMBOL_FIELDS)}, "
        f"fts, fts_len) VALUES {', '.join([marks] * len(records))} RETURNING id, symbol_id",
        values,
    ).fetchall()
    put_overflow(conn, CODE_KEYWORDS, [(int(r[0]), scope_id, docs[str(r[1])]) for r in rows])


def _update_symbol(conn: Connection, scope_id: int, record: CodeSymbolRecord, rowid: int) -> None:
    doc = document_of(record.content_seg, segmented=True)
    assignments = ", ".join(f"{name} = %s" for name in CODE_SYMBOL_FIELDS)
    conn.execute(
        f"UPDATE code_symbols SET {assignments}, fts = %s::tsvector, fts_len = %s WHERE id = %s",
        (*code_symbol_values(record), doc.tsvector, doc.length, rowid),
    )
    put_overflow(conn, CODE_KEYWORDS, [(rowid, scope_id, doc)], replace=True)


def _write_file(conn: Connection, scope_id: int, write: CodeFileWrite, stamp: datetime) -> None:
    f = write.file
    row = conn.execute(
        "INSERT INTO code_files (scope_id, path, path_norm, name_norm, language, hash, size, "
        "mtime_ns, identity, error, indexed_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        "%s) ON CONFLICT (scope_id, path) DO UPDATE SET path_norm = excluded.path_norm, "
        "name_norm = excluded.name_norm, language = excluded.language, hash = excluded.hash, "
        "size = excluded.size, mtime_ns = excluded.mtime_ns, identity = excluded.identity, "
        "error = excluded.error, indexed_at = excluded.indexed_at RETURNING id",
        (scope_id, f.path, f.source, f.source.rsplit("/", 1)[-1], f.language, f.hash, f.size,
         f.mtime_ns, f.identity, f.error, stamp),
    ).fetchone()  # fmt: skip
    assert row is not None
    file_id = int(row[0])
    stored = {
        str(r[0]): (int(r[1]), tuple(r[2:]))
        for r in conn.execute(
            f"SELECT symbol_id, id, {', '.join(CODE_SYMBOL_FIELDS)} FROM code_symbols "
            "WHERE file_id = %s",
            (file_id,),
        ).fetchall()
    }
    kept: set[str] = set()
    added: dict[str, CodeSymbolRecord] = {}
    for record in write.symbols:
        kept.add(record.symbol_id)
        before = stored.get(record.symbol_id)
        if before is None:
            added[record.symbol_id] = record  # a symbol id twice: the last record, as upserts
        elif before[1] != code_symbol_values(record):
            _update_symbol(conn, scope_id, record, before[0])
    _insert_symbols(conn, scope_id, file_id, list(added.values()))
    _delete_symbols(conn, [rowid for symbol, (rowid, _) in stored.items() if symbol not in kept])
    conn.execute("DELETE FROM code_edges WHERE file_id = %s", (file_id,))
    if write.edges:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO code_edges (scope_id, file_id, ordinal, kind, source_id, "
                "target_name, target_last, line, target_id, confidence) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    (scope_id, file_id, e.ordinal, e.kind, e.source_id, e.target_name,
                     e.target_last, e.line, e.target_id, e.confidence)
                    for e in write.edges
                ],
            )  # fmt: skip


class CodeMixin:
    """:class:`~recallbox.storage.base.CodeStore` for :class:`PostgresStore`."""

    pool: PgPool

    # -- bookkeeping (the indexer) ---------------------------------------------------------
    def code_scopes(self) -> list[CodeScope]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT sc.name, sc.root, sc.commit_sha, sc.indexed_at, "
                "(SELECT count(*) FROM code_files f WHERE f.scope_id = sc.id), "
                "(SELECT count(*) FROM code_symbols s WHERE s.scope_id = sc.id), "
                "(SELECT count(*) FROM code_edges e WHERE e.scope_id = sc.id) "
                "FROM code_scopes sc ORDER BY sc.name"
            ).fetchall()
        return [
            CodeScope(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]), utc(r[3]),
                      int(r[4]), int(r[5]), int(r[6]))
            for r in rows
        ]  # fmt: skip

    def code_file_counts(self, scope: str) -> list[tuple[CodeFile, int]]:
        if not storable(scope):
            return []
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {CODE_FILE_COLUMNS}, (SELECT count(*) FROM code_symbols s "
                "WHERE s.file_id = f.id) FROM code_files f JOIN code_scopes c "
                "ON c.id = f.scope_id WHERE c.name = %s ORDER BY f.path",
                (scope,),
            ).fetchall()
        return [(code_file_row(r), int(r[9])) for r in rows]

    def code_graph(self, scope: str) -> list[CodeGraphFile]:
        with self.pool.snapshot() as conn:
            scope_id = _scope_id(conn, scope)
            if scope_id is None:
                return []
            files = {
                int(r[0]): code_file_row(r)
                for r in conn.execute(
                    f"SELECT {CODE_FILE_COLUMNS} FROM code_files f WHERE f.scope_id = %s", (scope_id,)
                ).fetchall()
            }
            symbols: dict[int, list[CodeSymbolRef]] = {file_id: [] for file_id in files}
            for r in conn.execute(
                "SELECT file_id, symbol_id, name, qualname, kind, start_line, end_line "
                "FROM code_symbols WHERE scope_id = %s",
                (scope_id,),
            ).fetchall():
                symbols[int(r[0])].append(
                    CodeSymbolRef(str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]), int(r[6]))
                )
            edges: dict[int, list[CodeEdgeRecord]] = {file_id: [] for file_id in files}
            for r in conn.execute(
                f"SELECT {CODE_EDGE_COLUMNS} FROM code_edges e WHERE e.scope_id = %s "
                "AND e.kind IN ('imports', 'extends')",
                (scope_id,),
            ).fetchall():
                edges[int(r[0])].append(code_edge_row(r))
        ordered = sorted(files.items(), key=lambda item: item[1].path)
        return [
            CodeGraphFile(
                file,
                tuple(sorted(symbols[file_id], key=lambda s: (s.start_line, s.symbol_id))),
                tuple(sorted(edges[file_id], key=lambda e: e.ordinal)),
            )
            for file_id, file in ordered
        ]

    def code_call_edges(
        self,
        scope: str,
        *,
        names: Iterable[str] | None = None,
        mentions: Iterable[str] | None = None,
    ) -> dict[str, list[CodeEdgeRecord]]:
        sql = (
            f"SELECT {CODE_EDGE_COLUMNS}, f.path FROM code_edges e JOIN code_files f "
            "ON f.id = e.file_id WHERE e.scope_id = %s AND e.kind = 'calls'"
        )
        filters: list[str] = []
        params: tuple[object, ...] = ()
        if names is not None:
            filters.append("e.target_last = ANY(%s::text[])")
            params += (sorted(n for n in set(names) if storable(n)),)
        if mentions is not None:
            words = sorted(w for w in set(mentions) if storable(w))
            filters += ["strpos(e.target_name, %s) > 0"] * len(words)
            params += tuple(words)
        if filters:
            sql += f" AND ({' OR '.join(filters)})"
        elif names is not None or mentions is not None:
            return {}
        with self.pool.snapshot() as conn:
            scope_id = _scope_id(conn, scope)
            if scope_id is None:
                return {}
            found: dict[str, list[CodeEdgeRecord]] = {}
            for r in conn.execute(
                sql + " ORDER BY f.path, e.ordinal", (scope_id, *params)
            ).fetchall():
                found.setdefault(str(r[9]), []).append(code_edge_row(r))
        return found

    def write_code_index(self, update: CodeIndexWrite) -> None:
        stamp = datetime.now(UTC)
        with self.pool.transaction() as conn:
            lock_resource(conn, "code scope", update.scope)
            row = conn.execute(
                "INSERT INTO code_scopes (name, root, commit_sha, indexed_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO UPDATE SET root = excluded.root, "
                "commit_sha = excluded.commit_sha, indexed_at = excluded.indexed_at RETURNING id",
                (update.scope, update.root, update.commit, stamp),
            ).fetchone()
            assert row is not None
            scope_id = int(row[0])
            for path in update.deleted:
                _delete_file(conn, scope_id, path)
            for write in update.files:
                _write_file(conn, scope_id, write, stamp)
            with conn.cursor() as cur:
                if update.restamped:
                    cur.executemany(
                        "UPDATE code_files SET size = %s, mtime_ns = %s, identity = %s "
                        "WHERE scope_id = %s AND path = %s",
                        [
                            (f.size, f.mtime_ns, f.identity, scope_id, f.path)
                            for f in update.restamped
                        ],
                    )
                if update.fixes:
                    cur.executemany(
                        "UPDATE code_edges SET target_id = %s, confidence = %s WHERE ordinal = %s "
                        "AND file_id = (SELECT id FROM code_files WHERE scope_id = %s AND path = %s)",
                        [
                            (x.target_id, x.confidence, x.ordinal, scope_id, x.path)
                            for x in update.fixes
                        ],
                    )

    # -- search reads (gated) --------------------------------------------------------------
    def code_symbol_rows(
        self, keys: Sequence[str], *, where: SearchFilter
    ) -> dict[str, CodeSymbolRow]:
        c = CODE_SYMBOLS
        narrow = c.narrow(where)
        if not keys:
            return {}
        callers = caller_gate("cf", where)
        sql = (
            f"SELECT {c.given}, sc.name, {CODE_ROW_COLUMNS}, "
            "(SELECT count(DISTINCT k.symbol_id) FROM code_edges e JOIN code_symbols k "
            "ON k.scope_id = e.scope_id AND k.symbol_id = e.source_id "
            "JOIN code_files cf ON cf.id = k.file_id WHERE e.scope_id = s.scope_id "
            "AND e.target_id = s.symbol_id AND e.kind = 'calls' "
            f"AND k.symbol_id <> s.symbol_id{callers.sql}) "
            f"FROM {c.keys_from} WHERE {c.rule}{narrow.sql}"
        )
        params = (*callers.params, *c.keys(keys), *narrow.params)
        with self.pool.reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        return {
            str(r[0]): CodeSymbolRow(
                str(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), str(r[5]), str(r[6]),
                int(r[7]), int(r[8]), str(r[9]), str(r[10]), str(r[11]), str(r[12]),
                str(r[13]), str(r[14]), str(r[15]), int(r[16]), int(r[17]), int(r[18]),
            )
            for r in rows
        }  # fmt: skip

    def code_name_matches(self, name_seg: str, *, where: SearchFilter, limit: int) -> list[str]:
        c = CODE_SYMBOLS
        narrow = c.narrow(where)
        if limit < 1 or not name_seg or not storable(name_seg):
            return []
        sql = (
            f"SELECT {c.public_id} FROM {c.rows_from} WHERE s.name_seg = %s AND {c.rule}"
            f"{narrow.sql} ORDER BY sc.name, s.symbol_id LIMIT %s"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (name_seg, *narrow.params, limit)).fetchall()
        return [str(r[0]) for r in rows]

    def code_calls(
        self, keys: Sequence[str], *, incoming: bool, where: SearchFilter, limit: int
    ) -> dict[str, list[str]]:
        c = CODE_SYMBOLS
        narrow = c.narrow(where)
        if not keys or limit < 1:
            return {}
        origin = (
            f"SELECT {c.given}, s.scope_id, s.symbol_id FROM {c.keys_from} "
            f"WHERE {c.rule}{narrow.sql}"
        )
        near, far = ("e.source_id", "e.target_id") if incoming else ("e.target_id", "e.source_id")
        order = "min(f.path), min(s.start_line)" if incoming else "min(e.line)"
        neighbours = (
            f"SELECT {CODE_KEY_SQL}, {order} FROM code_edges e JOIN code_symbols s "
            f"ON s.scope_id = e.scope_id AND s.symbol_id = {near} {c.joins} "
            f"WHERE e.scope_id = %s AND {far} = %s AND e.kind = 'calls' AND s.symbol_id <> %s "
            f"AND {c.rule}{narrow.sql} GROUP BY s.id, sc.name, s.symbol_id "
            f"ORDER BY {order}, s.symbol_id LIMIT %s"
        )
        found: dict[str, list[str]] = {}
        with self.pool.snapshot() as conn:
            origins = conn.execute(origin, (*c.keys(keys), *narrow.params)).fetchall()
            for given, scope_id, symbol in origins:
                params = (scope_id, symbol, symbol, *narrow.params, limit)
                found[str(given)] = [str(r[0]) for r in conn.execute(neighbours, params).fetchall()]
        return found
