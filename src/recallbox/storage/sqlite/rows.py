"""Row codecs shared by the SQLite mixins: ids, times, JSON, hashes, the message columns.

A leaf module (it imports nothing else of the backend), so every mixin can use it at import time.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from recallbox.storage.values import NewMessage
from recallbox.text.cjk import segment
from recallbox.types import Message

ID_RANDOM_BYTES = 8
MESSAGE_ID_PREFIX = "m_"
GENERATION_ID_PREFIX = "g_"

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


def new_id(prefix: str) -> str:
    """An opaque random id (64 random bits, hex)."""
    return prefix + secrets.token_hex(ID_RANDOM_BYTES)


def format_time(value: datetime) -> str:
    """ISO-8601 UTC with microseconds: sorts lexically in time order."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(value: str) -> datetime:
    """Inverse of :func:`format_time`."""
    return datetime.fromisoformat(value)


def now() -> str:
    """The current time, as :func:`format_time` writes it."""
    return format_time(datetime.now(UTC))


def dump_json(value: Any) -> str:
    """JSON text for storage; falls back to ASCII escapes when a string cannot be UTF-8."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text


def content_hash(content: str, args_text: str) -> str:
    """A stable hash of what a message says (dedupe, change detection)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(content.encode("utf-8", "surrogatepass"))
    digest.update(b"\x00")
    digest.update(args_text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


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
    return StoredColumns(text_columns(row), dump_json(row.metadata))


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


def json_list(values: Sequence[Any]) -> str:
    """A JSON array for ``json_each(?)``: how an id list of any length is bound."""
    return json.dumps(list(values), ensure_ascii=True)
