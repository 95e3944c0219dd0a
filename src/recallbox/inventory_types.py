"""What the inspector's inventory verbs return (issue #20): memory forecasts, indexed
documents and code files with their stale marks, hit-log rows per day, a thread's generation
timeline.

Frozen, slotted dataclasses; no behaviour. Re-exported from :mod:`recallbox`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from recallbox.types import Generation, MemoryEntry, Message, Thread


@dataclass(frozen=True, slots=True)
class MemoryForecast:
    """One memory entry and the day decay would move it if nothing touches it (DESIGN §4.3
    evaluated for future days, decay running daily; ``None``: never, or already there)."""

    entry: MemoryEntry
    dormant_on: date | None
    archived_on: date | None


@dataclass(frozen=True, slots=True)
class KnowledgeDocument:
    """One indexed document ``(scope, source)`` as stored: live and removed section counts,
    the last time one of its sections was written, the root it was synced from (``None``:
    added with ``add_document``) and its file identity."""

    scope: str | None
    source: str
    root: str | None
    sections: int
    removed_sections: int
    last_sync: datetime
    identity: str | None = None


@dataclass(frozen=True, slots=True)
class DocumentStatus:
    """A document with its stale mark: ``stale`` is ``"changed"`` (the file's sections differ
    from the stored ones), ``"missing"`` (the file is gone), ``None`` (unchanged, or not from a
    file: ``document.root`` is ``None``)."""

    document: KnowledgeDocument
    stale: str | None
    denied: bool = False


@dataclass(frozen=True, slots=True)
class DocumentPage:
    """One page of the visible indexed documents (by source), their stale marks checked for
    this page only: ``total`` visible documents in all, ``denied`` ones of excluded sources
    (counted, never named); ``page``/``pages`` 1-based, ``pages`` at least 1."""

    documents: list[DocumentStatus]
    page: int
    pages: int
    page_size: int
    total: int
    denied: int


@dataclass(frozen=True, slots=True)
class CodeFileStatus:
    """One indexed code file: its scope, path, language, symbol count, when its scope was last
    indexed, and its stale mark (``"changed"``: size, mtime or content differ from the index;
    ``"missing"``: gone; ``None``: unchanged)."""

    scope: str
    path: str
    language: str
    symbols: int
    indexed_at: datetime
    stale: str | None
    error: str | None = None
    denied: bool = False


@dataclass(frozen=True, slots=True)
class CodeFilePage:
    """One page of the visible indexed code files (by scope, then path), their stale marks
    checked for this page only: ``total`` visible files in all, ``denied`` ones of excluded
    sources (counted, never named), ``scopes`` the scopes holding a visible file."""

    files: list[CodeFileStatus]
    page: int
    pages: int
    page_size: int
    total: int
    denied: int
    scopes: list[str]


@dataclass(frozen=True, slots=True)
class DayHits:
    """Hit-log rows of one domain on one UTC day (``day``: ``YYYY-MM-DD``)."""

    day: str
    domain: str
    hits: int
    drills: int


@dataclass(frozen=True, slots=True)
class GenerationSpan:
    """One generation as the timeline shows it, read without loading its messages: how many
    it holds, the earliest and latest ``created_at`` among them (``None`` when it has none),
    and, when its first message is a compaction summary, that message's id, its length and its
    first characters (``summary_head``; the audit read's ``head_chars``)."""

    generation: Generation
    message_count: int
    first_at: datetime | None
    last_at: datetime | None
    summary_id: str | None = None
    summary_head: str | None = None
    summary_chars: int = 0


@dataclass(frozen=True, slots=True)
class ThreadTimeline:
    """One thread's timeline: a window of its generations (``spans``, in order, the selected
    one among them) and one page of the selected generation's messages.

    ``page``/``pages`` number the selected generation's message pages (1-based; ``pages`` is
    at least 1); ``earlier``/``later`` are the generation to open for the previous/next window
    of the timeline, ``None`` at either end.
    """

    thread: Thread
    spans: list[GenerationSpan]
    selected: int
    messages: list[Message]
    page: int
    pages: int
    page_size: int
    earlier: int | None
    later: int | None

    @property
    def selected_span(self) -> GenerationSpan:
        """The selected generation's span."""
        return next(s for s in self.spans if s.generation.number == self.selected)


__all__ = [
    "CodeFilePage",
    "CodeFileStatus",
    "DayHits",
    "DocumentPage",
    "DocumentStatus",
    "GenerationSpan",
    "KnowledgeDocument",
    "MemoryForecast",
    "ThreadTimeline",
]
