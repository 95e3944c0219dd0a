"""The storage protocol every backend implements (SQLite now, PostgreSQL later).

A store persists threads, generations and messages, keeps its full-text indexes in sync and
applies the privacy policy it stores. It does **not** validate user input (``Box`` does that
before building :class:`NewMessage` rows), rank results across domains, build windows, or call
an embedding model. Domain code talks to this protocol only; no driver is imported above it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from recallbox.types import DoctorReport, Generation, Message, Policy, Thread


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A validated, normalised message row, ready to insert.

    ``opens_generation`` marks a compaction summary: the store closes the thread's current
    generation and inserts this message as the first of the next one, in the same transaction.
    """

    role: str
    kind: str
    content: str
    raw_content: str | None
    tool_calls: list[dict[str, Any]] | None
    tool_calls_raw: str | None
    args_text: str
    tool_call_id: str | None
    model_visible: bool
    pending: bool
    created_at: datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    opens_generation: bool = False


@dataclass(frozen=True, slots=True)
class MessageFilter:
    """Which messages a search may see (DESIGN §3.2 exclusions), applied inside the store."""

    channel: str | None = None
    searchable_only: bool = True  # drop superseded, invisible, pending, machine events, summaries


@dataclass(frozen=True, slots=True)
class SearchableMessage:
    """What thread search needs of one candidate message (``generation`` is the number)."""

    id: str
    channel: str
    generation: int
    seq: int
    role: str
    content: str
    tool_calls: list[dict[str, Any]] | None


@dataclass(frozen=True, slots=True)
class ReadableMessage:
    """A message for ``read_message``: the stored message plus the raw tool-call arguments."""

    message: Message
    tool_calls_raw: str | None


class CandidateStream(Iterator[SearchableMessage]):
    """Candidates in search order; ``truncated`` becomes true once the store stopped at the
    caller's limit while its index held more (known only after that point is reached)."""

    def __init__(self) -> None:
        self.rows: Iterator[SearchableMessage] = iter(())
        self.truncated = False

    def __next__(self) -> SearchableMessage:
        return next(self.rows)


class Store(Protocol):
    """What a backend offers the domain layer."""

    capabilities: frozenset[str]

    def migrate(self) -> None:
        """Apply missing numbered migrations, one transaction each; refuse a newer schema."""

    def schema_version(self) -> int:
        """The highest applied migration number."""

    def close(self) -> None:
        """Close every connection this store opened."""

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction (``BEGIN IMMEDIATE`` on SQLite); nested calls join it."""

    def ensure_thread(self, channel: str, title: str | None) -> Thread:
        """Return the thread for ``channel``, creating it (generation 1) when missing."""

    def get_thread(self, channel: str) -> Thread | None:
        """The thread for ``channel`` or ``None``."""

    def list_threads(self) -> list[Thread]:
        """Every thread, oldest first."""

    def set_title(self, channel: str, title: str | None) -> None:
        """Set a thread's title."""

    def append(self, channel: str, rows: Sequence[NewMessage]) -> list[Message]:
        """Insert rows at the end of ``channel`` (created when missing), in one transaction."""

    def current_generation(self, channel: str) -> Generation:
        """The open generation of ``channel``."""

    def generations(self, channel: str) -> list[Generation]:
        """Every generation of ``channel``, in order."""

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        """Every message of ``channel`` (or of one generation), ordered by (generation, seq)."""

    def iter_messages(self, channel: str, generation: int | None = None) -> Iterator[Message]:
        """Like :meth:`messages`, streamed."""

    def get_message(self, message_id: str) -> Message | None:
        """One message by id, or ``None``."""

    def set_pending(self, message_id: str, pending: bool) -> Message:
        """Change a message's pending flag."""

    def set_superseded(self, message_id: str, by: str | None) -> Message:
        """Mark a message superseded by another (or clear it with ``None``)."""

    def set_quarantined(self, channel: str, quarantined: bool) -> None:
        """Quarantine or release a thread."""

    def set_source_excluded(self, name: str, excluded: bool, identity: str | None = None) -> None:
        """Add or remove a normalised source name (and its file identity) from the exclusions."""

    def set_thread_source(self, channel: str, source: str | None, identity: str | None) -> None:
        """Record the source a thread came from (normalised name, file identity)."""

    def thread_allowed(self, channel: str) -> bool:
        """True when the privacy policy lets ``channel`` be read (False for unknown channels)."""

    def policy(self) -> Policy:
        """The stored privacy policy."""

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check (and with ``repair``, rebuild) every full-text index; never loses a base row."""

    # -- thread search (DESIGN §3.2, §3.3) ---------------------------------------------------
    def literal_candidates(
        self,
        term: str,
        *,
        channel: str | None,
        case_sensitive: bool,
        limit: int,
        recent: int = 0,
    ) -> CandidateStream:
        """Searchable messages that may hold ``term`` in their content or an argument leaf.

        A superset the caller rechecks exactly. Found through an index, never a full scan:
        the trigram index for terms of 3+ characters, the CJK bigram index (content only) for
        shorter terms with CJK; ``recent`` adds the newest ``recent`` searchable messages in
        scope (a bounded scan for terms no index holds). The §3.2 exclusions and the
        privacy gate (quarantine, excluded sources) are applied; ``channel=None`` means every
        thread. Streamed in
        thread-search order (threads by last activity, newest first; generation descending;
        ``seq`` ascending), from the first ``limit`` candidates in that order (the stream's
        ``truncated`` says when the index held more).
        """

    def readable_message(self, message_id: str) -> ReadableMessage | None:
        """One message with its raw tool-call text, or ``None`` when unknown **or** quarantined."""


@dataclass(frozen=True, slots=True)
class ImportFile:
    """The sync state of one transcript file (``id`` is 0 before it is first saved)."""

    path: str
    format: str
    identity: str | None = None
    size: int = 0
    mtime_ns: int = 0
    prefix_hash: str = ""
    tail_hash: str = ""
    cursor_bytes: int = 0
    cursor_line: int = 0
    sync_count: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    id: int = 0


@dataclass(frozen=True, slots=True)
class ImportRecord:
    """One record key of an imported file and the message it became."""

    key: str
    channel: str
    message_id: str
    content_hash: str
    sync_id: int
    node: str | None = None


@dataclass(frozen=True, slots=True)
class ImportNode:
    """One Claude Code record in a file's branch forest (``side``: an inline sidechain)."""

    uuid: str
    parent: str | None
    root: str
    side: bool
    conversational: bool
    line: int
    superseded: bool = False


class ImportLedger(Protocol):
    """The bookkeeping of incremental transcript import (DESIGN §4.5), next to the messages.

    It stores which file was read how far, which record became which message, and the Claude
    Code branch forest of each file. Calls are meant to run inside one ``store.transaction()``
    per file, so a failed import leaves no trace. It never parses a file.
    """

    def import_file(self, path: str) -> ImportFile | None:
        """The sync state of ``path`` (an absolute path), or ``None``."""

    def save_import_file(self, file: ImportFile) -> ImportFile:
        """Insert or update a file's state (by ``id`` when set, else by path); returns it with
        its ``id``."""

    def import_files_with_identity(self, identity: str) -> list[ImportFile]:
        """The files recorded with this file identity (a moved file keeps its identity)."""

    def import_record(self, file_id: int, key: str) -> ImportRecord | None:
        """The record ``key`` of a file, or ``None``."""

    def put_import_records(self, file_id: int, records: Sequence[ImportRecord]) -> None:
        """Insert or replace records of a file (by key)."""

    def vanished_import_records(self, file_id: int, sync_id: int) -> Iterator[ImportRecord]:
        """The records of a file last seen before ``sync_id`` (a rewrite dropped them)."""

    def import_node(self, file_id: int, uuid: str) -> ImportNode | None:
        """A node of a file's branch forest, or ``None``."""

    def add_import_nodes(self, file_id: int, nodes: Sequence[ImportNode]) -> None:
        """Add nodes to a file's branch forest (a node already there is kept)."""

    def last_conversational_node(self, file_id: int, root: str, side: bool) -> str | None:
        """The uuid of the last conversational node (by line) of one tree of a file."""

    def reset_import_nodes(self, file_id: int) -> int:
        """Forget a file's branch forest (before it is read again from the start)."""

    def resolve_branches(
        self, file_id: int, root: str, side: bool, *, full: bool = False
    ) -> list[tuple[str, bool]]:
        """Recompute which nodes of one tree are superseded (the live line runs to the tree's
        last conversational record) and return ``(message id, superseded)`` for every message
        whose status must change: of the nodes whose status changed, or with ``full`` (a file
        read again from the start) of every node of the tree."""

    def next_live_message(self, message_id: str) -> str:
        """The first live message after ``message_id`` in its thread (else the last live one
        before it, else ``message_id`` itself): what a dropped message is superseded by."""

    def extend_message(self, message_id: str, row: NewMessage) -> None:
        """Replace a message's content, tool calls and metadata (records of one API message
        arriving in two syncs); indexes follow through their triggers."""

    def chunk_restart_seq(self, channel: str, seq: int) -> int:
        """Where re-chunking must start to take in a change at ``seq``: the first seq of the
        chunk holding (or preceding) ``seq``; ``seq`` itself when no chunk starts before it."""

    def iter_chunk_sources(self, channel: str, from_seq: int) -> Iterator[ChunkSource]:
        """The searchable messages of a thread from ``from_seq`` on, in order (streamed)."""

    def replace_transcript_chunks(
        self, channel: str, from_seq: int, chunks: Iterable[TranscriptChunk]
    ) -> int:
        """Make ``chunks`` the thread's chunks from ``from_seq`` on: a chunk whose text is
        unchanged is kept, a changed one rewritten, one no longer produced removed (chunks are
        an index, not history). Returns how many chunks were written."""

    def transcript_chunk(self, channel: str, first_seq: int, part: int) -> TranscriptChunk | None:
        """One chunk of a thread the privacy gate allows, or ``None``."""

    def has_transcript_chunks(self, channel: str) -> bool:
        """Whether a thread is chunked (an imported thread with searchable messages)."""

    def transcript_chunks(self, channel: str) -> list[tuple[int, str, TranscriptChunk]]:
        """``(rowid, content hash, chunk)`` of every chunk of a thread, in order."""

    def set_thread_times(
        self, channel: str, first: datetime, last: datetime, *, replace_last: bool
    ) -> None:
        """Date an imported thread by its transcript: ``created_at`` (and generation 1's
        ``opened_at``) move back to ``first``; ``last_activity`` becomes ``last`` (with
        ``replace_last``, for a thread this import created) or the later of the two."""


@dataclass(frozen=True, slots=True)
class ChunkSource:
    """One message as the chunker sees it."""

    id: str
    seq: int
    generation: int
    role: str
    content: str
    tool_calls: list[dict[str, Any]] | None = None
    source: str | None = None
    line_start: int | None = None
    line_end: int | None = None


@dataclass(frozen=True, slots=True)
class TranscriptChunk:
    """Consecutive messages of one generation (or one part of a long message)."""

    first_seq: int
    part: int
    last_seq: int
    generation: int
    message_ids: tuple[str, ...]
    text: str
    source: str | None
    line_start: int | None
    line_end: int | None
    message_offsets: tuple[int, ...] = ()
    """Where each message starts in ``text`` (parallel to ``message_ids``)."""


class SessionWindowStore(Protocol):
    """The reads behind the sessions bucket (DESIGN §4.5)."""

    def session_window(self, message_id: str, radius: int) -> list[Message]:
        """The hit and up to ``radius`` searchable messages before and after it in its thread,
        in order; ``[]`` when the hit is not searchable or its thread is denied."""

    def get_thread(self, channel: str) -> Thread | None:
        """The thread for ``channel`` or ``None``."""
