"""Threads, generations and messages on SQLite: the history itself, and its gated reads.

The audit reads (:meth:`ThreadMixin.get_message`, :meth:`ThreadMixin.iter_messages`,
:meth:`ThreadMixin.list_threads`) return everything; the reads that serve a search or an agent
(:meth:`ThreadMixin.readable_message`, :meth:`ThreadMixin.search_rows`,
:meth:`ThreadMixin.session_window`) apply the visibility rule (``visibility.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from recallbox.errors import NotFound
from recallbox.storage.queries import SearchFilter
from recallbox.storage.row_maps import iso_when, search_rows_by_id, thread_row
from recallbox.storage.sqlite.backlog import BacklogIndexer
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.rows import (
    GENERATION_ID_PREFIX,
    MESSAGE_COLUMN_COUNT,
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    PreparedMessage,
    format_time,
    new_id,
    now,
    parse_time,
    prepare_message,
    row_to_message,
)
from recallbox.storage.sqlite.visibility import (
    MESSAGE_FLAGS_SQL,
    MESSAGE_SEARCHABLE_SQL,
    THREAD_ALLOWED_SQL,
    THREAD_SOURCE_ALLOWED_SQL,
)
from recallbox.storage.values import NewMessage, ReadableMessage, SearchRow
from recallbox.types import Generation, Message, Thread

_THREAD_SELECT = (
    "SELECT t.channel, t.title, t.quarantined, t.created_at, "
    "(SELECT max(number) FROM generations g WHERE g.thread_id = t.id), "
    "(SELECT count(*) FROM messages m WHERE m.thread_id = t.id), t.last_activity, "
    f"NOT {THREAD_SOURCE_ALLOWED_SQL} FROM threads t"
)
_PLACE_SQL = (
    "SELECT t.id, t.next_seq, g.id, g.uid, g.number FROM threads t JOIN generations g "
    "ON g.thread_id = t.id WHERE t.channel = ? ORDER BY g.number DESC LIMIT 1"
)
_INSERT_COLUMNS = (
    "uid, thread_id, generation_id, seq, role, kind, content, content_seg, args_text, "
    "raw_content, tool_calls, tool_calls_raw, tool_call_id, model_visible, pending, created_at, "
    "metadata, content_hash"
)
_INSERT_WIDTH = _INSERT_COLUMNS.count(",") + 1
#: Rows per ``INSERT … VALUES (…), (…)`` statement: within SQLite's default limit of 32 766
#: bound parameters. One statement per batch matters: SQLite opens a savepoint on the ranked
#: FTS5 index for every statement that writes it (through the insert trigger), and FTS5
#: flushes its pending terms at each one — one segment per row with ``executemany``, which
#: made the ranked index's merges cost twice its tokenizing.
INSERT_ROWS_PER_STATEMENT = 32_766 // _INSERT_WIDTH
_ROW_PLACEHOLDERS = "(" + ", ".join("?" * _INSERT_WIDTH) + ")"


def _insert_sql(rows: int) -> str:
    """``INSERT INTO messages`` of ``rows`` rows in one statement."""
    values = ", ".join([_ROW_PLACEHOLDERS] * rows)
    return f"INSERT INTO messages ({_INSERT_COLUMNS}) VALUES {values}"


def _generation(row: Sequence[Any]) -> Generation:
    return Generation(id=row[0], number=int(row[1]), channel=row[2], opened_at=parse_time(row[3]))


def thread_id(conn: apsw.Connection, channel: str) -> int | None:
    """The row id of thread ``channel``, or ``None``."""
    row = conn.execute("SELECT id FROM threads WHERE channel = ?", (channel,)).fetchone()
    return int(row[0]) if row else None


def ensure_thread_id(conn: apsw.Connection, channel: str, title: str | None) -> int:
    """The row id of thread ``channel``, creating the thread (and generation 1) when missing."""
    found = thread_id(conn, channel)
    if found is not None:
        return found
    stamp = now()
    conn.execute(
        "INSERT INTO threads (channel, title, created_at, last_activity) VALUES (?, ?, ?, ?)",
        (channel, title, stamp, stamp),
    )
    created = int(conn.last_insert_rowid())
    conn.execute(
        "INSERT INTO generations (uid, thread_id, number, opened_at, first_seq) "
        "VALUES (?, ?, 1, ?, 1)",
        (new_id(GENERATION_ID_PREFIX), created, stamp),
    )
    return created


def _messages_by_uid(conn: apsw.Connection, ids: Sequence[str]) -> list[Message]:
    out: list[Message] = []
    for uid in ids:
        row = conn.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.uid = ?", (uid,)
        ).fetchone()
        assert row is not None
        out.append(row_to_message(row))
    return out


@dataclass
class _Place:
    """Where the next message of a thread goes: its thread, generation and ``seq``."""

    channel: str
    thread: int
    generation_id: int
    generation_uid: str
    number: int
    seq: int
    latest: str = ""


def _place(conn: apsw.Connection, channel: str) -> _Place:
    """The thread's current generation and next ``seq`` (creating the thread when missing)."""
    for _ in range(2):
        row = conn.execute(_PLACE_SQL, (channel,)).fetchone()
        if row is not None:
            return _Place(channel, int(row[0]), int(row[2]), str(row[3]), int(row[4]), int(row[1]))
        ensure_thread_id(conn, channel, None)
    raise AssertionError("a thread without a generation")


def _open_generation(conn: apsw.Connection, place: _Place, row: NewMessage) -> None:
    """Close the current generation and open the next, starting at ``place.seq``."""
    created = format_time(row.created_at)
    conn.execute(
        "UPDATE generations SET closed_at = ? WHERE id = ?", (created, place.generation_id)
    )
    place.number += 1
    place.generation_uid = new_id(GENERATION_ID_PREFIX)
    conn.execute(
        "INSERT INTO generations (uid, thread_id, number, opened_at, first_seq) "
        "VALUES (?, ?, ?, ?, ?)",
        (place.generation_uid, place.thread, place.number, created, place.seq),
    )
    place.generation_id = int(conn.last_insert_rowid())


def _insert_run(
    conn: apsw.Connection, place: _Place, rows: Sequence[PreparedMessage]
) -> list[tuple[PreparedMessage, str, int, int]]:
    """Insert ``rows`` into the current generation, :data:`INSERT_ROWS_PER_STATEMENT` rows
    per statement; returns each row with its generation (uid, number) and ``seq``."""
    values: list[object] = []
    placed: list[tuple[PreparedMessage, str, int, int]] = []
    for row in rows:
        values.extend((row.uid, place.thread, place.generation_id, place.seq))
        values.extend(row.values)
        placed.append((row, place.generation_uid, place.number, place.seq))
        place.seq += 1
        place.latest = max(place.latest, row.created)
    step = INSERT_ROWS_PER_STATEMENT * _INSERT_WIDTH
    for start in range(0, len(values), step):
        part = values[start : start + step]
        conn.execute(_insert_sql(len(part) // _INSERT_WIDTH), part)
    return placed


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be bound as SQLite text: a stored id always can, so an id holding a
    lone surrogate (argv bytes that were not UTF-8) is simply unknown."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ThreadMixin:
    """:class:`~recallbox.storage.base.ThreadStore` for :class:`SQLiteStore`."""

    pool: ConnectionPool
    indexer: BacklogIndexer

    # -- threads ---------------------------------------------------------------------------
    def get_thread(self, channel: str) -> Thread | None:
        with self.pool.reading() as conn:
            row = conn.execute(_THREAD_SELECT + " WHERE t.channel = ?", (channel,)).fetchone()
        return thread_row(row, iso_when) if row else None

    def list_threads(self) -> list[Thread]:
        with self.pool.reading() as conn:
            rows = conn.execute(_THREAD_SELECT + " ORDER BY t.id").fetchall()
        return [thread_row(r, iso_when) for r in rows]

    def ensure_thread(self, channel: str, title: str | None) -> Thread:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, title)
        thread = self.get_thread(channel)
        assert thread is not None
        return thread

    def set_title(self, channel: str, title: str | None) -> None:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, title)
            conn.execute("UPDATE threads SET title = ? WHERE channel = ?", (title, channel))

    # -- generations -----------------------------------------------------------------------
    def generations(self, channel: str) -> list[Generation]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT g.uid, g.number, t.channel, g.opened_at FROM generations g "
                "JOIN threads t ON t.id = g.thread_id WHERE t.channel = ? ORDER BY g.number",
                (channel,),
            ).fetchall()
        return [_generation(r) for r in rows]

    def current_generation(self, channel: str) -> Generation:
        gens = self.generations(channel)
        if not gens:
            raise NotFound(f"unknown channel {channel!r}")
        return gens[-1]

    # -- messages --------------------------------------------------------------------------
    def append(self, channel: str, rows: Sequence[NewMessage]) -> list[Message]:
        """Insert ``rows`` at the end of ``channel`` in one transaction.

        One lookup of the thread's place, one batched insert per generation the rows fall in,
        and the returned messages built from the values written (no re-read). Only the ranked
        index is written here; the literal index follows behind (``literal_index.py``).
        """
        prepared = [prepare_message(row) for row in rows]  # before the write lock
        with self.pool.transaction() as conn:
            place = _place(conn, channel)
            was_empty = place.seq == 1
            placed: list[tuple[PreparedMessage, str, int, int]] = []
            start = 0
            for end in [i for i, r in enumerate(rows) if r.opens_generation] + [len(rows)]:
                if end > start:
                    placed.extend(_insert_run(conn, place, prepared[start:end]))
                if end < len(rows):
                    _open_generation(conn, place, rows[end])
                    placed.extend(_insert_run(conn, place, prepared[end : end + 1]))
                    start = end + 1
            conn.execute(
                # DESIGN §2: the greatest created_at of the messages (the creation time only
                # while the thread is empty), never the wall-clock time of the append.
                "UPDATE threads SET next_seq = ?, last_activity = "
                "CASE WHEN ? THEN ? ELSE max(last_activity, ?) END WHERE id = ?",
                (
                    place.seq,
                    int(was_empty and bool(rows)),
                    place.latest,
                    place.latest,
                    place.thread,
                ),
            )
        if placed:
            self.indexer.wake()
        return [row.message(channel, gen_uid, number, seq) for row, gen_uid, number, seq in placed]

    def iter_messages(self, channel: str, generation: int | None = None) -> Iterator[Message]:
        sql = f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = ?"
        params: tuple[Any, ...] = (channel,)
        if generation is not None:
            sql += " AND g.number = ?"
            params = (channel, generation)
        sql += " ORDER BY g.number, m.seq"
        with self.pool.reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        for row in rows:
            yield row_to_message(row)

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        return list(self.iter_messages(channel, generation))

    def get_message(self, message_id: str) -> Message | None:
        if not is_utf8(message_id):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.uid = ?", (message_id,)
            ).fetchone()
        return row_to_message(row) if row else None

    def _update_message(self, message_id: str, column: str, value: Any) -> Message:
        if not is_utf8(message_id):
            raise NotFound(f"unknown message id {message_id!r}")
        with self.pool.transaction() as conn:
            changed = conn.execute(
                f"UPDATE messages SET {column} = ? WHERE uid = ? RETURNING uid", (value, message_id)
            ).fetchall()
            if not changed:
                raise NotFound(f"unknown message id {message_id!r}")
            return _messages_by_uid(conn, [message_id])[0]

    def set_pending(self, message_id: str, pending: bool) -> Message:
        return self._update_message(message_id, "pending", int(pending))

    def set_superseded(self, message_id: str, by: str | None) -> Message:
        return self._update_message(message_id, "superseded_by", by)

    # -- gated reads -----------------------------------------------------------------------
    def readable_message(self, message_id: str) -> ReadableMessage | None:
        if not is_utf8(message_id):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS}, m.tool_calls_raw FROM {MESSAGE_FROM} "
                f"WHERE m.uid = ? AND {THREAD_ALLOWED_SQL}",
                (message_id,),
            ).fetchone()
        if row is None:
            return None
        count = MESSAGE_COLUMN_COUNT
        return ReadableMessage(message=row_to_message(row[:count]), tool_calls_raw=row[count])

    def search_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, SearchRow]:
        narrow = MESSAGES.narrow(where)
        if not ids:
            return {}
        sql = (
            "SELECT m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, "
            f"g.uid, m.seq FROM {MESSAGES.keys_from} "
            f"JOIN generations g ON g.id = m.generation_id WHERE {MESSAGES.rule}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, (MESSAGES.keys(ids), *narrow.params)).fetchall()
        return search_rows_by_id(rows, iso_when)

    def session_window(self, message_id: str, radius: int, *, where: SearchFilter) -> list[Message]:
        narrow = MESSAGES.narrow(where)
        base = f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE {MESSAGE_SEARCHABLE_SQL}"
        base += narrow.sql
        with self.pool.snapshot() as conn:
            hit = conn.execute(f"{base} AND m.uid = ?", (*narrow.params, message_id)).fetchone()
            if hit is None:
                return []
            place = conn.execute(
                "SELECT thread_id, seq FROM messages WHERE uid = ?", (message_id,)
            ).fetchone()
            assert place is not None
            span = max(0, radius)
            before = conn.execute(
                f"{base} AND m.thread_id = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?",
                (*narrow.params, place[0], place[1], span),
            ).fetchall()
            after = conn.execute(
                f"{base} AND m.thread_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?",
                (*narrow.params, place[0], place[1], span),
            ).fetchall()
        return [row_to_message(r) for r in [*reversed(before), hit, *after]]

    def readable_history(self, channel: str) -> list[Message]:
        sql = (
            f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = ? AND "
            f"{THREAD_ALLOWED_SQL} AND m.kind != 'machine_event' AND {MESSAGE_FLAGS_SQL} "
            "ORDER BY g.number, m.seq"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (channel,)).fetchall()
        return [row_to_message(r) for r in rows]
