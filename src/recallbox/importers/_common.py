"""Shared plumbing of the transcript parsers: streaming JSONL, timestamps, placeholders.

Every parser reads its file line by line (``encoding="utf-8", errors="replace"``) through
:func:`iter_json_lines`, which never raises on bad input: a line that is not valid JSON is
recorded as a :class:`SkippedLine`, except an unterminated last line (no newline) that does not
parse, which is a truncated tail: the writer is probably still appending it, so the next sync
reads it again and it is not counted as malformed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from recallbox.errors import NotFound
from recallbox.importers.records import SkippedLine
from recallbox.limits import DEPTH_REASON, MAX_RECORD_BYTES, SIZE_REASON, TooDeep, loads_bounded

JsonObject = dict[str, Any]

SOURCE_ENCODING = "utf-8"
SOURCE_ERRORS = "replace"
BLOCK_SEPARATOR = "\n\n"
"""Joins the text parts of one message (content blocks, content parts)."""
NO_TYPE = "<none>"
"""The ``unknown_records`` key part for a record or block without a string ``type``."""
MAX_OTHER_SESSION_IDS = 20
"""Other session ids a file's state remembers (a file keyed by its first one reports them)."""
OTHER_SESSION_IDS_KEY = "other_session_ids"
"""Where a reader's state keeps the session ids after the first (:func:`note_other_id`)."""
EPOCH_MILLISECONDS_THRESHOLD = 100_000_000_000
"""A numeric timestamp above this is in milliseconds (1e11 s is the year 5138)."""


@dataclass(slots=True)
class FileReport:
    """What a parser could not turn into messages, for one source file."""

    skipped: list[SkippedLine] = field(default_factory=list)
    unknown_records: dict[str, int] = field(default_factory=dict)
    truncated_tail: bool = False

    def skip(self, line: int, reason: str) -> None:
        self.skipped.append(SkippedLine(line=line, reason=reason))

    def count(self, record_type: str) -> None:
        self.unknown_records[record_type] = self.unknown_records.get(record_type, 0) + 1

    def sort(self) -> None:
        """Order the skipped lines by line number (parsers skip in more than one pass)."""
        self.skipped.sort(key=lambda skipped: skipped.line)


@contextmanager
def open_source(path: Path) -> Iterator[TextIO]:
    """Open a transcript for reading as text (bad bytes become U+FFFD).

    Raises:
        NotFound: there is no file at ``path``.
    """
    try:
        stream = path.open(encoding=SOURCE_ENCODING, errors=SOURCE_ERRORS)
    except FileNotFoundError as exc:
        raise NotFound(f"no transcript file at {path}; check the path") from exc
    with stream:
        yield stream


SKIP_BLOCK_CHARS = 1 << 20
"""An oversized line is passed over in blocks of this many characters (never held whole)."""
MAX_CHAR_BYTES = 4
"""The most bytes one character takes in UTF-8."""


def bounded_lines(stream: TextIO) -> Iterator[str | None]:
    """The lines of ``stream``; a line longer than ``MAX_RECORD_BYTES`` (its newline excluded)
    comes out as ``None``, read past in blocks so it is never held in memory."""
    while line := stream.readline(MAX_RECORD_BYTES + 2):
        body = line.rstrip("\r\n")
        if len(body) * MAX_CHAR_BYTES <= MAX_RECORD_BYTES or (
            len(body) <= MAX_RECORD_BYTES
            and len(body.encode(SOURCE_ENCODING, "surrogatepass")) <= MAX_RECORD_BYTES
        ):
            yield line
            continue
        while not line.endswith("\n") and (line := stream.readline(SKIP_BLOCK_CHARS)):
            pass
        yield None


def iter_json_lines(path: Path, report: FileReport) -> Iterator[tuple[int, object]]:
    """Yield ``(line number, decoded JSON value)`` for each non-blank line of ``path``.

    Malformed lines go to ``report.skipped``; an unterminated malformed last line sets
    ``report.truncated_tail`` instead.

    Raises:
        NotFound: there is no file at ``path``.
    """
    with open_source(path) as stream:
        for number, line in enumerate(bounded_lines(stream), start=1):
            if line is None:
                report.skip(number, SIZE_REASON)
                continue
            if not line.strip():
                continue
            try:
                value: object = loads_bounded(line)
            except TooDeep:
                report.skip(number, DEPTH_REASON)
                continue
            except json.JSONDecodeError as exc:
                if line.endswith("\n"):
                    report.skip(number, f"invalid JSON: {exc.msg} (column {exc.colno})")
                else:
                    report.truncated_tail = True
                continue
            yield number, value


def iter_json_objects(path: Path, report: FileReport) -> Iterator[tuple[int, JsonObject]]:
    """Like :func:`iter_json_lines`, skipping (with a reason) lines that are not objects."""
    for number, value in iter_json_lines(path, report):
        if isinstance(value, dict):
            yield number, value
        else:
            report.skip(number, f"not a JSON object: {type(value).__name__}")


def parse_timestamp(value: object) -> datetime | None:
    """An ISO 8601 string or a Unix epoch number (seconds or milliseconds) as aware UTC.

    A naive ISO timestamp is taken as UTC. Anything else (missing, malformed) is ``None``.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > EPOCH_MILLISECONDS_THRESHOLD else value
        try:
            return datetime.fromtimestamp(seconds, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def str_or_none(value: object) -> str | None:
    """``value`` when it is a non-empty string, else ``None``."""
    return value if isinstance(value, str) and value else None


def type_name(value: object) -> str | None:
    """The ``type`` of a JSON object when it is a string (anything else, even a list, is
    ``None``, so it can be looked up in sets safely)."""
    if not isinstance(value, dict):
        return None
    kind = value.get("type")
    return kind if isinstance(kind, str) else None


def as_object(value: object) -> JsonObject:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def compact_metadata(**fields: Any) -> JsonObject:
    """The keyword arguments whose value is not ``None``, in the given order."""
    return {key: value for key, value in fields.items() if value is not None}


def placeholder(kind: str, detail: str | None = None) -> str:
    """The text standing in for non-text content: ``[image: image/png]``, ``[document]``."""
    return f"[{kind}: {detail}]" if detail else f"[{kind}]"


def data_url_media_type(url: str) -> str | None:
    """The media type of a ``data:`` URL (``data:image/png;base64,...`` -> ``image/png``)."""
    if not url.startswith("data:"):
        return None
    head = url[len("data:") :].split(",", 1)[0]
    media_type = head.split(";", 1)[0]
    return media_type or None


def image_url_placeholder(url: object) -> str:
    """``[image: <media type>]`` for a data URL, ``[image: <url>]`` for a link."""
    if not isinstance(url, str) or not url:
        return placeholder("image")
    if url.startswith("data:"):
        return placeholder("image", data_url_media_type(url))
    return placeholder("image", url)


def join_parts(parts: list[str]) -> str:
    """The non-empty text parts of a message joined by :data:`BLOCK_SEPARATOR`."""
    return BLOCK_SEPARATOR.join(part for part in parts if part)


def note_other_id(state: dict[str, Any], first: str | None, seen: str | None) -> None:
    """Remember ``seen`` in ``state`` when it is a session id other than ``first`` (the one
    the file's thread is keyed by), up to :data:`MAX_OTHER_SESSION_IDS`."""
    if seen is None or first is None or seen == first:
        return
    others: list[str] = state.setdefault(OTHER_SESSION_IDS_KEY, [])
    if seen not in others and len(others) < MAX_OTHER_SESSION_IDS:
        others.append(seen)
