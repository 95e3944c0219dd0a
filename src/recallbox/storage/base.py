"""The storage protocol every backend implements (SQLite now, PostgreSQL later).

A store persists threads, generations and messages, keeps its full-text indexes in sync and
applies the privacy policy it stores. It does **not** validate user input (``Box`` does that
before building :class:`NewMessage` rows), rank results across domains, build windows, or call
an embedding model. Domain code talks to this protocol only; no driver is imported above it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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
        quarantine gate are applied; ``channel=None`` means every thread. Streamed in
        thread-search order (threads by last activity, newest first; generation descending;
        ``seq`` ascending), from the first ``limit`` candidates in that order (the stream's
        ``truncated`` says when the index held more).
        """

    def keyword_messages(
        self, phrases: Sequence[str], *, limit: int
    ) -> list[tuple[SearchableMessage, float]]:
        """Searchable messages of every non-quarantined thread matching any of ``phrases``
        (plain text, quoted by the store) in the ranked word index, best first, with scores
        (higher is better)."""

    def readable_message(self, message_id: str) -> ReadableMessage | None:
        """One message with its raw tool-call text, or ``None`` when unknown **or** quarantined."""
