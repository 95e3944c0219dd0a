"""Schema of the SQLite backend: numbered migrations and the full-text index definitions.

Migrations are plain lists of statements, applied in order, one ``BEGIN IMMEDIATE``
transaction each, and recorded in ``schema_migrations``. A database whose highest recorded
migration is above :data:`LATEST_VERSION` was written by a newer recallbox and is refused.

Full-text indexes are external-content FTS5 tables kept in sync by triggers that delete with
the **old** values (an index must be deleted from with exactly the text it was fed). Their
definitions live in :data:`FTS_INDEXES` so ``doctor --repair`` can recreate them.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLE_CHECK = "role IN ('user', 'assistant', 'tool', 'system')"
KIND_CHECK = "kind IN ('message', 'machine_event', 'compaction_summary')"


@dataclass(frozen=True, slots=True)
class FtsIndex:
    """One external-content FTS5 index over a content table."""

    name: str
    content_table: str
    columns: tuple[str, ...]
    options: str  # the tokenize/detail part of the CREATE statement
    probe: str  # "token" (ranked word index) or "trigram" (substring index)

    def create_sql(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"CREATE VIRTUAL TABLE {self.name} USING fts5({cols}, "
            f"content='{self.content_table}', content_rowid='id', {self.options})"
        )

    def trigger_names(self) -> tuple[str, str, str]:
        return (f"{self.name}_ai", f"{self.name}_ad", f"{self.name}_au")

    def trigger_sql(self) -> list[str]:
        cols = ", ".join(self.columns)
        new = ", ".join(f"new.{c}" for c in self.columns)
        old = ", ".join(f"old.{c}" for c in self.columns)
        ai, ad, au = self.trigger_names()
        return [
            f"CREATE TRIGGER {ai} AFTER INSERT ON {self.content_table} BEGIN "
            f"INSERT INTO {self.name}(rowid, {cols}) VALUES (new.id, {new}); END",
            f"CREATE TRIGGER {ad} AFTER DELETE ON {self.content_table} BEGIN "
            f"INSERT INTO {self.name}({self.name}, rowid, {cols}) "
            f"VALUES ('delete', old.id, {old}); END",
            f"CREATE TRIGGER {au} AFTER UPDATE OF {cols} ON {self.content_table} BEGIN "
            f"INSERT INTO {self.name}({self.name}, rowid, {cols}) "
            f"VALUES ('delete', old.id, {old}); "
            f"INSERT INTO {self.name}(rowid, {cols}) VALUES (new.id, {new}); END",
        ]


MESSAGES_FTS = FtsIndex(
    name="messages_fts",
    content_table="messages",
    columns=("content_seg",),
    options="tokenize='porter unicode61 remove_diacritics 2'",
    probe="token",
)
MESSAGES_TRGM = FtsIndex(
    name="messages_trgm",
    content_table="messages",
    columns=("content", "args_text"),
    options="tokenize='trigram', detail='none'",
    probe="trigram",
)

FTS_INDEXES: dict[str, FtsIndex] = {
    MESSAGES_FTS.name: MESSAGES_FTS,
    MESSAGES_TRGM.name: MESSAGES_TRGM,
}

# The privacy gate as one SQL condition on a thread aliased ``t`` (DESIGN §5): the thread is not
# quarantined and its source (normalised name or file identity) is not excluded. Every read
# path of every domain adds it to its WHERE clause.
THREAD_ALLOWED_SQL = (
    "(t.quarantined = 0 AND (t.source IS NULL OR ("
    "t.source NOT IN (SELECT name FROM excluded_sources) AND (t.source_identity IS NULL OR "
    "t.source_identity NOT IN (SELECT identity FROM excluded_sources "
    "WHERE identity IS NOT NULL)))))"
)

MIGRATION_TABLE_SQL = (
    "CREATE TABLE IF NOT EXISTS schema_migrations ("
    "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
)

_M001_CORE = [
    """CREATE TABLE threads (
        id INTEGER PRIMARY KEY,
        channel TEXT NOT NULL UNIQUE,
        title TEXT,
        quarantined INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        last_activity TEXT NOT NULL,
        next_seq INTEGER NOT NULL DEFAULT 1,
        source TEXT,
        source_identity TEXT
    )""",
    """CREATE TABLE generations (
        id INTEGER PRIMARY KEY,
        uid TEXT NOT NULL UNIQUE,
        thread_id INTEGER NOT NULL REFERENCES threads(id),
        number INTEGER NOT NULL,
        opened_at TEXT NOT NULL,
        closed_at TEXT,
        UNIQUE (thread_id, number)
    )""",
    f"""CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        uid TEXT NOT NULL UNIQUE,
        thread_id INTEGER NOT NULL REFERENCES threads(id),
        generation_id INTEGER NOT NULL REFERENCES generations(id),
        seq INTEGER NOT NULL,
        role TEXT NOT NULL CHECK ({ROLE_CHECK}),
        kind TEXT NOT NULL CHECK ({KIND_CHECK}),
        content TEXT NOT NULL,
        content_seg TEXT NOT NULL,
        args_text TEXT NOT NULL DEFAULT '',
        raw_content BLOB,
        tool_calls TEXT,
        tool_calls_raw TEXT,
        tool_call_id TEXT,
        model_visible INTEGER NOT NULL,
        pending INTEGER NOT NULL,
        superseded_by TEXT,
        created_at TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{{}}',
        content_hash TEXT NOT NULL,
        UNIQUE (thread_id, seq)
    )""",
    "CREATE INDEX messages_by_generation ON messages (generation_id, seq)",
    "CREATE INDEX messages_by_tool_call ON messages (tool_call_id) WHERE tool_call_id IS NOT NULL",
    "CREATE TABLE excluded_sources (name TEXT PRIMARY KEY, identity TEXT, added_at TEXT NOT NULL)",
    MESSAGES_FTS.create_sql(),
    *MESSAGES_FTS.trigger_sql(),
    MESSAGES_TRGM.create_sql(),
    *MESSAGES_TRGM.trigger_sql(),
]

# (version, name, statements). Numbers are shared with the PostgreSQL backend.
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "core threads, generations, messages and their FTS5 indexes", _M001_CORE),
]

LATEST_VERSION = MIGRATIONS[-1][0]

# Migration 2 (retrieval core, DESIGN §4.2, §5): the registry of embedding spaces (one per
# owner, model id and dimension; the sqlite-vec ``vec0`` table of a space is created when its
# first vector is written, since it needs the extension and the dimension), the bookkeeping of
# which row has a vector of which content, and the append-only hit-log.
_M002_RETRIEVAL = [
    """CREATE TABLE embedding_spaces (
        id INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        model_id TEXT NOT NULL,
        dim INTEGER NOT NULL CHECK (dim > 0),
        created_at TEXT NOT NULL,
        UNIQUE (owner, model_id, dim)
    )""",
    """CREATE TABLE embeddings (
        space_id INTEGER NOT NULL REFERENCES embedding_spaces(id),
        target_rowid INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        embedded_at TEXT NOT NULL,
        PRIMARY KEY (space_id, target_rowid)
    ) WITHOUT ROWID""",
    """CREATE TABLE hit_log (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        query TEXT,
        domain TEXT NOT NULL,
        layer TEXT,
        target_id TEXT NOT NULL,
        drilled INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX hit_log_drills ON hit_log (target_id) WHERE drilled = 1",
]

MIGRATIONS.append((2, "embedding spaces, embeddings bookkeeping, hit-log", _M002_RETRIEVAL))
LATEST_VERSION = MIGRATIONS[-1][0]
