"""Schema of the SQLite backend: numbered migrations and the full-text index definitions.

Migrations are plain lists of statements, applied in order, one ``BEGIN IMMEDIATE``
transaction each, and recorded in ``schema_migrations`` (a data step commits its own batches,
resumes after an interruption, and is recorded once done). A database whose highest recorded
migration is above :data:`LATEST_VERSION` was written by a newer recallbox and is refused.

Full-text indexes are external-content FTS5 tables kept in sync by triggers that delete with
the **old** values (an index must be deleted from with exactly the text it was fed). Their
definitions live in :data:`FTS_INDEXES` so ``doctor --repair`` can recreate them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from recallbox.storage.sqlite.fts_index import FtsIndex
from recallbox.storage.sqlite.literal_index import (
    MESSAGES_CJK,
    MESSAGES_LITERAL,
    MESSAGES_LITERAL_V8,
    MESSAGES_LITERAL_V14,
    MESSAGES_WORDS,
)
from recallbox.storage.sqlite.schema_code import CODE_SYMBOLS_FTS, M007_CODE

__all__ = ["FtsIndex"]

from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.session_merge import MIRROR_STEPS, merge_session_threads

#: A migration: statements run in one transaction, or a data step (see the module docstring).
DataStep = Callable[[ConnectionPool], None]
Steps = list[str] | DataStep

ROLE_CHECK = "role IN ('user', 'assistant', 'tool', 'system')"
KIND_CHECK = "kind IN ('message', 'machine_event', 'compaction_summary')"


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
MIGRATIONS: list[tuple[int, str, Steps]] = [
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

# Migration 3 (transcript import, DESIGN §4.5): the sync ledger of imported files. ``import_files``
# holds one row per transcript file: its stat, the hash of the consumed prefix (and of the last
# bytes before the cursor, the cheap check of an unchanged file), the byte/line cursor and the
# reader state to resume from. ``import_records`` maps each record key of a file (a Claude Code
# uuid or API message id, else the hash of the source line) to the message it became, with the
# sync that last saw it (a rewritten file's vanished records are the ones not seen). Claude Code
# branch structure (``parentUuid``) lives in ``import_nodes`` so a sync never loads a whole file.
_M003_IMPORTS = [
    """CREATE TABLE import_files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        format TEXT NOT NULL,
        identity TEXT,
        size INTEGER NOT NULL DEFAULT 0,
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        prefix_hash TEXT NOT NULL DEFAULT '',
        tail_hash TEXT NOT NULL DEFAULT '',
        cursor_bytes INTEGER NOT NULL DEFAULT 0,
        cursor_line INTEGER NOT NULL DEFAULT 0,
        sync_count INTEGER NOT NULL DEFAULT 0,
        state TEXT NOT NULL DEFAULT '{}',
        synced_at TEXT
    )""",
    """CREATE TABLE import_records (
        file_id INTEGER NOT NULL REFERENCES import_files(id),
        record_key TEXT NOT NULL,
        channel TEXT NOT NULL,
        message_uid TEXT NOT NULL,
        node TEXT,
        content_hash TEXT NOT NULL,
        sync_id INTEGER NOT NULL,
        PRIMARY KEY (file_id, record_key)
    ) WITHOUT ROWID""",
    "CREATE INDEX import_files_by_identity ON import_files (identity)",
    "CREATE INDEX import_records_by_node ON import_records (file_id, node) WHERE node IS NOT NULL",
    "CREATE INDEX import_records_by_message ON import_records (message_uid)",
    """CREATE TABLE import_nodes (
        file_id INTEGER NOT NULL REFERENCES import_files(id),
        uuid TEXT NOT NULL,
        parent TEXT,
        root TEXT NOT NULL,
        side INTEGER NOT NULL,
        conversational INTEGER NOT NULL,
        line INTEGER NOT NULL,
        superseded INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (file_id, uuid)
    ) WITHOUT ROWID""",
    "CREATE INDEX import_nodes_children ON import_nodes (file_id, side, parent)",
    "CREATE INDEX import_nodes_leaf ON import_nodes (file_id, side, root, conversational, line)",
]

# The transcripts domain (DESIGN §4.5): imported threads as chunks of consecutive turns, keyed
# by (thread, first seq, part), with their own ranked FTS5 index (external content, old-value
# triggers, checked by ``doctor``). Row ids are never reused (AUTOINCREMENT), so the vector of a
# replaced chunk can never be taken for its successor's. ``message_offsets`` holds where each
# message starts in the chunk text.
TRANSCRIPT_CHUNKS_FTS = FtsIndex(
    name="transcript_chunks_fts",
    content_table="transcript_chunks",
    columns=("content_seg",),
    options="tokenize='porter unicode61 remove_diacritics 2'",
    probe="token",
)
FTS_INDEXES[TRANSCRIPT_CHUNKS_FTS.name] = TRANSCRIPT_CHUNKS_FTS

_M003_IMPORTS += [
    """CREATE TABLE transcript_chunks (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        thread_id INTEGER NOT NULL REFERENCES threads(id),
        generation_id INTEGER NOT NULL REFERENCES generations(id),
        first_seq INTEGER NOT NULL,
        part INTEGER NOT NULL,
        last_seq INTEGER NOT NULL,
        message_ids TEXT NOT NULL,
        message_offsets TEXT NOT NULL,
        source TEXT,
        line_start INTEGER,
        line_end INTEGER,
        content TEXT NOT NULL,
        content_seg TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        UNIQUE (thread_id, first_seq, part)
    )""",
    TRANSCRIPT_CHUNKS_FTS.create_sql(),
    *TRANSCRIPT_CHUNKS_FTS.trigger_sql(),
]

MIGRATIONS.append(
    (3, "transcript import ledger (files, records, branch nodes) and chunks", _M003_IMPORTS)
)
#: Exclusions keyed by their whole normalised text (DESIGN §5 "Matching a source"): ``name``
#: is its basename (what thread sources and exclusions without ``/`` match), ``path`` the whole
#: normalised path when the exclusion holds a ``/`` (knowledge documents and code files match
#: it by path), ``identity`` the file identity taken when it was made.
_M004_EXCLUSIONS = [
    "CREATE TABLE excluded_sources_v4 (exclusion TEXT PRIMARY KEY, name TEXT NOT NULL, "
    "path TEXT, identity TEXT, added_at TEXT NOT NULL)",
    "INSERT INTO excluded_sources_v4 (exclusion, name, path, identity, added_at) "
    "SELECT name, name, NULL, identity, added_at FROM excluded_sources",
    "DROP TABLE excluded_sources",
    "ALTER TABLE excluded_sources_v4 RENAME TO excluded_sources",
    "CREATE INDEX excluded_sources_name ON excluded_sources (name)",
]
MIGRATIONS.append((4, "source exclusions keyed by their normalised path", _M004_EXCLUSIONS))

LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)

# Migration 5 (knowledge and memory, DESIGN §2, §4.3, §4.4). ``knowledge_sections``: one row per
# section of a document ``(scope, source)``, never deleted — a removed section keeps its row
# (``removed = 1``) and its ``content_seg`` is emptied, so it leaves the keyword index and comes
# back with its id when restored; the gate reads ``source_name``/``source_path``/``identity``
# (normalised basename and path, file identity). ``memory_entries``: one row per key; the
# highest number issued per type lives in ``memory_key_counters`` (keys are never reused).
# Neither corpus has threads: ``thread_id`` is the vector partition key, 0 for every row (one
# partition; scope and exclusions filter the exact nearest-neighbour search, vectors.py).
# (``decay`` reads the hit-log above its watermark: migration 6's ``hit_log_watermarks``.) Both FTS5
# indexes update only when the indexed text changes (a move, a decay or a touch leave them).
KNOWLEDGE_SECTIONS_FTS = FtsIndex(
    name="knowledge_sections_fts",
    content_table="knowledge_sections",
    columns=("content_seg",),
    options="tokenize='porter unicode61 remove_diacritics 2'",
    probe="token",
    only_changes=True,
)
MEMORY_ENTRIES_FTS = FtsIndex(
    name="memory_entries_fts",
    content_table="memory_entries",
    columns=("content_seg",),
    options="tokenize='porter unicode61 remove_diacritics 2'",
    probe="token",
    only_changes=True,
)
FTS_INDEXES[KNOWLEDGE_SECTIONS_FTS.name] = KNOWLEDGE_SECTIONS_FTS
FTS_INDEXES[MEMORY_ENTRIES_FTS.name] = MEMORY_ENTRIES_FTS
MEMORY_STATE_CHECK = "state IN ('active', 'dormant', 'archived')"

_M005_KNOWLEDGE_MEMORY = [
    """CREATE TABLE knowledge_sections (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uid TEXT NOT NULL UNIQUE,
        scope TEXT,
        source TEXT NOT NULL,
        source_path TEXT NOT NULL,
        source_name TEXT NOT NULL,
        identity TEXT,
        root TEXT,
        heading TEXT,
        level INTEGER NOT NULL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        heading_line INTEGER,
        content TEXT NOT NULL,
        content_seg TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        body_hash TEXT NOT NULL,
        removed INTEGER NOT NULL DEFAULT 0,
        thread_id INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX knowledge_sections_by_document ON knowledge_sections (source, scope)",
    "CREATE INDEX knowledge_sections_by_root ON knowledge_sections (root, scope) WHERE removed = 0",
    KNOWLEDGE_SECTIONS_FTS.create_sql(),
    *KNOWLEDGE_SECTIONS_FTS.trigger_sql(),
    f"""CREATE TABLE memory_entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        key TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        number INTEGER NOT NULL,
        title TEXT,
        body TEXT NOT NULL,
        content TEXT NOT NULL,
        content_seg TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        identity_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK ({MEMORY_STATE_CHECK}),
        state_since TEXT,
        created TEXT,
        last_referenced TEXT,
        ref_count INTEGER NOT NULL DEFAULT 0,
        evergreen INTEGER NOT NULL DEFAULT 0,
        superseded_by TEXT,
        thread_id INTEGER NOT NULL DEFAULT 0,
        updated_at TEXT NOT NULL
    )""",
    "CREATE INDEX memory_entries_by_identity ON memory_entries (identity_hash)",
    MEMORY_ENTRIES_FTS.create_sql(),
    *MEMORY_ENTRIES_FTS.trigger_sql(),
    "CREATE TABLE memory_key_counters (type TEXT PRIMARY KEY, highest INTEGER NOT NULL)",
]
MIGRATIONS.append((5, "knowledge sections, memory entries, key counters", _M005_KNOWLEDGE_MEMORY))

#: The hit-log grown up and stored tool outputs (#12, DESIGN §5, §6). ``verb`` names the verb of
#: a drill row, ``event`` ties the rows of one recall together; ``hit_log_state`` keeps the count
#: of rows dropped while the database was busy; ``hit_log_watermarks`` the last row each
#: consumer (``decay``, the lazy embedding pass) has read — rotation deletes only below all of
#: them. ``tool_outputs`` keeps each original under its handle with what its privacy follows:
#: its thread, and its source (normalised basename, path, file identity).
_M006_RECALL = [
    "ALTER TABLE hit_log ADD COLUMN verb TEXT",
    "ALTER TABLE hit_log ADD COLUMN event TEXT",
    "CREATE INDEX hit_log_targets ON hit_log (target_id, domain)",
    "CREATE TABLE hit_log_state (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE hit_log_watermarks (consumer TEXT PRIMARY KEY, upto INTEGER NOT NULL, "
    "updated_at TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE tool_outputs (
        id INTEGER PRIMARY KEY,
        handle TEXT NOT NULL UNIQUE,
        thread_id INTEGER REFERENCES threads(id),
        source TEXT,
        source_path TEXT,
        source_identity TEXT,
        tool TEXT,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX tool_outputs_by_thread ON tool_outputs (thread_id)",
]
MIGRATIONS.append((6, "hit-log drills, dropped count, watermarks; tool outputs", _M006_RECALL))

# The code domain (DESIGN §2, §4.5; issue #11): ``schema_code.py``.
FTS_INDEXES[CODE_SYMBOLS_FTS.name] = CODE_SYMBOLS_FTS
MIGRATIONS.append((7, "code index: scopes, files, symbols, edges and their FTS5 index", M007_CODE))

# Migration 8 (#14, thread search at scale): the literal index keyed by thread, behind the
# writes (``literal_index.py``), replacing ``messages_trgm``. ``generations.first_seq`` is the
# first ``seq`` of each generation (a generation is the key range ``[first_seq, next first_seq)``
# of its thread). Every searchable message is queued; the batched part of the migration
# (``upgrades.py``) indexes them, resumably, with progress.
_M008_LITERAL = [
    "ALTER TABLE generations ADD COLUMN first_seq INTEGER",
    "UPDATE generations SET first_seq = coalesce("
    "(SELECT min(m.seq) FROM messages m WHERE m.generation_id = generations.id), "
    "(SELECT t.next_seq FROM threads t WHERE t.id = generations.thread_id))",
    *(f"DROP TRIGGER IF EXISTS {name}" for name in MESSAGES_TRGM.trigger_names()),
    f"DROP TABLE IF EXISTS {MESSAGES_TRGM.name}",
    MESSAGES_LITERAL_V8.create_sql(),
    MESSAGES_LITERAL_V8.backlog_sql(),
    *MESSAGES_LITERAL_V8.trigger_sql(),
    MESSAGES_LITERAL_V8.enqueue_all_sql(),
]
MIGRATION_LITERAL_INDEX = "literal index by thread (trigram detail=full, behind the writes)"
MIGRATIONS.append((8, MIGRATION_LITERAL_INDEX, _M008_LITERAL))

# Migration 9 (#14, size): each text stored once. ``content_seg`` (the CJK-segmented text the
# ranked index reads) is ``''`` where it equals ``content`` (every text without CJK); the ranked
# indexes read the text through a view. The batched part blanks the copies and then points the
# indexes at the views (their index data is unchanged: the view yields the same text).
_SEG_TEXT = "CASE WHEN {r}.content_seg = '' THEN {r}.content ELSE {r}.content_seg END"
MESSAGES_FTS_TEXT_ONCE = replace(MESSAGES_FTS, source="messages_fts_source", values=(_SEG_TEXT,))
TRANSCRIPT_CHUNKS_FTS_TEXT_ONCE = replace(
    TRANSCRIPT_CHUNKS_FTS, source="transcript_chunks_fts_source", values=(_SEG_TEXT,)
)
TEXT_ONCE_INDEXES = (MESSAGES_FTS_TEXT_ONCE, TRANSCRIPT_CHUNKS_FTS_TEXT_ONCE)
_M009_TEXT_ONCE = [
    *(
        f"DROP TRIGGER IF EXISTS {name}"
        for index in TEXT_ONCE_INDEXES
        for name in index.trigger_names()
    ),
    *(
        f"CREATE VIEW {index.reads} AS SELECT r.id AS id, {_SEG_TEXT.replace('{r}', 'r')} "
        f"AS content_seg FROM {index.content_table} r"
        for index in TEXT_ONCE_INDEXES
    ),
]
MIGRATION_TEXT_ONCE = "text stored once (content_seg only where it differs)"
MIGRATIONS.append((9, MIGRATION_TEXT_ONCE, _M009_TEXT_ONCE))

# What ``doctor`` checks and repairs today (the migrations above keep their own definitions).
del FTS_INDEXES[MESSAGES_TRGM.name]
FTS_INDEXES[MESSAGES_FTS.name] = MESSAGES_FTS_TEXT_ONCE
FTS_INDEXES[TRANSCRIPT_CHUNKS_FTS.name] = TRANSCRIPT_CHUNKS_FTS_TEXT_ONCE
LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)

# Transcript threads keyed by the session id inside the file (#17, ``session_merge``).
MIGRATIONS.append((10, "import records may mirror another file's, found by thread", MIRROR_STEPS))
MIGRATIONS.append((11, "transcript threads keyed by session id", merge_session_threads))
# Migration 12 (#12): ``embedding_spaces.version`` counts the writes to a space's vectors, so
# their in-memory copy (``vector_cache.py``) knows on any snapshot whether it is current.
_M012 = ["ALTER TABLE embedding_spaces ADD COLUMN version INTEGER NOT NULL DEFAULT 0"]
MIGRATIONS.append((12, "a version of each embedding space's vectors", _M012))
LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)

# Migration 13 (#21, #14): the generation index also holds ``created_at`` and
# ``content_hash``, so the episode breaks around a search's candidates and the candidates'
# heads (``episodes.py``) are read from the index alone: both columns lie after ``content``
# in the row, and reading them walked each long message's overflow pages (about 1 µs a row,
# 50 µs for a 100 000-character one; most of a search's reads at a million messages).
# And each embedding space counts its vectors (``embedding_spaces.vectors``, kept by triggers
# on ``embeddings``): ``count(*)`` of a million rows cost 42 ms on every search's
# ``embedding_spaces()``.
_M013 = [
    "DROP INDEX IF EXISTS messages_by_generation",
    "CREATE INDEX messages_by_generation ON messages "
    "(generation_id, seq, created_at, content_hash)",
    "ALTER TABLE embedding_spaces ADD COLUMN vectors INTEGER NOT NULL DEFAULT 0",
    "UPDATE embedding_spaces SET vectors = "
    "(SELECT count(*) FROM embeddings e WHERE e.space_id = embedding_spaces.id)",
    "CREATE TRIGGER embeddings_count_ai AFTER INSERT ON embeddings BEGIN "
    "UPDATE embedding_spaces SET vectors = vectors + 1 WHERE id = new.space_id; END",
    "CREATE TRIGGER embeddings_count_ad AFTER DELETE ON embeddings BEGIN "
    "UPDATE embedding_spaces SET vectors = vectors - 1 WHERE id = old.space_id; END",
    "CREATE TRIGGER embeddings_count_au AFTER UPDATE OF space_id ON embeddings BEGIN "
    "UPDATE embedding_spaces SET vectors = vectors - 1 WHERE id = old.space_id; "
    "UPDATE embedding_spaces SET vectors = vectors + 1 WHERE id = new.space_id; END",
]
MIGRATIONS.append((13, "generation index with created_at, content_hash; vector counts", _M013))
# Migration 14 (#14, literal search at scale): the word index (``literal_words.py``) beside the
# trigram index: the same keys and backlog; the literal index's triggers now delete from both.
# The batched part (``upgrades.py``) writes the words of every message the trigram index holds
# (the queued ones get both from the indexer).
_M014_WORDS = [
    MESSAGES_WORDS.create_sql(),
    *(f"DROP TRIGGER IF EXISTS {name}" for name in MESSAGES_LITERAL_V14.trigger_names()),
    *MESSAGES_LITERAL_V14.trigger_sql(),
]
MIGRATION_WORD_INDEX = "word index of thread search (word and boundary positions)"
MIGRATIONS.append((14, MIGRATION_WORD_INDEX, _M014_WORDS))
LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)
# Migration 15 (#14, size): no query reads messages by ``tool_call_id`` (a tool result's link is
# read with its row), yet the index cost every tool result a random-key insert and ~5 bytes.
MIGRATION_NO_TOOL_CALL_INDEX = "drop the index on tool_call_id (no query reads it)"
MIGRATIONS.append(
    (15, MIGRATION_NO_TOOL_CALL_INDEX, ["DROP INDEX IF EXISTS messages_by_tool_call"])
)
LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)
# Migration 16 (#14, search memory independent of the history): the CJK index
# (``literal_cjk.py``) beside the other literal indexes, for terms under 3 characters; the
# batched part (``upgrades.py``) fills it from the rows the trigram index holds.
_M016_CJK = [
    MESSAGES_CJK.create_sql(),
    *(f"DROP TRIGGER IF EXISTS {name}" for name in MESSAGES_LITERAL.trigger_names()),
    *MESSAGES_LITERAL.trigger_sql(),
]
MIGRATION_CJK_INDEX = "CJK index of thread search (short CJK terms in search order)"
MIGRATIONS.append((16, MIGRATION_CJK_INDEX, _M016_CJK))
LITERAL_INDEXES = {i.name: i for i in (MESSAGES_LITERAL, MESSAGES_WORDS, MESSAGES_CJK)}
LATEST_VERSION = max(version for version, _, _ in MIGRATIONS)
