"""Purge and the physical rewrite on PostgreSQL (DESIGN §7a): ``SecretStore`` and ``VacuumFull``.

:meth:`SecretsMixin.purge_rows` deletes the same rows as the SQLite backend, in the caller's
transaction; the keyword statistics, the overflow terms and the trigram and GIN indexes follow
in that transaction (triggers, cascades, the server's own index maintenance), so the rows are
gone for every reader at commit. :meth:`SecretsMixin.finish_erasure` then drops the vectors of
rows gone or rewritten and flushes every GIN index's pending list.

On PostgreSQL a deleted row's bytes stay in its table's file (a dead tuple) until the table is
rewritten: :meth:`SecretsMixin.vacuum_full` runs ``VACUUM FULL`` on every recallbox table
(``recallbox purge --vacuum-full``), which rewrites each file without them — it takes an
exclusive lock on each table while it runs. The server's write-ahead log, its archives and its
backups are outside recallbox (``docs/postgres.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from recallbox.storage.codecs import storable
from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import CORPORA
from recallbox.storage.postgres.redact import (
    code_file_clause,
    redact,
    source_clause,
    target_messages,
)
from recallbox.storage.secrets import ErasedRows, Erasure, RedactedRows, SecretTarget, TextRewrite
from recallbox.storage.values import chunk_id


def _chunk_ids(conn: Connection, uid: str) -> list[str]:
    """The public ids of the transcript chunks holding message ``uid``."""
    rows: list[Any] = conn.execute(
        "SELECT t.channel, c.first_seq, c.part FROM transcript_chunks c "
        "JOIN threads t ON t.id = c.thread_id WHERE c.message_ids::jsonb ? %s",
        (uid,),
    ).fetchall()
    return [chunk_id(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _drop_thread(conn: Connection, channel: str) -> tuple[int, int, list[str]]:
    """Delete thread ``channel`` with its chunks, generations, stored tool outputs and import
    ledger; returns the threads (0 or 1), the chunks deleted and the outputs' handles."""
    row = conn.execute("SELECT id FROM threads WHERE channel = %s", (channel,)).fetchone()
    if row is None:
        return 0, 0, []
    thread = int(row[0])
    chunks = conn.execute(
        "DELETE FROM transcript_chunks WHERE thread_id = %s RETURNING id", (thread,)
    ).fetchall()
    files = [
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT file_id FROM import_records WHERE channel = %s", (channel,)
        ).fetchall()
    ]
    conn.execute("DELETE FROM import_records WHERE channel = %s", (channel,))
    for file_id in files:
        left = conn.execute(
            "SELECT 1 FROM import_records WHERE file_id = %s LIMIT 1", (file_id,)
        ).fetchone()
        if left is None:
            conn.execute("DELETE FROM import_nodes WHERE file_id = %s", (file_id,))
            conn.execute("DELETE FROM import_files WHERE id = %s", (file_id,))
    outputs = conn.execute(
        "DELETE FROM tool_outputs WHERE thread_id = %s RETURNING handle", (thread,)
    ).fetchall()
    conn.execute("DELETE FROM generations WHERE thread_id = %s", (thread,))
    conn.execute("DELETE FROM threads WHERE id = %s", (thread,))
    return 1, len(chunks), [str(r[0]) for r in outputs]


def _forget_hits(conn: Connection, targets: Sequence[str]) -> int:
    """Delete the hit-log rows that target ``targets``; blank the query of every row of the
    same recall events (same time and query). Returns the rows deleted."""
    keys = [t for t in dict.fromkeys(targets) if storable(t)]
    if not keys:
        return 0
    conn.execute(
        "WITH hit AS (SELECT at, query, event FROM hit_log WHERE target_id = ANY(%s::text[])) "
        "UPDATE hit_log SET query = NULL WHERE query IS NOT NULL AND ((at, query) IN "
        "(SELECT at, query FROM hit) OR event IN (SELECT event FROM hit))",
        (keys,),
    )
    deleted = conn.execute(
        "DELETE FROM hit_log WHERE target_id = ANY(%s::text[]) RETURNING 1", (keys,)
    ).fetchall()
    return len(deleted)


def _drop_code_files(conn: Connection, source: str) -> tuple[int, list[str]]:
    """Delete the code files ``source`` names with their symbols and edges; returns the files
    deleted and the public ids of their symbols."""
    where, params = code_file_clause(source)
    files = [
        int(r[0])
        for r in conn.execute(f"SELECT f.id FROM code_files f WHERE {where}", params).fetchall()
    ]
    if not files:
        return 0, []
    keys = [
        str(r[0])
        for r in conn.execute(
            "SELECT sc.name || chr(31) || s.symbol_id FROM code_symbols s JOIN code_scopes sc "
            "ON sc.id = s.scope_id WHERE s.file_id = ANY(%s::bigint[])",
            (files,),
        ).fetchall()
    ]
    for table, column in (
        ("code_edges", "file_id"),
        ("code_symbols", "file_id"),
        ("code_files", "id"),
    ):
        conn.execute(f"DELETE FROM {table} WHERE {column} = ANY(%s::bigint[])", (files,))
    return len(files), keys


def _thread_chunk_ids(conn: Connection, channel: str) -> list[str]:
    rows: list[Any] = conn.execute(
        "SELECT c.first_seq, c.part FROM transcript_chunks c JOIN threads t "
        "ON t.id = c.thread_id WHERE t.channel = %s",
        (channel,),
    ).fetchall()
    return [chunk_id(channel, int(r[0]), int(r[1])) for r in rows]


def purge(conn: Connection, target: SecretTarget) -> ErasedRows:
    """:meth:`SecretStore.purge_rows` inside an open write transaction."""
    found = target_messages(conn, target)
    targets = [uid for _, uid, _, _ in found]
    rechunk: dict[str, int] = {}
    for rowid, uid, channel, seq in found:
        if channel != target.channel:
            targets += _chunk_ids(conn, uid)
            rechunk[channel] = min(seq, rechunk.get(channel, seq))
        conn.execute("DELETE FROM import_records WHERE message_uid = %s", (uid,))
        conn.execute("DELETE FROM messages WHERE id = %s", (rowid,))
    chunks = threads = 0
    handles: list[str] = []
    if target.channel is not None and storable(target.channel):
        targets += _thread_chunk_ids(conn, target.channel)
        threads, chunks, handles = _drop_thread(conn, target.channel)
    if target.handle is not None and storable(target.handle):
        handles += [
            str(r[0])
            for r in conn.execute(
                "DELETE FROM tool_outputs WHERE handle = %s RETURNING handle", (target.handle,)
            ).fetchall()
        ]
    targets += handles
    memories = sections = files = 0
    if target.key is not None and storable(target.key):
        memories = len(
            conn.execute(
                "DELETE FROM memory_entries WHERE key = %s RETURNING 1", (target.key,)
            ).fetchall()
        )
        targets += [target.key] if memories else []
    if target.source is not None and storable(target.source):
        where, params = source_clause(target.source)
        uids = conn.execute(
            f"DELETE FROM knowledge_sections WHERE {where} RETURNING uid", params
        ).fetchall()
        sections = len(uids)
        targets += [str(r[0]) for r in uids]
        files, keys = _drop_code_files(conn, target.source)
        targets += keys
    return ErasedRows(
        files=files,
        messages=len(found),
        threads=threads,
        chunks=chunks,
        sections=sections,
        memories=memories,
        outputs=len(handles),
        hits=_forget_hits(conn, targets),
        rechunk=tuple(sorted(rechunk.items())),
    )


def drop_stale_vectors(conn: Connection) -> int:
    """Delete every vector whose row is gone or whose text changed since."""
    dropped = 0
    for space_id, owner, _ in vectors.spaces(conn):
        corpus = CORPORA.get(owner)
        if corpus is None or not vectors.table_exists(conn, space_id):
            continue
        table = vectors.table_name(space_id)
        stale = conn.execute(
            f"DELETE FROM {table} v WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
            f"JOIN {corpus.table} r ON r.id = e.target_rowid AND r.content_hash = e.content_hash "
            "WHERE e.space_id = %s AND e.target_rowid = v.target_id) RETURNING 1",
            (space_id,),
        ).fetchall()
        if stale:
            vectors.bump_version(conn, space_id)
        conn.execute(
            f"DELETE FROM embeddings WHERE space_id = %s AND NOT EXISTS (SELECT 1 FROM "
            f"{corpus.table} r WHERE r.id = embeddings.target_rowid AND r.content_hash = "
            "embeddings.content_hash)",
            (space_id,),
        )
        dropped += len(stale)
    return dropped


def gin_indexes(conn: Connection) -> list[str]:
    """Every GIN index of the recallbox tables (keyword and literal indexes)."""
    rows = conn.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_am am ON am.oid = c.relam JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE am.amname = 'gin' AND n.nspname = current_schema() ORDER BY c.relname"
    ).fetchall()
    return [str(r[0]) for r in rows]


def recallbox_tables(conn: Connection) -> list[str]:
    """Every table of the current schema (recallbox's: the schema is recallbox's own)."""
    rows = conn.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
    ).fetchall()
    return [str(r[0]) for r in rows]


class SecretsMixin:
    """:class:`~recallbox.storage.secrets.SecretStore` and ``VacuumFull`` for ``PostgresStore``."""

    pool: PgPool

    def secure_delete(self) -> None:
        """Nothing to switch on here: see :meth:`vacuum_full` for the physical rewrite."""

    def purge_rows(self, target: SecretTarget) -> ErasedRows:
        with self.pool.transaction() as conn:
            return purge(conn, target)

    def redact_rows(self, target: SecretTarget, rewrite: TextRewrite) -> RedactedRows:
        with self.pool.transaction() as conn:
            return redact(conn, target, rewrite)

    def finish_erasure(self) -> Erasure:
        with self.pool.transaction() as conn:
            dropped = drop_stale_vectors(conn)
            indexes = gin_indexes(conn)
            for name in indexes:  # pending entries move into the index proper
                conn.execute("SELECT gin_clean_pending_list(%s::regclass)", (name,))
        # The rows are gone for every reader; their bytes stay in the table files until
        # vacuum_full() rewrites them (the server's own WAL is outside recallbox).
        return Erasure(
            dropped, len(indexes), wal_truncated=True, checkpoint_attempts=0, physical=False
        )

    def vacuum_full(self) -> int:
        """``VACUUM FULL`` every recallbox table (rewrites each file without its dead rows);
        returns how many tables were rewritten."""
        with self.pool.reading() as conn:
            tables = recallbox_tables(conn)
            for table in tables:
                conn.execute(f'VACUUM (FULL, ANALYZE) "{table}"')
        return len(tables)
