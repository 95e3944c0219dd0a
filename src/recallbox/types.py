"""Frozen result types of the public API (DESIGN §2, §9)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Role = Literal["user", "assistant", "tool", "system"]
Kind = Literal["message", "machine_event", "compaction_summary"]
ROLES: tuple[str, ...] = ("user", "assistant", "tool", "system")
KINDS: tuple[str, ...] = ("message", "machine_event", "compaction_summary")


@dataclass(frozen=True, slots=True)
class Thread:
    """One conversation, addressed by its unique ``channel``."""

    channel: str
    title: str | None
    quarantined: bool
    created_at: datetime
    generation_count: int = 1
    message_count: int = 0


@dataclass(frozen=True, slots=True)
class Generation:
    """One context-window lifetime of a thread; ``number`` starts at 1."""

    id: str
    number: int
    channel: str
    opened_at: datetime

    @property
    def session_id(self) -> str:
        """MaxClaw's name for a generation id."""
        return self.id


@dataclass(frozen=True, slots=True)
class Message:
    """One stored message, exactly as appended (text normalised per ``recallbox.text.normalize``).

    ``tool_calls`` items are ``{"id": str, "name": str, "arguments": <JSON value or str>}``.
    ``raw_content`` is the original text when normalisation changed it, else ``None``.
    """

    id: str
    channel: str
    generation_id: str
    generation: int
    seq: int
    role: str
    kind: str
    content: str
    tool_calls: list[dict[str, Any]] | None
    tool_call_id: str | None
    model_visible: bool
    pending: bool
    superseded_by: str | None
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    raw_content: str | None = None

    @property
    def generation_number(self) -> int:
        """Alias of :attr:`generation`."""
        return self.generation

    @property
    def session_id(self) -> str:
        """MaxClaw's name for the generation id."""
        return self.generation_id


@dataclass(frozen=True, slots=True)
class Policy:
    """The stored privacy policy: quarantined channels and excluded sources."""

    quarantined: tuple[str, ...]
    excluded_sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """What ``doctor`` found for one full-text index."""

    table: str
    integrity_ok: bool
    probe_ok: bool
    probes: int
    probe_misses: int
    content_rows: int
    index_rows: int
    triggers_ok: bool
    detail: str = ""

    @property
    def healthy(self) -> bool:
        """True when every check passed."""
        return (
            self.integrity_ok
            and self.probe_ok
            and self.triggers_ok
            and self.content_rows == self.index_rows
        )


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """The result of ``doctor`` (and of ``doctor --repair``: ``repaired`` lists what was rebuilt)."""

    indexes: tuple[IndexHealth, ...]
    schema_version: int
    repaired: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        """True when every index is healthy."""
        return all(index.healthy for index in self.indexes)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked search result (``box.search``, DESIGN §4.5, §9); higher ``score`` is better.

    ``id`` is the message/chunk/section/entry/symbol id; ``text`` is at most 800 characters of
    it, verbatim, around the best match. ``keyword`` is the normalised keyword score ``k`` and
    ``vector`` the vector similarity ``v`` the score was fused from (``None``: that leg is
    absent for this hit). ``source`` and ``lines`` name a file and line range where the domain
    has one (transcripts, knowledge, code).
    """

    id: str
    score: float
    text: str
    domain: str
    channel: str | None = None
    source: str | None = None
    lines: tuple[int, int] | None = None
    created_at: datetime | None = None
    keyword: float | None = None
    vector: float | None = None
    role: str | None = None
    best_message_id: str | None = None
    """``transcripts``: the chunk's message that holds the most query terms (the aggregator
    skips a chunk whose best message the sessions bucket already shows)."""
    explain: Mapping[str, float | None] | None = None
    """``sessions``: each ranking component the score was combined from (``base``,
    ``context``, ``neighbour``, ``episode``, ``participant``, ``date``; ``None``: absent,
    renormalised away; #21)."""


@dataclass(frozen=True, slots=True)
class SkippedRecord:
    """A source line an import could not use, with the reason."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class FileImportReport:
    """What one sync did to one transcript file.

    ``status``: ``new`` (first import), ``appended`` (read on from the cursor), ``resynced``
    (the file was rewritten: read again, new records added, vanished ones superseded),
    ``unchanged`` (a stat and a hash), or ``error`` (nothing of this file was written; see
    ``error``). ``records`` counts the source records read by this sync; ``added`` the messages
    it created, ``merged`` the stored messages it continued, ``superseded`` the messages it
    marked superseded (abandoned branches, vanished records).
    """

    path: str
    format: str
    status: str
    records: int = 0
    added: int = 0
    merged: int = 0
    superseded: int = 0
    skipped: tuple[SkippedRecord, ...] = ()
    unknown_records: dict[str, int] = field(default_factory=dict)
    channels: tuple[str, ...] = ()
    truncated_tail: bool = False
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ImportReport:
    """The result of ``box.import_transcripts``: one :class:`FileImportReport` per file."""

    format: str
    files: tuple[FileImportReport, ...]

    @property
    def records(self) -> int:
        """Source records read, over every file."""
        return sum(f.records for f in self.files)

    @property
    def added(self) -> int:
        """Messages created, over every file."""
        return sum(f.added for f in self.files)

    @property
    def skipped(self) -> int:
        """Source lines skipped, over every file."""
        return sum(len(f.skipped) for f in self.files)

    @property
    def errors(self) -> tuple[FileImportReport, ...]:
        """The files that failed (nothing of them was written)."""
        return tuple(f for f in self.files if f.error is not None)

    @property
    def unknown_records(self) -> dict[str, int]:
        """Record types kept only as machine events or only counted, summed over files."""
        total: dict[str, int] = {}
        for f in self.files:
            for key, count in f.unknown_records.items():
                total[key] = total.get(key, 0) + count
        return dict(sorted(total.items()))


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """Where a running import is: handed to the ``progress`` callback of an import."""

    path: str
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    records: int
