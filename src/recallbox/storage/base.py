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
