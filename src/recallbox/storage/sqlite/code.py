"""The code index of the SQLite backend (migration 5): scopes, files, symbols, edges.

Writing is one transaction per index run (:meth:`CodeMixin.write_code_index`): a written file's
symbols are upserted by symbol id (an unchanged record keeps its row, so its vector stays
fresh; the ranked index follows through its triggers), its edges replaced, a deleted file
removed with its symbols, edges and the bookkeeping of their vectors (a stale ``vec0`` row is
harmless: symbol row ids are never reused). The bookkeeping reads (``code_scopes``,
``code_graph``, ``code_call_edges``) show every file; the search reads apply the
:data:`~recallbox.storage.sqlite.corpora.CODE_SYMBOLS` rule and the filter to every symbol they
return or count, the callers and callees included.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import apsw

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
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import CODE_KEY_SQL, CODE_SYMBOLS
from recallbox.storage.sqlite.rows import json_list, now, parse_time
from recallbox.storage.sqlite.visibility import Clause, narrowing, source_allowed_sql
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


def _returned_id(row: Any) -> int:
    """The id an ``INSERT … RETURNING id`` gave (it always gives one)."""
    if row is None:
        raise RuntimeError("INSERT … RETURNING id returned no row")
    return int(row[0])


def _scope_id(conn: apsw.Connection, scope: str) -> int | None:
    row = conn.execute("SELECT id FROM code_scopes WHERE name = ?", (scope,)).fetchone()
    return int(row[0]) if row else None


def _forget_vectors(conn: apsw.Connection, where_sql: str, params: tuple[object, ...]) -> None:
    """Drop the vectors (and their bookkeeping) of the symbols ``where_sql`` selects (before
    deleting them)."""
    rows: list[Any] = conn.execute(
        f"SELECT id FROM code_symbols WHERE {where_sql}", params
    ).fetchall()
    vectors.forget(conn, CORPUS_CODE_SYMBOL, [int(r[0]) for r in rows])


def _delete_file(conn: apsw.Connection, scope_id: int, path: str) -> None:
    row = conn.execute(
        "SELECT id FROM code_files WHERE scope_id = ? AND path = ?", (scope_id, path)
    ).fetchone()
    if row is None:
        return
    file_id = int(row[0])
    _forget_vectors(conn, "file_id = ?", (file_id,))
    conn.execute("DELETE FROM code_symbols WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM code_edges WHERE file_id = ?", (file_id,))
    conn.execute("DELETE FROM code_files WHERE id = ?", (file_id,))


def _write_file(conn: apsw.Connection, scope_id: int, write: CodeFileWrite, stamp: str) -> None:
    f = write.file
    row = conn.execute(
        "INSERT INTO code_files (scope_id, path, path_norm, name_norm, language, hash, size, "
        "mtime_ns, identity, error, indexed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT (scope_id, path) DO UPDATE SET path_norm = excluded.path_norm, "
        "name_norm = excluded.name_norm, language = excluded.language, hash = excluded.hash, "
        "size = excluded.size, mtime_ns = excluded.mtime_ns, identity = excluded.identity, "
        "error = excluded.error, indexed_at = excluded.indexed_at RETURNING id",
        (scope_id, f.path, f.source, f.source.rsplit("/", 1)[-1], f.language, f.hash, f.size,
         f.mtime_ns, f.identity, f.error, stamp),
    ).fetchone()  # fmt: skip
    file_id = _returned_id(row)
    stored = {
        str(r[0]): (int(r[1]), tuple(r[2:]))
        for r in conn.execute(
            f"SELECT symbol_id, id, {', '.join(CODE_SYMBOL_FIELDS)} FROM code_symbols "
            "WHERE file_id = ?",
            (file_id,),
        )
    }
    kept: set[str] = set()
    for record in write.symbols:
        values = code_symbol_values(record)
        kept.add(record.symbol_id)
        before = stored.get(record.symbol_id)
        if before is None:
            _insert_symbol(conn, scope_id, file_id, record, values)
        elif before[1] != values:
            assignments = ", ".join(f"{name} = ?" for name in CODE_SYMBOL_FIELDS)
            conn.execute(
                f"UPDATE code_symbols SET {assignments} WHERE id = ?", (*values, before[0])
            )
    gone = [rowid for symbol, (rowid, _) in stored.items() if symbol not in kept]
    if gone:
        _forget_vectors(conn, "id IN (SELECT value FROM json_each(?))", (json_list(gone),))
        conn.execute(
            "DELETE FROM code_symbols WHERE id IN (SELECT value FROM json_each(?))",
            (json_list(gone),),
        )
    conn.execute("DELETE FROM code_edges WHERE file_id = ?", (file_id,))
    conn.executemany(
        "INSERT INTO code_edges (scope_id, file_id, ordinal, kind, source_id, target_name, "
        "target_last, line, target_id, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (scope_id, file_id, e.ordinal, e.kind, e.source_id, e.target_name, e.target_last,
             e.line, e.target_id, e.confidence)
            for e in write.edges
        ],
    )  # fmt: skip


def _insert_symbol(
    conn: apsw.Connection,
    scope_id: int,
    file_id: int,
    record: CodeSymbolRecord,
    values: tuple[object, ...],
) -> None:
    marks = ", ".join("?" for _ in CODE_SYMBOL_FIELDS)
    conn.execute(
        f"INSERT INTO code_symbols (scope_id, file_id, symbol_id, {', '.join(CODE_SYMBOL_FIELDS)}) "
        f"VALUES (?, ?, ?, {marks})",
        (scope_id, file_id, record.symbol_id, *values),
    )


class CodeMixin:
    """:class:`~recallbox.storage.base.CodeStore` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- bookkeeping (the indexer) ---------------------------------------------------------
    def code_scopes(self) -> list[CodeScope]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT sc.name, sc.root, sc.commit_sha, sc.indexed_at, "
                "(SELECT count(*) FROM code_files f WHERE f.scope_id = sc.id), "
                "(SELECT count(*) FROM code_symbols s WHERE s.scope_id = sc.id), "
                "(SELECT count(*) FROM code_edges e WHERE e.scope_id = sc.id) "
                "FROM code_scopes sc ORDER BY sc.name"
            ).fetchall()
        return [
            CodeScope(str(r[0]), str(r[1]), None if r[2] is None else str(r[2]),
                      parse_time(str(r[3])), int(r[4]), int(r[5]), int(r[6]))
            for r in rows
        ]  # fmt: skip

    def code_file_counts(self, scope: str) -> list[tuple[CodeFile, int]]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                f"SELECT {CODE_FILE_COLUMNS}, (SELECT count(*) FROM code_symbols s "
                "WHERE s.file_id = f.id) FROM code_files f JOIN code_scopes c "
                "ON c.id = f.scope_id WHERE c.name = ? ORDER BY f.path",
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
                    f"SELECT {CODE_FILE_COLUMNS} FROM code_files f WHERE f.scope_id = ?", (scope_id,)
                )
            }
            symbols: dict[int, list[CodeSymbolRef]] = {file_id: [] for file_id in files}
            for r in conn.execute(
                "SELECT file_id, symbol_id, name, qualname, kind, start_line, end_line "
                "FROM code_symbols WHERE scope_id = ?",
                (scope_id,),
            ):
                symbols[int(r[0])].append(
                    CodeSymbolRef(str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]), int(r[6]))
                )
            edges: dict[int, list[CodeEdgeRecord]] = {file_id: [] for file_id in files}
            for r in conn.execute(
                f"SELECT {CODE_EDGE_COLUMNS} FROM code_edges e WHERE e.scope_id = ? "
                "AND e.kind IN ('imports', 'extends')",
                (scope_id,),
            ):
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
            "ON f.id = e.file_id WHERE e.scope_id = ? AND e.kind = 'calls'"
        )
        filters: list[str] = []
        params: tuple[object, ...] = ()
        if names is not None:
            filters.append("e.target_last IN (SELECT value FROM json_each(?))")
            params += (json_list(sorted(set(names))),)
        if mentions is not None:
            # instr(): a case-sensitive substring test (LIKE folds case and reads % and _);
            # one bound value per mention (a json_each per row costs half again as much).
            words = sorted(set(mentions))
            filters += ["instr(e.target_name, ?) > 0"] * len(words)
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
            for r in conn.execute(sql + " ORDER BY f.path, e.ordinal", (scope_id, *params)):
                found.setdefault(str(r[9]), []).append(code_edge_row(r))
        return found

    def write_code_index(self, update: CodeIndexWrite) -> None:
        stamp = now()
        with self.pool.transaction() as conn:
            row = conn.execute(
                "INSERT INTO code_scopes (name, root, commit_sha, indexed_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (name) DO UPDATE SET root = excluded.root, "
                "commit_sha = excluded.commit_sha, indexed_at = excluded.indexed_at RETURNING id",
                (update.scope, update.root, update.commit, stamp),
            ).fetchone()
            scope_id = _returned_id(row)
            for path in update.deleted:
                _delete_file(conn, scope_id, path)
            for write in update.files:
                _write_file(conn, scope_id, write, stamp)
            conn.executemany(
                "UPDATE code_files SET size = ?, mtime_ns = ?, identity = ? "
                "WHERE scope_id = ? AND path = ?",
                [(f.size, f.mtime_ns, f.identity, scope_id, f.path) for f in update.restamped],
            )
            conn.executemany(
                "UPDATE code_edges SET target_id = ?, confidence = ? WHERE ordinal = ? AND "
                "file_id = (SELECT id FROM code_files WHERE scope_id = ? AND path = ?)",
                [(x.target_id, x.confidence, x.ordinal, scope_id, x.path) for x in update.fixes],
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
        # ``+e.kind``: keep the planner on ``code_edges_by_target`` (by kind it would scan every
        # call of the scope once per symbol: 30x slower on a 200-file index).
        sql = (
            f"SELECT {c.given}, sc.name, {CODE_ROW_COLUMNS}, "
            "(SELECT count(DISTINCT k.symbol_id) FROM code_edges e JOIN code_symbols k "
            "ON k.scope_id = e.scope_id AND k.symbol_id = e.source_id "
            "JOIN code_files cf ON cf.id = k.file_id WHERE e.scope_id = s.scope_id "
            "AND e.target_id = s.symbol_id AND +e.kind = 'calls' "
            f"AND k.symbol_id != s.symbol_id{callers.sql}) "
            f"FROM {c.keys_from} WHERE {c.rule}{narrow.sql}"
        )
        params = (*callers.params, c.keys(keys), *narrow.params)
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, params).fetchall()
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
        if limit < 1 or not name_seg:
            return []
        sql = (
            f"SELECT {c.public_id} FROM {c.rows_from} WHERE s.name_seg = ? AND {c.rule}"
            f"{narrow.sql} ORDER BY sc.name, s.symbol_id LIMIT ?"
        )
        with self.pool.reading() as conn:
            return [str(r[0]) for r in conn.execute(sql, (name_seg, *narrow.params, limit))]

    def code_calls(
        self, keys: Sequence[str], *, incoming: bool, where: SearchFilter, limit: int
    ) -> dict[str, list[str]]:
        c = CODE_SYMBOLS
        narrow = c.narrow(where)
        if not keys or limit < 1:
            return {}
        origin = f"SELECT {c.given}, s.scope_id, s.symbol_id FROM {c.keys_from} WHERE {c.rule}{narrow.sql}"
        near, far = ("e.source_id", "e.target_id") if incoming else ("e.target_id", "e.source_id")
        order = "min(f.path), min(s.start_line)" if incoming else "min(e.line)"
        neighbours = (
            f"SELECT {CODE_KEY_SQL}, {order} AS place FROM code_edges e JOIN code_symbols s "
            f"ON s.scope_id = e.scope_id AND s.symbol_id = {near} {c.joins} "
            f"WHERE e.scope_id = ? AND {far} = ? AND +e.kind = 'calls' AND s.symbol_id != ? "
            f"AND {c.rule}{narrow.sql} GROUP BY s.id ORDER BY {order}, s.symbol_id LIMIT ?"
        )
        found: dict[str, list[str]] = {}
        with self.pool.snapshot() as conn:
            for given, scope_id, symbol in conn.execute(
                origin, (c.keys(keys), *narrow.params)
            ).fetchall():
                params = (scope_id, symbol, symbol, *narrow.params, limit)
                found[str(given)] = [str(r[0]) for r in conn.execute(neighbours, params)]
        return found
