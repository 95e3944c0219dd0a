"""The neutral records every transcript parser produces.

A parser turns one transcript file into :class:`ParsedTranscript` values: one per thread (a
session, or a sub-agent conversation inside it). A thread is a list of items in thread order,
each either an :class:`ImportedMessage` or a :class:`Compaction`. A compaction closes the
current generation; its summary becomes the first message of the next generation.

The records hold no storage concepts (no message ids, no sequence numbers): the core assigns
those when it appends ``ImportedMessage.as_append_kwargs()`` to a thread. Everything a parser
could not map to a message is still accounted for: malformed lines are listed in
``ParsedTranscript.skipped`` and record types kept only as machine events or only counted are
tallied in ``ParsedTranscript.unknown_records``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recallbox.errors import InvalidArgument

ROLE_USER = "user"
ROLE_ASSISTANT = "assistant"
ROLE_TOOL = "tool"
ROLE_SYSTEM = "system"
ROLES = frozenset({ROLE_USER, ROLE_ASSISTANT, ROLE_TOOL, ROLE_SYSTEM})

KIND_MESSAGE = "message"
KIND_MACHINE_EVENT = "machine_event"
IMPORT_KINDS = frozenset({KIND_MESSAGE, KIND_MACHINE_EVENT})

FORMAT_CLAUDE_CODE = "claude-code"
FORMAT_CODEX = "codex"
FORMAT_OPENAI = "openai"
FORMATS = (FORMAT_CLAUDE_CODE, FORMAT_CODEX, FORMAT_OPENAI)


def _check_lines(line_start: int, line_end: int) -> None:
    if line_start < 1 or line_end < line_start:
        raise InvalidArgument(
            f"line range {line_start}-{line_end} is invalid; lines are 1-based and "
            "line_end must not precede line_start"
        )


def _check_aware(created_at: datetime | None) -> None:
    if created_at is not None and created_at.utcoffset() is None:
        raise InvalidArgument("created_at must be timezone-aware; pass a UTC datetime")


@dataclass(frozen=True, slots=True)
class ImportedMessage:
    """One message of an imported thread, ready for ``box.append_many``.

    ``tool_calls`` items are ``{"id": str, "name": str, "arguments": <JSON value or raw JSON
    string>}``. ``superseded`` marks a message on an abandoned branch of the source (the core
    stores it as superseded). ``line_start``/``line_end`` are the 1-based source lines the
    message came from (several lines when records were merged).
    """

    role: str
    content: str
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    kind: str
    model_visible: bool
    created_at: datetime | None
    metadata: dict[str, Any]
    superseded: bool
    line_start: int
    line_end: int

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InvalidArgument(f"role {self.role!r} is not one of {sorted(ROLES)}")
        if self.kind not in IMPORT_KINDS:
            raise InvalidArgument(f"kind {self.kind!r} is not one of {sorted(IMPORT_KINDS)}")
        _check_lines(self.line_start, self.line_end)
        _check_aware(self.created_at)

    def as_append_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of ``box.append`` / one mapping of ``box.append_many``."""
        return {
            "role": self.role,
            "content": self.content,
            "tool_calls": self.tool_calls,
            "tool_call_id": self.tool_call_id,
            "kind": self.kind,
            "model_visible": self.model_visible,
            "created_at": self.created_at,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True, slots=True)
class Compaction:
    """A context compaction: closes the current generation; ``summary`` opens the next one."""

    summary: str
    created_at: datetime | None
    metadata: dict[str, Any]
    line_start: int
    line_end: int

    def __post_init__(self) -> None:
        _check_lines(self.line_start, self.line_end)
        _check_aware(self.created_at)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A source line that could not be used (malformed JSON, wrong shape), with the reason."""

    line: int
    reason: str


ThreadItem = ImportedMessage | Compaction


@dataclass(slots=True)
class ParsedTranscript:
    """One thread parsed from a transcript file.

    ``channel`` is ``"<format>:<session id>"``; sub-agent threads name their parent in
    ``parent_channel``. ``skipped``, ``unknown_records`` and ``truncated_tail`` describe a
    whole source file and are reported on the first thread parsed from that file only (a
    sub-agent file has its own), so that summing them over a parse result never counts a line
    twice.
    """

    channel: str
    title: str | None
    source_file: str
    parent_channel: str | None = None
    items: list[ThreadItem] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)
    unknown_records: dict[str, int] = field(default_factory=dict)
    truncated_tail: bool = False

    @property
    def messages(self) -> list[ImportedMessage]:
        """The messages of every generation, in thread order (compactions left out)."""
        return [item for item in self.items if isinstance(item, ImportedMessage)]

    @property
    def generations(self) -> list[list[ImportedMessage]]:
        """Messages split at each compaction: index 0 is generation 1.

        The summary of a compaction is not repeated here; it is ``Compaction.summary``.
        """
        result: list[list[ImportedMessage]] = [[]]
        for item in self.items:
            if isinstance(item, Compaction):
                result.append([])
            else:
                result[-1].append(item)
        return result
