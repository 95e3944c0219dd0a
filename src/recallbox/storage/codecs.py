"""Row codecs every backend shares: public ids, stored JSON, content hashes, times.

Backend-neutral (no driver, no SQL): what two backends must compute **identically** lives here
once — a content hash written by one backend is compared by the other after
``recallbox migrate`` (a vector stays fresh only while its recorded hash equals its row's), and
a chunk's digest decides whether a re-chunk rewrites it. ``storage/sqlite/rows.py`` and
``storage/postgres/rows.py`` re-export what they use.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from recallbox.storage.values import NewMessage, TranscriptChunk

ID_RANDOM_BYTES = 8
MESSAGE_ID_PREFIX = "m_"
GENERATION_ID_PREFIX = "g_"
SECTION_ID_PREFIX = "s_"
#: Bytes of every BLAKE2b digest below (32 hex characters).
DIGEST_BYTES = 16
#: The separators of stored JSON (:func:`dump_json`): compact.
STORED_JSON_SEPARATORS = (",", ":")


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
    text = json.dumps(value, ensure_ascii=False, separators=STORED_JSON_SEPARATORS)
    if not is_utf8(text):
        text = json.dumps(value, ensure_ascii=True, separators=STORED_JSON_SEPARATORS)
    return text


def stored_metadata(row: NewMessage) -> str:
    """The stored JSON of a new row's metadata: :func:`dump_json` of it, or the text
    :func:`~recallbox.domains.messages.build_row` already made by that same dump."""
    return row.metadata_json if row.metadata_json is not None else dump_json(row.metadata)


def content_hash(content: str, args_text: str) -> str:
    """A stable hash of what a message says (dedupe, change detection)."""
    digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
    digest.update(content.encode("utf-8", "surrogatepass"))
    digest.update(b"\x00")
    digest.update(args_text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def text_hash(text: str) -> str:
    """The hash of one stored text (a tool output's original)."""
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=DIGEST_BYTES
    ).hexdigest()


def chunk_hash(chunk: TranscriptChunk) -> str:
    """What a transcript chunk says and where it points: an unchanged digest means a re-chunk
    keeps the stored row (and its vector)."""
    digest = hashlib.blake2b(digest_size=DIGEST_BYTES)
    digest.update(chunk.text.encode("utf-8", "surrogatepass"))
    digest.update(json.dumps([chunk.message_ids, chunk.source, chunk.line_start,
                              chunk.line_end, chunk.last_seq]).encode("utf-8"))  # fmt: skip
    return digest.hexdigest()


def json_list(values: Sequence[Any]) -> str:
    """A JSON array (ASCII): how an id list of any length is bound as one value."""
    return json.dumps(list(values), ensure_ascii=True)


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be bound as stored text: a stored id always can, so an id holding a
    lone surrogate (argv bytes that were not UTF-8) is simply unknown."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def storable(text: str) -> bool:
    """Whether ``text`` can be a stored key: valid UTF-8 without NUL (every stored text is
    normalised so, DESIGN §3.2); a lookup of any other text finds nothing."""
    return "\x00" not in text and is_utf8(text)
