"""Migration 7's statements: the code domain's tables (kept apart so ``schema.py`` stays short)."""

from __future__ import annotations

from recallbox.storage.sqlite.fts_index import FtsIndex

# The code domain (DESIGN §2, §4.5; issue #11). ``code_scopes``: one row per indexed root (its
# last run: root, git commit, time, counts). ``code_files``: each file's stamp (content hash,
# size, mtime, file identity) and what the privacy gate compares (DESIGN §5): its normalised
# scope-relative path and basename. ``code_symbols``: one row per symbol id and scope (row ids
# never reused, so a removed symbol's vector is never taken for another's); ``content_seg`` is
# the identifier-split text the ranked index reads. ``code_edges``: per file, in extraction
# order; ``target_last`` is what re-resolution after an edit selects by.
CODE_SYMBOLS_FTS = FtsIndex(
    name="code_symbols_fts",
    content_table="code_symbols",
    columns=("content_seg",),
    options="tokenize='porter unicode61 remove_diacritics 2'",
    probe="token",
)
M007_CODE = [
    """CREATE TABLE code_scopes (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        root TEXT NOT NULL,
        commit_sha TEXT,
        indexed_at TEXT NOT NULL
    )""",
    """CREATE TABLE code_files (
        id INTEGER PRIMARY KEY,
        scope_id INTEGER NOT NULL REFERENCES code_scopes(id),
        path TEXT NOT NULL,
        path_norm TEXT NOT NULL,
        name_norm TEXT NOT NULL,
        language TEXT NOT NULL,
        hash TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        identity TEXT,
        error TEXT,
        indexed_at TEXT NOT NULL,
        UNIQUE (scope_id, path)
    )""",
    """CREATE TABLE code_symbols (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        scope_id INTEGER NOT NULL REFERENCES code_scopes(id),
        file_id INTEGER NOT NULL REFERENCES code_files(id),
        symbol_id TEXT NOT NULL,
        name TEXT NOT NULL,
        qualname TEXT NOT NULL,
        kind TEXT NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        signature TEXT NOT NULL,
        doc TEXT NOT NULL,
        snippet TEXT NOT NULL,
        name_seg TEXT NOT NULL,
        content_seg TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        UNIQUE (scope_id, symbol_id)
    )""",
    "CREATE INDEX code_symbols_by_file ON code_symbols (file_id)",
    "CREATE INDEX code_symbols_by_name ON code_symbols (name_seg)",
    """CREATE TABLE code_edges (
        id INTEGER PRIMARY KEY,
        scope_id INTEGER NOT NULL REFERENCES code_scopes(id),
        file_id INTEGER NOT NULL REFERENCES code_files(id),
        ordinal INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('calls', 'imports', 'extends')),
        source_id TEXT NOT NULL,
        target_name TEXT NOT NULL,
        target_last TEXT NOT NULL,
        line INTEGER NOT NULL,
        target_id TEXT,
        confidence TEXT NOT NULL,
        UNIQUE (file_id, ordinal)
    )""",
    "CREATE INDEX code_edges_by_target ON code_edges (scope_id, target_id) "
    "WHERE target_id IS NOT NULL",
    "CREATE INDEX code_edges_by_source ON code_edges (scope_id, source_id)",
    "CREATE INDEX code_edges_by_kind ON code_edges (scope_id, kind, target_last)",
    CODE_SYMBOLS_FTS.create_sql(),
    *CODE_SYMBOLS_FTS.trigger_sql(),
]
