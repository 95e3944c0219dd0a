"""OpenAI-format chat transcripts: JSON documents or JSONL.

Accepted shapes (detected, never configured):

- a JSON document: one conversation object ``{"messages": [...], "id"?, "title"?}``, a list of
  such objects, or a bare list of messages;
- JSONL (``.jsonl``/``.ndjson``, or a file of several lines whose first line is a complete
  JSON value): one conversation per line (an object with ``messages``, or a list of
  messages), or one message per line (an object with ``role``) — every message line belongs
  to one conversation.

Thread names: ``openai:<id>`` from the conversation's ``id``. A conversation without one is
named after the file stem; inside a container of conversations (a list of them, or JSONL with
one per line) it is ``<stem>#<n>``, with ``n`` its 1-based position among the file's
conversations, so appending to the file never renames an earlier thread. A repeated id gets
``#<n>`` too.

Messages: roles ``user``/``assistant``/``system``/``tool`` (``developer`` becomes ``system``,
the legacy ``function`` role becomes ``tool``); ``content`` as a string, ``null`` or a list of
parts (text, and placeholders for images, audio and files); ``tool_calls`` items
``{id, type: "function", function: {name, arguments}}`` become ``{id, name, arguments}`` with
the arguments string kept as is; other message fields (``name``, ``refusal``,
``function_call``, ...) are kept verbatim in ``metadata["fields"]``.

Line ranges: a JSONL item comes from its line; in a JSON document each message gets the lines
its object spans (found with the standard decoder's ``raw_decode``, so positions are exact).
A JSON document is decoded as a whole (JSON has no line framing); a syntax error skips the rest
of the document and is reported with its line.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbox.importers._common import (
    NO_TYPE,
    FileReport,
    JsonObject,
    as_object,
    bounded_lines,
    compact_metadata,
    image_url_placeholder,
    iter_json_lines,
    join_parts,
    open_source,
    parse_timestamp,
    placeholder,
    str_or_none,
    type_name,
)
from recallbox.importers.records import (
    FORMAT_OPENAI,
    KIND_MESSAGE,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    ROLE_TOOL,
    ROLE_USER,
    ImportedMessage,
    ParsedTranscript,
)
from recallbox.limits import DEPTH_REASON, TooDeep, loads_bounded

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
ROLES = {
    "user": ROLE_USER,
    "assistant": ROLE_ASSISTANT,
    "system": ROLE_SYSTEM,
    "developer": ROLE_SYSTEM,
    "tool": ROLE_TOOL,
    "function": ROLE_TOOL,
}
MESSAGE_FIELDS = frozenset({"role", "content", "tool_calls", "tool_call_id"})
TIMESTAMP_FIELDS = ("created_at", "timestamp", "created")
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
INDEX_SEPARATOR = "#"
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass(slots=True)
class _Span:
    """A decoded JSON value with the 1-based lines it spans."""

    value: object
    line_start: int
    line_end: int


@dataclass(slots=True)
class _Conversation:
    messages: list[_Span]
    conversation_id: str | None = None
    title: str | None = None
    in_container: bool = False
    position: int = 0


@dataclass(slots=True)
class _FileShapes:
    """The conversations found in one file, and the report of what was not usable."""

    conversations: list[_Conversation] = field(default_factory=list)
    loose_messages: list[_Span] = field(default_factory=list)
    report: FileReport = field(default_factory=FileReport)

    def add_scanned(self, scanned: _Scanned, *, in_container: bool) -> None:
        """A walked JSON value: a conversation when it had a ``messages`` array."""
        if scanned.messages is None:
            self.add_container_item(scanned.span)
        else:
            fields = as_object(scanned.span.value)
            self._add_conversation(scanned.messages, fields, in_container=in_container)

    def add_container_item(self, span: _Span) -> None:
        """One element of a conversation container: a conversation, a message or unknown."""
        value = span.value
        if isinstance(value, list):
            messages = [_Span(item, span.line_start, span.line_end) for item in value]
            self._add_conversation(messages, {}, in_container=True)
        elif not isinstance(value, dict):
            self.report.skip(span.line_start, f"not a JSON object: {type(value).__name__}")
        elif "messages" in value:
            messages = value["messages"]
            if isinstance(messages, list):
                spans = [_Span(item, span.line_start, span.line_end) for item in messages]
                self._add_conversation(spans, value, in_container=True)
            else:
                self.report.skip(span.line_start, "conversation whose messages is not a list")
        elif "role" in value:
            self.loose_messages.append(span)
        else:
            self.report.count(type_name(value) or NO_TYPE)

    def _add_conversation(
        self, messages: list[_Span], fields: JsonObject, *, in_container: bool
    ) -> None:
        self.conversations.append(
            _Conversation(
                messages=messages,
                conversation_id=_conversation_id(fields),
                title=str_or_none(fields.get("title")),
                in_container=in_container,
                position=len(self.conversations) + 1,
            )
        )


def parse_openai(path: Path) -> list[ParsedTranscript]:
    """Parse an OpenAI-format chat file (JSON or JSONL) into one thread per conversation.

    Args:
        path: the ``.json``/``.jsonl`` file.

    Returns:
        The conversations in file order (the file's skipped lines and unknown records are
        reported on the first); one empty thread named after the file when none was found.

    Raises:
        NotFound: there is no file at ``path``.
    """
    shapes = _FileShapes()
    if _is_jsonl(path):
        for line, value in iter_json_lines(path, shapes.report):
            shapes.add_container_item(_Span(value, line, line))
    else:
        _read_document(path, shapes)
    if shapes.loose_messages:
        shapes.conversations.insert(0, _Conversation(messages=shapes.loose_messages))
    transcripts = [
        _transcript(path, conversation, name, shapes.report)
        for conversation, name in zip(
            shapes.conversations, _names(path, shapes.conversations), strict=True
        )
    ]
    if not transcripts:
        transcripts.append(_transcript(path, _Conversation(messages=[]), path.stem, shapes.report))
    shapes.report.sort()
    first = transcripts[0]
    first.skipped = shapes.report.skipped
    first.unknown_records = shapes.report.unknown_records
    first.truncated_tail = shapes.report.truncated_tail
    return transcripts


def _conversation_id(fields: JsonObject) -> str | None:
    raw_id = fields.get("id")
    if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or raw_id == "":
        return None
    return str(raw_id)


def _is_jsonl(path: Path) -> bool:
    """JSONL by suffix; otherwise when the file has several non-blank lines and the first one
    is a complete JSON value (a one-line file is a minified JSON document)."""
    if path.suffix.lower() in JSONL_SUFFIXES:
        return True
    with open_source(path) as stream:
        lines = (line for line in bounded_lines(stream) if line is None or line.strip())
        first = next(lines, None)
        if next(lines, None) is None:  # one line (or none): a minified JSON document
            return False
    if first is None:
        return True  # an oversized first line: only a JSONL file has lines that long
    try:
        loads_bounded(first)
    except TooDeep:
        return True  # a complete value, only too deep: a JSONL record to skip
    except json.JSONDecodeError:
        return False
    return True


def _names(path: Path, conversations: list[_Conversation]) -> list[str]:
    """Thread names: the id, else the stem; ``#<n>`` in containers and for repeated ids."""
    names = []
    seen: set[str] = set()
    for conversation in conversations:
        name = conversation.conversation_id or path.stem
        anonymous = conversation.conversation_id is None
        indexed = name in seen or (anonymous and conversation.in_container)
        seen.add(name)
        names.append(f"{name}{INDEX_SEPARATOR}{conversation.position}" if indexed else name)
    return names


# --- JSON documents with positions ------------------------------------------------------


class _Positions:
    """Character offset -> 1-based line number, for one document."""

    def __init__(self, text: str) -> None:
        self._newlines = [match.start() for match in re.finditer("\n", text)]

    def line(self, offset: int) -> int:
        return bisect.bisect_left(self._newlines, offset) + 1

    def span(self, value: object, start: int, end: int) -> _Span:
        return _Span(value, self.line(start), self.line(max(start, end - 1)))


@dataclass(slots=True)
class _Scanned:
    """A decoded value; an object's ``messages`` array comes as spans, outside its fields."""

    span: _Span
    messages: list[_Span] | None


def _read_document(path: Path, shapes: _FileShapes) -> None:
    with open_source(path) as stream:
        text = stream.read()
    scanner = _Scanner(text)
    try:
        start = scanner.skip_whitespace(0)
        if start == len(text):
            return
        if text[start] == "[":
            for element in scanner.array(start):
                shapes.add_scanned(element, in_container=True)
        else:
            value, _ = scanner.value(start)
            shapes.add_scanned(value, in_container=False)
    except json.JSONDecodeError as exc:
        shapes.report.skip(exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})")
    except RecursionError:
        shapes.report.skip(1, DEPTH_REASON)


class _Scanner:
    """Walks a JSON document with ``raw_decode``, keeping the lines of each message."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._positions = _Positions(text)

    def skip_whitespace(self, position: int) -> int:
        match = _WHITESPACE.match(self._text, position)
        return match.end() if match else position

    def _at(self, position: int, char: str) -> bool:
        return position < len(self._text) and self._text[position] == char

    def _first(self, start: int, close: str) -> tuple[int | None, int]:
        """For the container opened at ``start``: (offset of its first item, or ``None`` when
        it is empty, and then the offset after it)."""
        position = self.skip_whitespace(start + 1)
        if self._at(position, close):
            return None, position + 1
        return position, position

    def _next(self, end: int, close: str) -> tuple[int | None, int]:
        """After an item ending at ``end``: (offset of the next item, or ``None`` when the
        container closes, and then the offset after it)."""
        position = self.skip_whitespace(end)
        if self._at(position, ","):
            position = self.skip_whitespace(position + 1)
            return position, position
        if not self._at(position, close):
            raise json.JSONDecodeError(f"Expecting ',' or '{close}'", self._text, position)
        return None, position + 1

    def value(self, start: int) -> tuple[_Scanned, int]:
        """Decode the value at ``start``; an object is walked to find its messages."""
        if not self._at(start, "{"):
            value, end = _DECODER.raw_decode(self._text, start)
            return _Scanned(self._positions.span(value, start, end), None), end
        fields: JsonObject = {}
        messages: list[_Span] | None = None
        position, end = self._first(start, "}")
        while position is not None:
            key, after_key = _DECODER.raw_decode(self._text, position)
            colon = self.skip_whitespace(after_key)
            if not isinstance(key, str) or not self._at(colon, ":"):
                raise json.JSONDecodeError("Expecting a property", self._text, position)
            value_start = self.skip_whitespace(colon + 1)
            if key == "messages" and self._at(value_start, "["):
                messages, value_end = self.spans(value_start)
            else:
                fields[key], value_end = _DECODER.raw_decode(self._text, value_start)
            position, end = self._next(value_end, "}")
        return _Scanned(self._positions.span(fields, start, end), messages), end

    def spans(self, start: int) -> tuple[list[_Span], int]:
        """The elements of the array at ``start`` with their lines, and the array's end."""
        result = []
        position, end = self._first(start, "]")
        while position is not None:
            value, value_end = _DECODER.raw_decode(self._text, position)
            result.append(self._positions.span(value, position, value_end))
            position, end = self._next(value_end, "]")
        return result, end

    def array(self, start: int) -> Iterator[_Scanned]:
        """The elements of the top-level array at ``start``, objects walked."""
        position, _ = self._first(start, "]")
        while position is not None:
            element, value_end = self.value(position)
            yield element
            position, _ = self._next(value_end, "]")


# --- messages ----------------------------------------------------------------------------


def _transcript(
    path: Path, conversation: _Conversation, name: str, report: FileReport
) -> ParsedTranscript:
    items = []
    for span in conversation.messages:
        message = _message(span, str(path), report)
        if message is not None:
            items.append(message)
    return ParsedTranscript(
        channel=f"{FORMAT_OPENAI}:{name}",
        title=conversation.title,
        source_file=str(path),
        items=list(items),
    )


def _message(span: _Span, source_file: str, report: FileReport) -> ImportedMessage | None:
    value = span.value
    if not isinstance(value, dict):
        report.skip(span.line_start, f"message is not a JSON object: {type(value).__name__}")
        return None
    source_role = value.get("role")
    role = ROLES.get(source_role) if isinstance(source_role, str) else None
    if role is None:
        report.skip(span.line_start, f"message with unknown role {source_role!r}")
        return None
    extra = {key: item for key, item in value.items() if key not in MESSAGE_FIELDS}
    created_at = next(
        (
            parsed
            for key in TIMESTAMP_FIELDS
            if (parsed := parse_timestamp(value.get(key))) is not None
        ),
        None,
    )
    return ImportedMessage(
        role=role,
        content=_content_text(value.get("content"), report),
        tool_calls=_tool_calls(value.get("tool_calls")),
        tool_call_id=str_or_none(value.get("tool_call_id")),
        kind=KIND_MESSAGE,
        model_visible=True,
        created_at=created_at,
        metadata=compact_metadata(
            source_file=source_file,
            line_start=span.line_start,
            line_end=span.line_end,
            source_role=source_role if source_role != role else None,
            fields=extra or None,
        ),
        superseded=False,
        line_start=span.line_start,
        line_end=span.line_end,
    )


def _content_text(content: object, report: FileReport) -> str:
    """String content as is; content parts as their text, media as placeholders."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(part)
            continue
        part_object = as_object(part)
        part_type = type_name(part_object)
        if part_type in TEXT_PART_TYPES and isinstance(part_object.get("text"), str):
            parts.append(part_object["text"])
        elif part_type == "refusal" and isinstance(part_object.get("refusal"), str):
            parts.append(part_object["refusal"])
        elif part_type in ("image_url", "input_image"):
            image = part_object.get("image_url")
            parts.append(image_url_placeholder(as_object(image).get("url", image)))
        elif part_type == "input_audio":
            audio = as_object(part_object.get("input_audio"))
            parts.append(placeholder("audio", str_or_none(audio.get("format"))))
        elif part_type == "file":
            file = as_object(part_object.get("file"))
            parts.append(placeholder("file", str_or_none(file.get("filename"))))
        else:
            name = part_type or NO_TYPE
            report.count(f"content_part:{name}")
            parts.append(placeholder(name))
    return join_parts(parts)


def _tool_calls(raw: object) -> list[dict[str, Any]] | None:
    """``[{id, type, function: {name, arguments}}]`` -> ``[{id, name, arguments}]``."""
    if not isinstance(raw, list) or not raw:
        return None
    calls = []
    for index, call in enumerate(raw):
        call_object = as_object(call)
        function = as_object(call_object.get("function") or call_object.get("custom"))
        arguments = function.get("arguments", function.get("input"))
        calls.append(
            {
                "id": str_or_none(call_object.get("id")) or f"call@{index}",
                "name": str_or_none(function.get("name")) or "",
                "arguments": arguments,
            }
        )
    return calls
