"""Threads, generations and messages on PostgreSQL: the history itself, and its gated reads.

**Per-thread order under several writers.** The thread row is the thread's counter
(``threads.next_seq``): an append locks it (``SELECT … FOR UPDATE``) before it reads the next
``seq`` and holds the lock to commit, so appends to one thread — from any process on any
machine — take turns and leave no gap, while appends to different threads never meet (no
global sequence, DESIGN §8). A new channel is ``INSERT … ON CONFLICT DO NOTHING``: two writers
creating it at once get the same thread.

The audit reads return everything; the reads that serve a search or an agent apply the
visibility rule (``visibility.py``). Each message's keyword document is written with it
(``keyword_write.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from recallbox.errors import NotFound
from recallbox.storage.codecs import (
    GENERATION_ID_PREFIX,
    MESSAGE_ID_PREFIX,
    content_hash,
    dump_json,
    new_id,
    storable,
    stored_metadata,
)
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import MESSAGES
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import (
    MESSAGE_COLUMN_COUNT,
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    raw_bytes,
    row_to_message,
    tool_calls_json,
    utc,
)
from recallbox.storage.postgres.schema import MESSAGES_KEYWORDS
from recallbox.storage.postgres.visibility import (
    MESSAGE_FLAGS_SQL,
    MESSAGE_SEARCHABLE_SQL,
    THREAD_ALLOWED_SQL,
    THREAD_SOURCE_ALLOWED_SQL,
)
from recallbox.storage.queries import SearchFilter
from recallbox.storage.row_maps import search_rows_by_id, thread_row
from recallbox.storage.values import NewMessage, ReadableMessage, SearchRow
from recallbox.types import Generation, Message, Thread

_THREAD_SELECT = (
    "SELECT t.channel, t.title, t.quarantined, t.created_at, "
    "(SELECT max(number) FROM generations g WHERE g.thread_id = t.id), "
    "(SELECT count(*) FROM messages m WHERE m.thread_id = t.id), t.last_activity, "
    f"NOT {THREAD_SOURCE_ALLOWED_SQL} FROM threads t"
)
_INSERT_COLUMNS = (
    "uid, thread_id, generation_id, seq, role, kind, content, args_text, raw_content, "
    "tool_calls, tool_calls_raw, tool_call_id, model_visible, pending, created_at, metadata, "
    "content_hash, fts, fts_len"
)
_INSERT_MARKS = "(" + ", ".join(["%s"] * 17) + f", {FTS_MARKS})"
#: Rows per ``INSERT`` statement (PostgreSQL binds at most 65 535 values in one).
INSERT_BATCH_ROWS = 1_000


def thread_id(conn: Connection, channel: str) -> int | None:
    """The row id of thread ``channel``, or ``None``."""
    row = conn.execute("SELECT id FROM threads WHERE channel = %s", (channel,)).fetchone()
    return int(row[0]) if row else None


def ensure_thread_id(conn: Connection, channel: str, title: str | None) -> int:
    """The row id of thread ``channel``, creating the thread (and generation 1) when missing."""
    stamp = datetime.now(UTC)
    row = conn.execute(
        "INSERT INTO threads (channel, title, created_at, last_activity) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (channel) DO NOTHING RETURNING id",
        (channel, title, stamp, stamp),
    ).fetchone()
    if row is None:
        found = thread_id(conn, channel)
        assert found is not None
        return found
    created = int(row[0])
    conn.execute(
        "INSERT INTO generations (uid, thread_id, number, opened_at, first_seq) "
        "VALUES (%s, %s, 1, %s, 1)",
        (new_id(GENERATION_ID_PREFIX), created, stamp),
    )
    return created


@dataclass
class _Place:
    """Where the next message of a thread goes: its thread, generation and ``seq``."""

    channel: str
    thread: int
    generation_id: int
    generation_uid: str
    number: int
    seq: int
    latest: datetime | None = None


def _place(conn: Connection, channel: str) -> _Place:
    """The thread's current generation and next ``seq``, its counter row locked to commit."""
    thread = ensure_thread_id(conn, channel, None)
    row = conn.execute(
        "SELECT t.next_seq, g.id, g.uid, g.number FROM threads t JOIN generations g "
        "ON g.thread_id = t.id WHERE t.id = %s ORDER BY g.number DESC LIMIT 1 FOR UPDATE OF t",
        (thread,),
    ).fetchone()
    assert row is not None, "a thread without a generation"
    return _Place(channel, thread, int(row[1]), str(row[2]), int(row[3]), int(row[0]))


def _open_generation(conn: Connection, place: _Place, row: NewMessage) -> None:
    """Close the current generation and open the next, starting at ``place.seq``."""
    created = utc(row.created_at)
    conn.execute(
        "UPDATE generations SET closed_at = %s WHERE id = %s", (created, place.generation_id)
    )
    place.number += 1
    place.generation_uid = new_id(GENERATION_ID_PREFIX)
    found = conn.execute(
        "INSERT INTO generations (uid, thread_id, number, opened_at, first_seq) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (place.generation_uid, place.thread, place.number, created, place.seq),
    ).fetchone()
    assert found is not None
    place.generation_id = int(found[0])


def _copy(value: Any) -> Any:
    """What a read of the stored JSON of ``value`` gives back (a fresh copy)."""
    return json.loads(dump_json(value))


def _insert_run(conn: Connection, place: _Place, rows: Sequence[NewMessage]) -> list[Message]:
    """Insert ``rows`` into the current generation (multi-row statements), with their keyword
    documents; returns the messages built from the values written."""
    values: list[object] = []
    out: list[Message] = []
    docs = []
    for row in rows:
        created = utc(row.created_at)
        uid = new_id(MESSAGE_ID_PREFIX)
        metadata = stored_metadata(row)
        doc = document_of(row.content)
        docs.append((uid, doc))
        values += [
            uid, place.thread, place.generation_id, place.seq, row.role, row.kind, row.content,
            row.args_text, raw_bytes(row.raw_content), tool_calls_json(row), row.tool_calls_raw,
            row.tool_call_id, row.model_visible, row.pending, created, metadata,
            content_hash(row.content, row.args_text), doc.tsvector, doc.length,
        ]  # fmt: skip
        out.append(
            Message(
                id=uid,
                channel=place.channel,
                generation_id=place.generation_uid,
                generation=place.number,
                seq=place.seq,
                role=row.role,
                kind=row.kind,
                content=row.content,
                tool_calls=_copy(row.tool_calls) if row.tool_calls is not None else None,
                tool_call_id=row.tool_call_id,
                model_visible=row.model_visible,
                pending=row.pending,
                superseded_by=None,
                created_at=created,
                metadata={} if metadata == "{}" else dict(_copy(row.metadata)),
                raw_content=row.raw_content,
            )
        )
        place.seq += 1
        place.latest = created if place.latest is None else max(place.latest, created)
    width = 19
    ids: dict[str, int] = {}
    for start in range(0, len(rows), INSERT_BATCH_ROWS):
        count = min(INSERT_BATCH_ROWS, len(rows) - start)
        batch = values[start * width : (start + count) * width]
        cursor = conn.execute(
            f"INSERT INTO messages ({_INSERT_COLUMNS}) VALUES "
            + ", ".join([_INSERT_MARKS] * count)
            + " RETURNING uid, id",
            batch,
        )
        ids.update((str(uid), int(rid)) for uid, rid in cursor.fetchall())
    put_overflow(conn, MESSAGES_KEYWORDS, ((ids[uid], place.thread, doc) for uid, doc in docs))
    return out


def messages_by_uid(conn: Connection, ids: Sequence[str]) -> list[Message]:
    rows = conn.execute(
        f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.uid = ANY(%s::text[])", (list(ids),)
    ).fetchall()
    found = {r[1]: row_to_message(r) for r in rows}
    return [found[uid] for uid in ids if uid in found]


class ThreadMixin:
    """:class:`~recallbox.storage.base.ThreadStore` for :class:`PostgresStore`."""

    pool: PgPool

    # -- threads ---------------------------------------------------------------------------
    def get_thread(self, channel: str) -> Thread | None:
        if not storable(channel):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(_THREAD_SELECT + " WHERE t.channel = %s", (channel,)).fetchone()
        return thread_row(row, utc) if row else None

    def list_threads(self) -> list[Thread]:
        with self.pool.reading() as conn:
            rows = conn.execute(_THREAD_SELECT + " ORDER BY t.id").fetchall()
        return [thread_row(r, utc) for r in rows]

    def ensure_thread(self, channel: str, title: str | None) -> Thread:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, title)
        thread = self.get_thread(channel)
        assert thread is not None
        return thread

    def set_title(self, channel: str, title: str | None) -> None:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, title)
            conn.execute("UPDATE threads SET title = %s WHERE channel = %s", (title, channel))

    # -- generations -----------------------------------------------------------------------
    def generations(self, channel: str) -> list[Generation]:
        if not storable(channel):
            return []
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT g.uid, g.number, t.channel, g.opened_at FROM generations g "
                "JOIN threads t ON t.id = g.thread_id WHERE t.channel = %s ORDER BY g.number",
                (channel,),
            ).fetchall()
        return [
            Generation(id=r[0], number=int(r[1]), channel=r[2], opened_at=utc(r[3])) for r in rows
        ]

    def current_generation(self, channel: str) -> Generation:
        gens = self.generations(channel)
        if not gens:
            raise NotFound(f"unknown channel {channel!r}")
        return gens[-1]

    # -- messages --------------------------------------------------------------------------
    def append(self, channel: str, rows: Sequence[NewMessage]) -> list[Message]:
        """Insert ``rows`` at the end of ``channel`` in one transaction (see the module)."""
        with self.pool.transaction() as conn:
            place = _place(conn, channel)
            was_empty = place.seq == 1
            written: list[Message] = []
            start = 0
            for end in [i for i, r in enumerate(rows) if r.opens_generation] + [len(rows)]:
                if end > start:
                    written.extend(_insert_run(conn, place, rows[start:end]))
                if end < len(rows):
                    _open_generation(conn, place, rows[end])
                    written.extend(_insert_run(conn, place, rows[end : end + 1]))
                    start = end + 1
            if place.latest is not None:
                # DESIGN §2: the greatest created_at of the messages (the creation time only
                # while the thread is empty), never the wall-clock time of the append.
                conn.execute(
                    "UPDATE threads SET next_seq = %s, last_activity = CASE WHEN %s THEN %s "
                    "ELSE greatest(last_activity, %s) END WHERE id = %s",
                    (place.seq, was_empty, place.latest, place.latest, place.thread),
                )
        return written

    def iter_messages(self, channel: str, generation: int | None = None) -> Iterator[Message]:
        yield from self.messages(channel, generation)

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        if not storable(channel):
            return []
        sql = f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = %s"
        params: tuple[Any, ...] = (channel,)
        if generation is not None:
            sql += " AND g.number = %s"
            params = (channel, generation)
        with self.pool.reading() as conn:
            rows = conn.execute(sql + " ORDER BY g.number, m.seq", params).fetchall()
        return [row_to_message(r) for r in rows]

    def get_message(self, message_id: str) -> Message | None:
        if not storable(message_id):
            return None
        with self.pool.reading() as conn:
            found = messages_by_uid(conn, [message_id])
        return found[0] if found else None

    def _update_message(self, message_id: str, column: str, value: Any) -> Message:
        if not storable(message_id):
            raise NotFound(f"unknown message id {message_id!r}")
        with self.pool.transaction() as conn:
            changed = conn.execute(
                f"UPDATE messages SET {column} = %s WHERE uid = %s RETURNING uid",
                (value, message_id),
            ).fetchall()
            if not changed:
                raise NotFound(f"unknown message id {message_id!r}")
            return messages_by_uid(conn, [message_id])[0]

    def set_pending(self, message_id: str, pending: bool) -> Message:
        return self._update_message(message_id, "pending", bool(pending))

    def set_superseded(self, message_id: str, by: str | None) -> Message:
        return self._update_message(message_id, "superseded_by", by)

    # -- gated reads -----------------------------------------------------------------------
    def readable_message(self, message_id: str) -> ReadableMessage | None:
        if not storable(message_id):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS}, m.tool_calls_raw FROM {MESSAGE_FROM} "
                f"WHERE m.uid = %s AND {THREAD_ALLOWED_SQL}",
                (message_id,),
            ).fetchone()
        if row is None:
            return None
        count = MESSAGE_COLUMN_COUNT
        return ReadableMessage(message=row_to_message(row[:count]), tool_calls_raw=row[count])

    def search_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, SearchRow]:
        narrow = MESSAGES.narrow(where)
        keys = MESSAGES.keys(ids)
        if not ids:
            return {}
        sql = (
            "SELECT m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, "
            f"g.uid, m.seq FROM {MESSAGES.keys_from} "
            f"JOIN generations g ON g.id = m.generation_id WHERE {MESSAGES.rule}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (*keys, *narrow.params)).fetchall()
        return search_rows_by_id(rows, utc)

    def session_window(self, message_id: str, radius: int, *, where: SearchFilter) -> list[Message]:
        """One statement: the hit (when visible) and the visible messages around it."""
        narrow = MESSAGES.narrow(where)
        if not storable(message_id):
            return []
        rule = f"{MESSAGE_SEARCHABLE_SQL}{narrow.sql}"
        side = (
            f"SELECT {MESSAGE_COLUMNS}, %s::int AS part FROM {MESSAGE_FROM}, hit "
            f"WHERE {rule} AND m.thread_id = hit.thread_id AND m.seq {{op}} hit.seq "
            "ORDER BY m.seq {order} LIMIT %s"
        )
        sql = (
            f"WITH hit AS (SELECT m.thread_id, m.seq FROM {MESSAGE_FROM} WHERE {rule} "
            f"AND m.uid = %s) "
            f"(SELECT {MESSAGE_COLUMNS}, 0 AS part FROM {MESSAGE_FROM} JOIN hit "
            "ON m.thread_id = hit.thread_id AND m.seq = hit.seq) "
            f"UNION ALL ({side.format(op='<', order='DESC')}) "
            f"UNION ALL ({side.format(op='>', order='ASC')})"
        )
        span = max(0, radius)
        params = (
            *narrow.params, message_id,
            -1, *narrow.params, span,
            1, *narrow.params, span,
        )  # fmt: skip
        with self.pool.reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        if not any(r[-1] == 0 for r in rows):
            return []
        ordered = sorted(rows, key=lambda r: (int(r[-1]), int(r[5]) if r[-1] else 0))
        return [row_to_message(r[:-1]) for r in ordered]

    def readable_history(self, channel: str) -> list[Message]:
        if not storable(channel):
            return []
        sql = (
            f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = %s AND "
            f"{THREAD_ALLOWED_SQL} AND m.kind <> 'machine_event' AND {MESSAGE_FLAGS_SQL} "
            "ORDER BY g.number, m.seq"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (channel,)).fetchall()
        return [row_to_message(r) for r in rows]
