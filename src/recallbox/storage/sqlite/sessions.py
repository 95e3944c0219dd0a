"""Session windows on SQLite: the searchable messages around a hit, inside its own thread.

What the sessions bucket shows around a hit (DESIGN §4.5): up to ``radius`` messages before and
after it in the same thread, counted over **searchable** messages only (never a pending,
superseded, invisible, machine-event or compaction-summary message), and nothing at all when
the hit itself is not searchable or its thread is denied by the privacy gate.
"""

from __future__ import annotations

from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.schema import THREAD_ALLOWED_SQL
from recallbox.types import Message

#: The §3.2/§4.5 search exclusions and the privacy gate, over ``messages m JOIN threads t``.
WINDOW_VISIBLE = (
    "m.kind = 'message' AND m.model_visible = 1 AND m.pending = 0 "
    f"AND m.superseded_by IS NULL AND {THREAD_ALLOWED_SQL}"
)


class SessionWindowMixin:
    """:meth:`session_window` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def session_window(self, message_id: str, radius: int) -> list[Message]:
        from recallbox.storage.sqlite.store import MESSAGE_COLUMNS, MESSAGE_FROM, row_to_message

        base = f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE {WINDOW_VISIBLE}"
        with self.pool.reading() as conn:
            hit = conn.execute(f"{base} AND m.uid = ?", (message_id,)).fetchone()
            if hit is None:
                return []
            thread_id = conn.execute(
                "SELECT thread_id, seq FROM messages WHERE uid = ?", (message_id,)
            ).fetchone()
            assert thread_id is not None
            before = conn.execute(
                f"{base} AND m.thread_id = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?",
                (thread_id[0], thread_id[1], max(0, radius)),
            ).fetchall()
            after = conn.execute(
                f"{base} AND m.thread_id = ? AND m.seq > ? ORDER BY m.seq LIMIT ?",
                (thread_id[0], thread_id[1], max(0, radius)),
            ).fetchall()
        return [row_to_message(r) for r in [*reversed(before), hit, *after]]
