"""Row codecs shared by the SQLite mixins: ids, times, JSON, hashes, the message columns.

A leaf module (it imports nothing else of the backend), so every mixin can use it at import time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recallbox.storage.codecs import (
    GENERATION_ID_PREFIX,
    ID_RANDOM_BYTES,
    MESSAGE_ID_PREFIX,
    content_hash,
    dump_json,
    format_time,
    json_list,
    new_id,
    now,
    parse_time,
    stored_metadata,
)
from recallbox.storage.values import NewMessage
from recallbox.text.cjk import segment
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


def stored_seg(text: str) -> str:
    """The stored ``content_seg`` of ``text``: its CJK-segmented form, or ``''`` when that is
    the text itself (text stored once; the ranked index reads it through a view)."""
    seg = segment(text)
    return "" if seg == text else seg


def text_columns(row: NewMessage) -> tuple[object, ...]:
    """The stored values of ``content, content_seg, args_text, raw_content, tool_calls,
    tool_calls_raw`` for ``row``, in that order."""
    return (
        row.content,
        stored_seg(row.content),
        row.args_text,
        row.raw_content.encode("utf-8", "surrogatepass") if row.raw_content is not None else None,
        dump_json(row.tool_calls) if row.tool_calls is not None else None,
        row.tool_calls_raw,
    )


@dataclass(frozen=True, slots=True)
class StoredColumns:
    """What a new message row stores, and the values a read of it would give back."""

    text: tuple[object, ...]  # :func:`text_columns`
    metadata: str  # the stored JSON

    def tool_calls(self) -> list[dict[str, Any]] | None:
        """The tool calls as a read returns them (a fresh copy of the stored JSON)."""
        stored = self.text[4]
        return json.loads(stored) if isinstance(stored, str) else None

    def metadata_value(self) -> dict[str, Any]:
        """The metadata as a read returns it."""
        return {} if self.metadata == "{}" else dict(json.loads(self.metadata))


def stored_columns(row: NewMessage) -> StoredColumns:
    """The stored values of ``row`` (see :class:`StoredColumns`)."""
    return StoredColumns(text_columns(row), stored_metadata(row))


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A new message row with every stored value computed but its place (thread, generation,
    ``seq``): an append prepares its rows before it takes the write lock, so the lock is held
    for the inserts alone."""

    uid: str
    row: NewMessage
    created: str  # the stored ``created_at``
    stored: StoredColumns
    values: tuple[object, ...]  # the stored columns after ``seq``, in insert order

    def message(self, channel: str, generation_uid: str, generation: int, seq: int) -> Message:
        """The message as a read of the inserted row returns it (no re-read needed)."""
        row = self.row
        return Message(
            id=self.uid,
            channel=channel,
            generation_id=generation_uid,
            generation=generation,
            seq=seq,
            role=row.role,
            kind=row.kind,
            content=row.content,
            tool_calls=self.stored.tool_calls(),
            tool_call_id=row.tool_call_id,
            model_visible=row.model_visible,
            pending=row.pending,
            superseded_by=None,
            created_at=parse_time(self.created),
            metadata=self.stored.metadata_value(),
            raw_content=row.raw_content,
        )


def prepare_message(row: NewMessage) -> PreparedMessage:
    """Every stored value of ``row`` but its place (see :class:`PreparedMessage`)."""
    created = format_time(row.created_at)
    stored = stored_columns(row)
    values = (
        row.role,
        row.kind,
        *stored.text,
        row.tool_call_id,
        int(row.model_visible),
        int(row.pending),
        created,
        stored.metadata,
        content_hash(row.content, row.args_text),
    )
    return PreparedMessage(new_id(MESSAGE_ID_PREFIX), row, created, stored, values)


def row_to_message(row: Sequence[Any]) -> Message:
    """Build a :class:`Message` from a ``SELECT {MESSAGE_COLUMNS}`` row."""
    raw = row[16]
    return Message(
        id=row[1],
        channel=row[2],
        generation_id=row[3],
        generation=row[4],
        seq=row[5],
        role=row[6],
        kind=row[7],
        content=row[8],
        tool_calls=json.loads(row[9]) if row[9] is not None else None,
        tool_call_id=row[10],
        model_visible=bool(row[11]),
        pending=bool(row[12]),
        superseded_by=row[13],
        created_at=parse_time(row[14]),
        metadata=json.loads(row[15]),
        raw_content=bytes(raw).decode("utf-8", "surrogatepass") if raw is not None else None,
    )


__all__ = [
    "GENERATION_ID_PREFIX",
    "ID_RANDOM_BYTES",
    "MESSAGE_ID_PREFIX",
    "StoredColumns",
    "content_hash",
    "dump_json",
    "format_time",
    "json_list",
    "new_id",
    "now",
    "parse_time",
    "row_to_message",
    "stored_columns",
    "stored_metadata",
    "stored_seg",
    "text_columns",
]
