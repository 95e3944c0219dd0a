"""The inspector's bounded thread reads (#20) on PostgreSQL: per-generation counts and spans,
one page of a generation's messages (``ThreadStore.generation_spans`` / ``message_slice``).

Counts and spans are aggregates over ``messages_by_generation``; a generation's opening
compaction summary is read as its first ``head_chars`` characters and its length.
"""

from __future__ import annotations

from recallbox.inventory_types import GenerationSpan
from recallbox.storage.codecs import storable
from recallbox.storage.postgres.connection import PgPool
from recallbox.storage.postgres.rows import (
    MESSAGE_COLUMNS,
    MESSAGE_FROM,
    maybe_utc,
    row_to_message,
    utc,
)
from recallbox.types import Generation, Message

#: The kind of the message that opens every generation after the first.
SUMMARY_KIND = "compaction_summary"

_SPANS_SQL = (
    "SELECT g.uid, g.number, t.channel, g.opened_at, count(m.id), min(m.created_at), "
    "max(m.created_at) FROM generations g JOIN threads t ON t.id = g.thread_id "
    "LEFT JOIN messages m ON m.generation_id = g.id "
    "WHERE t.channel = %s AND g.number BETWEEN %s AND %s GROUP BY g.id, t.channel "
    "ORDER BY g.number"
)
_OPENERS_SQL = (
    "SELECT g.number, m.uid, left(m.content, %s), length(m.content) "
    "FROM generations g JOIN threads t ON t.id = g.thread_id "
    "JOIN messages m ON m.id = (SELECT f.id FROM messages f WHERE f.generation_id = g.id "
    "ORDER BY f.seq LIMIT 1) "
    f"WHERE t.channel = %s AND g.number BETWEEN %s AND %s AND m.kind = '{SUMMARY_KIND}'"
)
_SLICE_SQL = (
    f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = %s AND g.number = %s "
    "ORDER BY m.seq LIMIT %s OFFSET %s"
)


class TimelineMixin:
    """``generation_spans`` and ``message_slice`` of ``ThreadStore``."""

    pool: PgPool

    def generation_spans(
        self, channel: str, first: int, last: int, *, head_chars: int
    ) -> list[GenerationSpan]:
        if not storable(channel):
            return []
        with self.pool.snapshot() as conn:
            spans = conn.execute(_SPANS_SQL, (channel, first, last)).fetchall()
            heads = conn.execute(
                _OPENERS_SQL, (max(0, head_chars), channel, first, last)
            ).fetchall()
        openers = {int(n): (str(uid), str(head), int(size)) for n, uid, head, size in heads}
        out = []
        for uid, number, owner, opened, count, first_at, last_at in spans:
            summary_id, head, size = openers.get(int(number), (None, None, 0))
            out.append(
                GenerationSpan(
                    generation=Generation(uid, int(number), owner, utc(opened)),
                    message_count=int(count),
                    first_at=maybe_utc(first_at),
                    last_at=maybe_utc(last_at),
                    summary_id=summary_id,
                    summary_head=head,
                    summary_chars=size,
                )
            )
        return out

    def message_slice(
        self, channel: str, generation: int, offset: int, limit: int
    ) -> list[Message]:
        if limit <= 0 or not storable(channel):
            return []
        with self.pool.reading() as conn:
            rows = conn.execute(_SLICE_SQL, (channel, generation, limit, max(0, offset))).fetchall()
        return [row_to_message(row) for row in rows]
