"""Purge, redact and the online backup on SQLite (DESIGN §7a): ``SecretStore`` and ``Backup``.

Physical erasure takes three things SQLite does not do by default:

* ``PRAGMA secure_delete = ON`` on the erasing connection, so the cells and pages a delete
  or an overwrite frees are zeroed instead of only unlinked;
* FTS5 ``optimize`` on every full-text index: an external-content index deletes by appending
  a tombstone, and the old term stays in its segment until the segments are merged (the
  thread-search word index too: it keeps whole words, and the CJK index, whose bigrams can
  be whole words; the trigram index keeps only three-character pieces);
* ``VACUUM``: a copy written before (a row updated, a page freed or split by an ordinary
  connection) may survive in a free page or a free cell; rewriting the file leaves none;
* ``wal_checkpoint(TRUNCATE)`` once the other connections are idle: until then the old pages
  live on as frames of the ``-wal`` file (a passive checkpoint copies them but keeps the file).

A vector is zeroed in place before its row is deleted (``vec0`` keeps deleted vectors' bytes
in its chunk until the chunk is rewritten).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw

from recallbox.errors import InvalidArgument, StoreUnavailable
from recallbox.storage.secrets import ErasedRows, Erasure, RedactedRows, SecretTarget, TextRewrite
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.connection import (
    DB_FILE_MODE,
    ConnectionPool,
    driver_errors,
    never_wait,
)
from recallbox.storage.sqlite.corpora import CORPORA
from recallbox.storage.sqlite.erase_targets import code_file_clause, source_clause, target_messages
from recallbox.storage.sqlite.literal_cjk import CJK_TABLE
from recallbox.storage.sqlite.literal_words import WORDS_TABLE
from recallbox.storage.sqlite.redact import redact
from recallbox.storage.sqlite.rows import json_list
from recallbox.storage.sqlite.schema import FTS_INDEXES
from recallbox.storage.values import chunk_id

CHECKPOINT_ATTEMPTS = 40
"""How many times a truncating checkpoint is tried while other connections still read."""
CHECKPOINT_BACKOFF_S = 0.025
"""The first pause between two checkpoint attempts (doubled each time, up to the cap)."""
CHECKPOINT_BACKOFF_MAX_S = 0.5
BACKUP_PAGES_PER_STEP = 1024
"""Pages the online backup copies per step (writers get the lock between steps)."""


def _chunk_ids(conn: apsw.Connection, uid: str) -> list[str]:
    """The public ids of the transcript chunks holding message ``uid``."""
    rows: list[Any] = conn.execute(
        "SELECT t.channel, c.first_seq, c.part FROM transcript_chunks c "
        "JOIN threads t ON t.id = c.thread_id "
        "WHERE EXISTS (SELECT 1 FROM json_each(c.message_ids) WHERE value = ?)",
        (uid,),
    ).fetchall()
    return [chunk_id(str(r[0]), int(r[1]), int(r[2])) for r in rows]


def _drop_thread(conn: apsw.Connection, channel: str) -> tuple[int, int, list[str]]:
    """Delete thread ``channel`` with its chunks, generations, stored tool outputs and import
    ledger; returns the threads (0 or 1), the chunks deleted and the outputs' handles."""
    row = conn.execute("SELECT id FROM threads WHERE channel = ?", (channel,)).fetchone()
    if row is None:
        return 0, 0, []
    thread = int(row[0])
    chunks = conn.execute(
        "DELETE FROM transcript_chunks WHERE thread_id = ? RETURNING id", (thread,)
    ).fetchall()
    files = [
        int(r[0])
        for r in conn.execute(
            "SELECT DISTINCT file_id FROM import_records WHERE channel = ?", (channel,)
        )
    ]
    conn.execute("DELETE FROM import_records WHERE channel = ?", (channel,))
    for file_id in files:
        if (
            conn.execute(
                "SELECT 1 FROM import_records WHERE file_id = ? LIMIT 1", (file_id,)
            ).fetchone()
            is None
        ):
            conn.execute("DELETE FROM import_nodes WHERE file_id = ?", (file_id,))
            conn.execute("DELETE FROM import_files WHERE id = ?", (file_id,))
    outputs = conn.execute(
        "DELETE FROM tool_outputs WHERE thread_id = ? RETURNING handle", (thread,)
    ).fetchall()
    conn.execute("DELETE FROM generations WHERE thread_id = ?", (thread,))
    conn.execute("DELETE FROM threads WHERE id = ?", (thread,))
    return 1, len(chunks), [str(r[0]) for r in outputs]


def _forget_hits(conn: apsw.Connection, targets: Sequence[str]) -> int:
    """Delete the hit-log rows that target ``targets``; blank the query of every row of the
    same recall events (same time and query). Returns the rows deleted."""
    if not targets:
        return 0
    keys = json_list(targets)
    conn.execute(
        "WITH hit AS (SELECT at, query, event FROM hit_log WHERE target_id IN "
        "(SELECT value FROM json_each(?))) UPDATE hit_log SET query = NULL WHERE query IS NOT "
        "NULL AND ((at, query) IN (SELECT at, query FROM hit) OR event IN (SELECT event FROM hit))",
        (keys,),
    )
    deleted = conn.execute(
        "DELETE FROM hit_log WHERE target_id IN (SELECT value FROM json_each(?)) RETURNING 1",
        (keys,),
    ).fetchall()
    return len(deleted)


def purge(conn: apsw.Connection, target: SecretTarget) -> ErasedRows:
    """:meth:`SecretStore.purge_rows` inside an open write transaction."""
    found = target_messages(conn, target)
    targets = [uid for _, uid, _, _ in found]
    rechunk: dict[str, int] = {}
    for rowid, uid, channel, seq in found:
        if channel != target.channel:
            targets += _chunk_ids(conn, uid)
            rechunk[channel] = min(seq, rechunk.get(channel, seq))
        conn.execute("DELETE FROM import_records WHERE message_uid = ?", (uid,))
        conn.execute("DELETE FROM messages WHERE id = ?", (rowid,))
    chunks = threads = 0
    handles: list[str] = []
    if target.channel is not None:
        targets += _thread_chunk_ids(conn, target.channel)
        threads, chunks, handles = _drop_thread(conn, target.channel)
    if target.handle is not None:
        handles += [
            str(r[0])
            for r in conn.execute(
                "DELETE FROM tool_outputs WHERE handle = ? RETURNING handle", (target.handle,)
            )
        ]
    targets += handles
    memories = sections = 0
    if target.key is not None:
        memories = len(
            conn.execute(
                "DELETE FROM memory_entries WHERE key = ? RETURNING 1", (target.key,)
            ).fetchall()
        )
        targets += [target.key] if memories else []
    if target.source is not None:
        where, params = source_clause(target.source)
        uids = conn.execute(
            f"DELETE FROM knowledge_sections WHERE {where} RETURNING uid", params
        ).fetchall()
        sections = len(uids)
        targets += [str(r[0]) for r in uids]
    files = 0
    if target.source is not None:
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


def _drop_code_files(conn: apsw.Connection, source: str) -> tuple[int, list[str]]:
    """Delete the code files ``source`` names with their symbols and edges; returns the files
    deleted and the public ids of their symbols."""
    where, params = code_file_clause(source)
    files = [
        int(r[0]) for r in conn.execute(f"SELECT f.id FROM code_files f WHERE {where}", params)
    ]
    if not files:
        return 0, []
    ids = json_list(files)
    keys = [
        str(r[0])
        for r in conn.execute(
            "SELECT sc.name || char(31) || s.symbol_id FROM code_symbols s JOIN code_scopes sc "
            "ON sc.id = s.scope_id WHERE s.file_id IN (SELECT value FROM json_each(?))",
            (ids,),
        )
    ]
    for table, column in (
        ("code_edges", "file_id"),
        ("code_symbols", "file_id"),
        ("code_files", "id"),
    ):
        conn.execute(
            f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))", (ids,)
        )
    return len(files), keys


def _thread_chunk_ids(conn: apsw.Connection, channel: str) -> list[str]:
    rows: list[Any] = conn.execute(
        "SELECT c.first_seq, c.part FROM transcript_chunks c JOIN threads t "
        "ON t.id = c.thread_id WHERE t.channel = ?",
        (channel,),
    ).fetchall()
    return [chunk_id(channel, int(r[0]), int(r[1])) for r in rows]


def drop_stale_vectors(conn: apsw.Connection) -> int:
    """Zero and delete every vector whose row is gone or whose text changed since."""
    spaces: list[Any] = conn.execute("SELECT id, owner, dim FROM embedding_spaces").fetchall()
    dropped = 0
    for space_id, owner, dim in spaces:
        corpus = CORPORA.get(str(owner))
        if corpus is None:
            continue
        table = vectors.table_name(int(space_id))
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone() is None:
            continue
        vectors.load_sqlite_vec(conn)
        stale = [
            int(r[0])
            for r in conn.execute(
                f"SELECT v.rowid FROM {table} v WHERE NOT EXISTS (SELECT 1 FROM embeddings e "
                f"JOIN {corpus.table} r ON r.id = e.target_rowid AND r.content_hash = "
                "e.content_hash WHERE e.space_id = ? AND e.target_rowid = v.rowid)",
                (int(space_id),),
            )
        ]
        zero = vectors.to_blob([0.0] * int(dim))
        for rowid in stale:
            conn.execute(f"UPDATE {table} SET embedding = ? WHERE rowid = ?", (zero, rowid))
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        if stale:  # the in-memory copies of this space (vector_cache.py) hold them: read again
            vectors.bump_version(conn, int(space_id))
        conn.execute(
            f"DELETE FROM embeddings WHERE space_id = ? AND NOT EXISTS (SELECT 1 FROM "
            f"{corpus.table} r WHERE r.id = embeddings.target_rowid AND r.content_hash = "
            "embeddings.content_hash)",
            (int(space_id),),
        )
        dropped += len(stale)
    return dropped


def optimize_indexes(conn: apsw.Connection) -> int:
    """Merge every full-text index into one segment (drops deleted terms); returns the count."""
    names = [*FTS_INDEXES, WORDS_TABLE, CJK_TABLE]
    for name in names:
        conn.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
    return len(names)


def truncate_wal(conn: apsw.Connection) -> tuple[bool, int]:
    """``wal_checkpoint(TRUNCATE)`` until it completes (another connection reading makes it
    busy); returns whether it did and how many attempts it took. Each attempt finds a reader
    busy at once (:func:`never_wait`): the busy handler would wait its whole timeout for the
    reader, each attempt, where the backoff here is what paces the retries."""
    pause = CHECKPOINT_BACKOFF_S
    for attempt in range(1, CHECKPOINT_ATTEMPTS + 1):
        with never_wait(conn):
            row = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if row is not None and int(row[0]) == 0:
            return True, attempt
        time.sleep(pause)
        pause = min(pause * 2, CHECKPOINT_BACKOFF_MAX_S)
    return False, CHECKPOINT_ATTEMPTS


class SecretsMixin:
    """:class:`~recallbox.storage.secrets.SecretStore` and ``Backup`` for ``SQLiteStore``."""

    pool: ConnectionPool
    path: str

    def secure_delete(self) -> None:
        with self.pool.reading() as conn:
            conn.execute("PRAGMA secure_delete = ON")

    def purge_rows(self, target: SecretTarget) -> ErasedRows:
        with self.pool.transaction() as conn:
            return purge(conn, target)

    def redact_rows(self, target: SecretTarget, rewrite: TextRewrite) -> RedactedRows:
        with self.pool.transaction() as conn:
            return redact(conn, target, rewrite)

    def finish_erasure(self) -> Erasure:
        with self.pool.transaction() as conn:
            dropped = drop_stale_vectors(conn)
            optimized = optimize_indexes(conn)
        if self.pool.is_memory:
            return Erasure(dropped, optimized, wal_truncated=True, checkpoint_attempts=0)
        with self.pool.reading() as conn:
            conn.execute("VACUUM")  # no free page or free cell keeps an older copy
            done, attempts = truncate_wal(conn)
        return Erasure(dropped, optimized, wal_truncated=done, checkpoint_attempts=attempts)

    def backup(self, destination: str) -> int:
        if self.pool.is_memory:
            raise InvalidArgument("an in-memory store has no file to back up")
        target = Path(destination)
        try:
            fd = os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, DB_FILE_MODE)
        except FileExistsError as exc:
            raise InvalidArgument(f"{destination!r} exists; back up to a new file") from exc
        except OSError as exc:
            raise StoreUnavailable(
                f"cannot create the backup file {destination!r} ({exc.strerror or exc}); "
                "choose a writable location"
            ) from exc
        os.close(fd)
        try:
            with driver_errors(destination):
                copy = apsw.Connection(destination)
                try:
                    with self.pool.reading() as conn, copy.backup("main", conn, "main") as job:
                        while not job.done:
                            job.step(BACKUP_PAGES_PER_STEP)
                        pages = int(job.pagecount)
                finally:
                    copy.close()
        except BaseException:
            target.unlink(missing_ok=True)
            raise
        return pages
