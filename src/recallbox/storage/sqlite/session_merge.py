"""The session-key migration (#17): transcript threads keyed by the session id inside the file.

Before #17 a Claude Code session file became the thread ``claude-code:<file stem>``, so a copy
of a session under another name became a second thread holding every message again. Now a
thread is keyed by the ``sessionId`` its records carry (DESIGN §2: a session id is a thread
key). This data step brings a database written before that in line:

1. **Plan** — from the import ledger: every Claude Code session file whose thread was named by
   its stem while its records name another session id (the reader state keeps both) gives
   ``claude-code:<stem>`` → ``claude-code:<session id>``, sub-threads (``…/agent-x``,
   ``…/sidechain-…``) included.
2. **Move**, one transaction per thread: a thread whose target does not exist is renamed. One
   whose target exists (another file fed that session) is merged into it: generations by
   number, its messages after the target's (new ``seq``\\ s, in order); a message whose record
   key the target already holds from another file is marked superseded by that message and
   its ledger record becomes a *mirror* of it — no message is lost, none is shown twice. Its
   chunks and the vectors of the messages that moved are dropped, with their bookkeeping
   (``vectors.forget``): the thread's next change re-chunks from there, the next ``embed``
   pass embeds them again. The moved messages leave the literal index under their old keys
   (thread, ``seq``) and are queued for it under the new ones.
3. **References** — ledger records, reader states (channel, parent) and the
   ``parent_channel`` / ``parent_session_id`` metadata of sub-thread messages follow.
4. **Last activity** — every thread's ``last_activity`` becomes the greatest ``created_at`` of
   its messages, its creation time while empty (DESIGN §2), in batches of thread ids.

Resumable: each step commits on its own and the plan is made again from what is stored, so a
run stopped anywhere is finished by the next open.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import apsw

from recallbox.storage.queries import CORPUS_MESSAGE, CORPUS_TRANSCRIPT_CHUNK
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.literal_cjk import CJK_TABLE
from recallbox.storage.sqlite.literal_index import BACKLOG_TABLE, LITERAL_TABLE, key_sql, searchable
from recallbox.storage.sqlite.literal_words import WORDS_TABLE
from recallbox.text.normalize import normalize_text

CLAUDE_FORMAT = "claude-code"
AGENT_FILE_PREFIX = "agent-"
THREAD_BATCH = 500
"""Threads whose ``last_activity`` one transaction recomputes."""
logger = logging.getLogger(__name__)

#: A thread's messages leave the literal indexes (keyed by thread and ``seq``, migrations 8
#: and 13; the word index only where it exists yet): the searchable rows not queued are the
#: ones they hold.
_UNINDEX_THREAD_SQL = (
    "DELETE FROM {table} WHERE rowid IN (SELECT " + key_sql("m") + " FROM messages m "
    f"WHERE m.thread_id = ? AND {searchable('m')} "
    f"AND NOT EXISTS (SELECT 1 FROM {BACKLOG_TABLE} b WHERE b.id = m.id))"
)
_LITERAL_TABLES = (LITERAL_TABLE, WORDS_TABLE, CJK_TABLE)
#: ... and are queued, to be indexed under their new keys (the indexer reads their values then).
_QUEUE_THREAD_SQL = (
    f"INSERT OR IGNORE INTO {BACKLOG_TABLE} (id) SELECT m.id FROM messages m "
    f"WHERE m.thread_id = ? AND {searchable('m')}"
)

#: The schema part, a migration before the data part (:func:`merge_session_threads`): a record
#: of a file may *mirror* the same record of another file of the session (a copied
#: transcript), and the ledger finds a record by thread and key.
MIRROR_STEPS = [
    "ALTER TABLE import_records ADD COLUMN mirror INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX import_records_by_channel ON import_records (channel, record_key)",
]


@dataclass(frozen=True, slots=True)
class Rename:
    """``old`` (a stem-named session thread) becomes ``new``; ``old_id``/``new_id`` are the
    session ids the channels name."""

    old: str
    new: str

    @property
    def old_id(self) -> str:
        return self.old.removeprefix(f"{CLAUDE_FORMAT}:")

    @property
    def new_id(self) -> str:
        return self.new.removeprefix(f"{CLAUDE_FORMAT}:")

    def apply(self, channel: str) -> str:
        """``channel`` under the new name (unchanged when it is not under the old one)."""
        if channel == self.old or channel.startswith(self.old + "/"):
            return self.new + channel[len(self.old) :]
        return channel


def _all(conn: apsw.Connection, sql: str, params: Any = ()) -> list[Any]:
    rows: list[Any] = conn.execute(sql, params).fetchall()
    return rows


def merge_session_threads(pool: ConnectionPool) -> None:
    """Run the four steps of the module docstring (each commits on its own)."""
    renames = plan(pool)
    for index, rename in enumerate(renames, start=1):
        with pool.transaction() as conn:
            move_threads(conn, rename)
            rewrite_references(conn, rename)
        logger.info("session threads: %d of %d renamed or merged", index, len(renames))
    if renames:
        with pool.transaction() as conn:
            rewrite_states(conn, renames)
    recompute_last_activity(pool)


def _files(conn: apsw.Connection) -> Iterator[tuple[int, str, dict[str, Any]]]:
    rows = _all(
        conn,
        "SELECT id, path, state FROM import_files WHERE format = ? ORDER BY id",
        (CLAUDE_FORMAT,),
    )
    for file_id, path, state in rows:
        try:
            loaded = json.loads(state)
        except (TypeError, ValueError):
            continue
        if isinstance(loaded, dict):
            yield int(file_id), str(path), loaded


def plan(pool: ConnectionPool) -> list[Rename]:
    """The renames still to do, oldest file first (one per stem-named session thread)."""
    found: dict[str, Rename] = {}
    with pool.reading() as conn:
        for _, path, state in _files(conn):
            channel, session_id = state.get("channel"), state.get("session_id")
            if PurePath(path).name.startswith(AGENT_FILE_PREFIX) or state.get("parent_channel"):
                continue
            if not isinstance(channel, str) or not isinstance(session_id, str) or not session_id:
                continue
            target = normalize_text(f"{CLAUDE_FORMAT}:{session_id}")
            if channel != target and "/" not in channel and channel not in found:
                found[channel] = Rename(channel, target)
    return list(found.values())


def _thread(conn: apsw.Connection, channel: str) -> int | None:
    rows = _all(conn, "SELECT id FROM threads WHERE channel = ?", (channel,))
    return int(rows[0][0]) if rows else None


def _under(conn: apsw.Connection, channel: str) -> list[tuple[int, str]]:
    """``(id, channel)`` of the thread ``channel`` and of every thread under ``channel/``."""
    rows = _all(
        conn,
        "SELECT id, channel FROM threads WHERE channel = ? OR (channel >= ? AND channel < ?) "
        "ORDER BY id",
        (channel, channel + "/", channel + "0"),  # "0" sorts right after "/"
    )
    return [(int(r[0]), str(r[1])) for r in rows]


def move_threads(conn: apsw.Connection, rename: Rename) -> None:
    """Rename (or merge) the old thread and its sub-threads into their new channels."""
    for source_id, channel in _under(conn, rename.old):
        target_channel = rename.apply(channel)
        target_id = _thread(conn, target_channel)
        if target_id is None:
            conn.execute("UPDATE threads SET channel = ? WHERE id = ?", (target_channel, source_id))
            continue
        merge_thread(conn, source_id, channel, target_id, target_channel)


def merge_thread(
    conn: apsw.Connection, source_id: int, source: str, target_id: int, target: str
) -> None:
    """Move thread ``source``'s messages into thread ``target`` (see the module docstring)."""
    generations = {
        int(number): int(gid)
        for number, gid in _all(
            conn, "SELECT number, id FROM generations WHERE thread_id = ?", (target_id,)
        )
    }
    mapped: dict[int, int] = {}
    wholesale: list[int] = []
    for number, gid in _all(
        conn, "SELECT number, id FROM generations WHERE thread_id = ? ORDER BY number", (source_id,)
    ):
        if int(number) in generations:
            mapped[int(gid)] = generations[int(number)]
        else:
            conn.execute("UPDATE generations SET thread_id = ? WHERE id = ?", (target_id, gid))
            mapped[int(gid)] = int(gid)
            wholesale.append(int(gid))
    twins: dict[str, str] = {
        str(uid): str(twin)
        for uid, twin in _all(
            conn,
            "SELECT r.message_uid, min(t.message_uid) FROM import_records r "
            "JOIN import_records t ON t.channel = ? AND t.record_key = r.record_key "
            "AND t.file_id != r.file_id AND t.mirror = 0 "
            "WHERE r.channel = ? AND r.mirror = 0 GROUP BY r.message_uid",
            (target, source),
        )
    }
    rows = _all(conn, "SELECT next_seq FROM threads WHERE id = ?", (target_id,))
    seq = int(rows[0][0]) if rows else 1
    # The key of a moved message changes (its thread and seq): the update trigger of the
    # literal index watches text and visibility only, so the move re-queues them itself,
    # before the updates (a queued row is left to the indexer, superseded or not).
    for table in _LITERAL_TABLES:
        if _all(conn, "SELECT 1 FROM sqlite_master WHERE name = ?", (table,)):
            conn.execute(_UNINDEX_THREAD_SQL.format(table=table), (source_id,))
    conn.execute(_QUEUE_THREAD_SQL, (source_id,))
    moved = _all(
        conn,
        "SELECT m.id, m.uid, m.generation_id FROM messages m JOIN generations g "
        "ON g.id = m.generation_id WHERE m.thread_id = ? ORDER BY g.number, m.seq",
        (source_id,),
    )
    for rowid, uid, generation_id in moved:
        conn.execute(
            "UPDATE messages SET thread_id = ?, generation_id = ?, seq = ? WHERE id = ?",
            (target_id, mapped.get(int(generation_id), generation_id), seq, rowid),
        )
        seq += 1
        twin = twins.get(uid)
        if twin is not None and twin != uid:
            conn.execute(
                "UPDATE messages SET superseded_by = ? WHERE uid = ? AND superseded_by IS NULL",
                (twin, uid),
            )
            conn.execute(
                "UPDATE import_records SET message_uid = ?, mirror = 1 WHERE message_uid = ?",
                (twin, uid),
            )
    # A generation moved whole starts at its first message's new seq (a generation is the
    # seq range from its first_seq to the next one's, literal_plan.py).
    conn.execute(
        "UPDATE generations SET first_seq = coalesce((SELECT min(m.seq) FROM messages m "
        "WHERE m.generation_id = generations.id), ?) WHERE id IN (SELECT value FROM json_each(?))",
        (seq, json.dumps(wholesale)),
    )
    # Their vectors go with their bookkeeping (a vector left behind is an orphan `doctor`
    # reports, and it sits in the old thread's partition): the next pass embeds them again.
    vectors.forget(conn, CORPUS_MESSAGE, [int(r[0]) for r in moved])
    chunk_ids = _all(conn, "SELECT id FROM transcript_chunks WHERE thread_id = ?", (source_id,))
    vectors.forget(conn, CORPUS_TRANSCRIPT_CHUNK, [int(r[0]) for r in chunk_ids])
    conn.execute("DELETE FROM transcript_chunks WHERE thread_id = ?", (source_id,))
    conn.execute(
        "UPDATE threads SET next_seq = :seq, "
        "quarantined = max(quarantined, (SELECT quarantined FROM threads WHERE id = :source)), "
        "title = coalesce(title, (SELECT title FROM threads WHERE id = :source)), "
        "source_identity = CASE WHEN source IS NULL THEN "
        "(SELECT source_identity FROM threads WHERE id = :source) ELSE source_identity END, "
        "source = coalesce(source, (SELECT source FROM threads WHERE id = :source)), "
        "created_at = min(created_at, (SELECT created_at FROM threads WHERE id = :source)) "
        "WHERE id = :target",
        {"seq": seq, "source": source_id, "target": target_id},
    )
    conn.execute("DELETE FROM generations WHERE thread_id = ?", (source_id,))
    # The session's stored tool outputs (#12, an earlier migration) follow its messages.
    conn.execute(
        "UPDATE tool_outputs SET thread_id = ? WHERE thread_id = ?", (target_id, source_id)
    )
    try:
        with _savepoint(conn):
            conn.execute("DELETE FROM threads WHERE id = ?", (source_id,))
    except apsw.ConstraintError:
        # Trigger: a table of a later feature still points at the emptied thread.
        # Why: its rows are not ours to move. Outcome: the empty thread stays, under its name.
        logger.warning("thread %r is empty after the merge but still referenced; kept", source)


class _savepoint:
    """A savepoint a failed statement rolls back to (the transaction goes on)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("SAVEPOINT session_merge")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is not None:
            self.conn.execute("ROLLBACK TO session_merge")
        self.conn.execute("RELEASE session_merge")


def rewrite_references(conn: apsw.Connection, rename: Rename) -> None:
    """Ledger records and sub-thread message metadata name the new channels."""
    old, new = rename.old, rename.new
    conn.execute(
        "UPDATE import_records SET channel = ? || substr(channel, ?) "
        "WHERE channel = ? OR (channel >= ? AND channel < ?)",
        (new, len(old) + 1, old, old + "/", old + "0"),
    )
    for thread_id, _ in _under(conn, new):
        conn.execute(
            "UPDATE messages SET metadata = json_set(metadata, '$.parent_channel', ?) "
            "WHERE thread_id = ? AND json_extract(metadata, '$.parent_channel') = ?",
            (new, thread_id, old),
        )
        conn.execute(
            "UPDATE messages SET metadata = json_set(metadata, '$.parent_session_id', ?) "
            "WHERE thread_id = ? AND json_extract(metadata, '$.parent_session_id') = ?",
            (rename.new_id, thread_id, rename.old_id),
        )


def rewrite_states(conn: apsw.Connection, renames: list[Rename]) -> None:
    """The reader state of every Claude Code file names the new channels and sessions."""
    by_id = {r.old_id: r.new_id for r in renames}
    for file_id, _, state in list(_files(conn)):
        changed = dict(state)
        for name in ("channel", "parent_channel"):
            value = state.get(name)
            if isinstance(value, str):
                for rename in renames:
                    value = rename.apply(value)
                changed[name] = value
        parent = state.get("parent_session")
        if isinstance(parent, str) and parent in by_id:
            changed["parent_session"] = by_id[parent]
        if changed != state:
            conn.execute(
                "UPDATE import_files SET state = ? WHERE id = ?",
                (json.dumps(changed, ensure_ascii=True), file_id),
            )


def recompute_last_activity(pool: ConnectionPool) -> None:
    """``threads.last_activity`` = the newest message's ``created_at`` (creation time while
    empty), :data:`THREAD_BATCH` threads per transaction."""
    with pool.reading() as conn:
        rows = _all(conn, "SELECT max(id) FROM threads")
    highest = int(rows[0][0] or 0) if rows else 0
    for start in range(1, highest + 1, THREAD_BATCH):
        with pool.transaction() as conn:
            conn.execute(
                "UPDATE threads SET last_activity = coalesce((SELECT max(m.created_at) FROM "
                "messages m WHERE m.thread_id = threads.id), created_at) "
                "WHERE id >= ? AND id < ?",
                (start, start + THREAD_BATCH),
            )
