"""Row codecs of the PostgreSQL backend: the message columns and their decoding.

The codecs both backends must compute identically (ids, hashes, stored JSON) are
``recallbox.storage.codecs``'; this module only maps this backend's native types (``boolean``,
``timestamptz``, ``bytea``) to the values the protocols pass.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from recallbox.storage.codecs import dump_json
from recallbox.storage.values import NewMessage
from recallbox.types import Message

MESSAGE_COLUMNS = (
    "m.id, m.uid, t.channel, g.uid, g.number, m.seq, m.role, m.kind, m.content, m.tool_calls, "
    "m.tool_call_id, m.model_visible, m.pending, m.superseded_by, m.created_at, m.metadata, "
    "m.raw_content"
)
#: How many values :data:`MESSAGE_COLUMNS` selects.
MESSAGE_COLUMN_COUNT = 17
MESSAGE_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)


def utc(value: datetime) -> datetime:
    """A stored time as the SQLite backend returns it (UTC, ``datetime.UTC``)."""
    return value.astimezone(UTC)


def maybe_utc(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def day(value: date | None) -> date | None:
    return value


def raw_bytes(text: str | None) -> bytes | None:
    """The stored form of a raw original (``bytea``; lone surrogates kept)."""
    return None if text is None else text.encode("utf-8", "surrogatepass")


def raw_text(value: Any) -> str | None:
    return None if value is None else bytes(value).decode("utf-8", "surrogatepass")


def tool_calls_json(row: NewMessage) -> str | None:
    return dump_json(row.tool_calls) if row.tool_calls is not None else None


def row_to_message(row: Sequence[Any]) -> Message:
    """Build a :class:`Message` from a ``SELECT {MESSAGE_COLUMNS}`` row."""
    return Message(
        id=row[1],
        channel=row[2],
        generation_id=row[3],
        generation=int(row[4]),
        seq=int(row[5]),
        role=row[6],
        kind=row[7],
        content=row[8],
        tool_calls=json.loads(row[9]) if row[9] is not None else None,
        tool_call_id=row[10],
        model_visible=bool(row[11]),
        pending=bool(row[12]),
        superseded_by=row[13],
        created_at=utc(row[14]),
        metadata=json.loads(row[15]),
        raw_content=raw_text(row[16]),
    )
