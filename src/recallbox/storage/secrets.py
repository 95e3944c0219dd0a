"""The storage protocols of the secrets verbs (DESIGN §7a): purge, redact, and the online
backup. Part of the contract of ``recallbox.storage.base`` (``SecretStore`` is re-exported
there and composed into its ``Store``; ``Backup`` is a capability of file backends and
``VacuumFull`` one of server backends, checked with ``require``/``isinstance``); kept apart
only to keep each module short.

These are the only deletes in recallbox, and only person-facing verbs call them (an
architecture test keeps them off every agent path).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

#: ``rewrite(text) -> (new text, replacements)``: what a redaction does to one stored text.
TextRewrite = Callable[[str], tuple[str, int]]


@dataclass(frozen=True, slots=True)
class SecretTarget:
    """What a purge or a redaction reaches: any of one message, one thread, one memory entry,
    the sections of knowledge documents and the code files ``source`` names (normalised as
    exclusions are and matched as they match: a name without ``/`` by basename, one with ``/``
    by path — for a document equal or ending with ``/`` + it, for a code file equal) and one
    stored tool output (``handle``)."""

    message_id: str | None = None
    channel: str | None = None
    key: str | None = None
    source: str | None = None
    handle: str | None = None


@dataclass(frozen=True, slots=True)
class ErasedRows:
    """What :meth:`SecretStore.purge_rows` removed, and the threads whose transcript chunks
    must be rebuilt from a seq on (``rechunk``: ``(channel, seq)``)."""

    messages: int = 0
    threads: int = 0
    chunks: int = 0
    sections: int = 0
    memories: int = 0
    outputs: int = 0
    hits: int = 0
    rechunk: tuple[tuple[str, int], ...] = ()
    files: int = 0


@dataclass(frozen=True, slots=True)
class RedactedRows:
    """What :meth:`SecretStore.redact_rows` rewrote: the replacements made in stored texts a
    person reads back (content, raw original, argument leaves, raw argument text, metadata
    strings, section text, hit-log queries), the rows rewritten, and the threads to rechunk."""

    replacements: int = 0
    rows: int = 0
    rechunk: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Erasure:
    """The end of a purge or a redaction: the vectors dropped (of rows gone or rewritten),
    the full-text indexes merged, and whether the write-ahead log was emptied (``False``:
    another connection kept reading through every attempt; old frames may remain).
    ``physical`` is ``False`` when the old bytes stay in the store's files until they are
    rewritten (PostgreSQL: :class:`VacuumFull`)."""

    vectors: int
    indexes_optimized: int
    wal_truncated: bool
    checkpoint_attempts: int
    physical: bool = True


@runtime_checkable
class SecretStore(Protocol):
    """Physical erasure (DESIGN §7a).

    Call :meth:`secure_delete` first, then :meth:`purge_rows` / :meth:`redact_rows` (and any
    rechunk) inside one :meth:`~recallbox.storage.base.StoreLifecycle.transaction`, then
    :meth:`finish_erasure` outside it. Every removed or rewritten row leaves every index of
    the store: keyword indexes, vectors, the hit-log rows that target it.
    """

    def secure_delete(self) -> None:
        """From now on, what the calling thread deletes or overwrites is erased, not only
        unlinked (SQLite: ``secure_delete`` on its connection)."""
        ...

    def purge_rows(self, target: SecretTarget) -> ErasedRows:
        """Delete the target's rows (a thread: with its generations, chunks and import ledger);
        delete the hit-log rows that target them and blank the query of every row of the same
        recall events. Unknown targets remove nothing."""
        ...

    def redact_rows(self, target: SecretTarget, rewrite: TextRewrite) -> RedactedRows:
        """Apply ``rewrite`` to every stored text of the target's messages (content, raw
        original, tool-call argument leaves, raw argument text, metadata string values) and
        sections (text, heading), and to the query text of every hit-log row; rewritten rows
        get a new content hash (their vectors go stale)."""
        ...

    def finish_erasure(self) -> Erasure:
        """Drop the vectors of rows that are gone or rewritten, merge every full-text index
        (so no old segment keeps a term), and empty the write-ahead log (retried while other
        connections read)."""
        ...


@runtime_checkable
class VacuumFull(Protocol):
    """Rewriting a server store's tables so no deleted row's bytes stay on disk (PostgreSQL:
    ``VACUUM FULL``, an exclusive lock per table while it runs)."""

    def vacuum_full(self) -> int:
        """Rewrite every table of the store; returns how many were rewritten."""
        ...


@runtime_checkable
class Backup(Protocol):
    """An online, consistent copy of a live store (SQLite: the backup API)."""

    def backup(self, destination: str) -> int:
        """Copy the store to the new file ``destination`` while writers go on; returns its
        page count. An existing ``destination`` is refused."""
        ...


__all__ = [
    "Backup",
    "ErasedRows",
    "Erasure",
    "RedactedRows",
    "SecretStore",
    "SecretTarget",
    "TextRewrite",
    "VacuumFull",
]
