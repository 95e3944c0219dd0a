"""The storage protocols of the curated corpora (DESIGN §2, §4.3, §4.4): knowledge sections
and memory entries. Part of the contract of ``recallbox.storage.base`` (re-exported there and
composed into its ``Store``); kept apart only to keep each module short.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from recallbox.inventory_types import KnowledgeDocument
from recallbox.storage.queries import LexicalQuery, SearchFilter
from recallbox.storage.values import (
    DocumentWrite,
    KeywordScope,
    MemoryDrill,
    MemoryRow,
    MemoryWrite,
    SectionRow,
    StoredSection,
)
from recallbox.types import MemoryEntry, Section


@runtime_checkable
class KnowledgeStore(Protocol):
    """The knowledge domain's corpus (DESIGN §2, §4): sections of documents, by scope.

    A document is ``(scope, source)`` (``scope=None``: the global library). A section row is
    never deleted: a section (or a whole file) that went away is marked removed and dropped
    from the keyword index, and comes back with its id when its content does. Its keyword
    index and vectors are the generic ones over ``CORPUS_SECTION``; a section is visible
    when it is live and its document passes the gate (stored exclusions by basename, by path —
    equal or ending with ``/`` + it — or by file identity, and ``SearchFilter.excluded``); a
    ``SearchFilter.scope`` of ``"P"`` lets P's sections and the global library's through.
    """

    def document_sections(self, scope: str | None, source: str) -> list[StoredSection]:
        """Every row of one document, removed ones included, by line (what a re-sync plans
        against; no policy applied)."""

    def document_sources(self, scope: str | None, root: str) -> list[str]:
        """The sources with live rows synced from ``root`` into ``scope``, sorted."""

    def knowledge_documents(self) -> list[KnowledgeDocument]:
        """Audit read: every stored document ``(scope, source)`` with its live and removed
        section counts and its last write, by source then scope (no policy applied)."""

    def write_document(self, document: DocumentWrite) -> list[Section]:
        """Apply one document's writes and removals in one transaction (new rows get their
        ids here); returns its live sections by line. Unchanged text leaves the index alone."""

    def section_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, SectionRow]:
        """The visible sections among ``ids`` (the others are simply absent)."""

    def knowledge_sources(self, *, where: SearchFilter, name: str | None = None) -> list[str]:
        """The distinct sources of the visible sections, sorted; with ``name``, only those
        whose normalised basename is ``name`` (what ``recall_context`` resolves a requested
        source among)."""

    def source_scope(
        self, source: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """BM25 statistics of ``query`` over the visible sections of the document(s) stored
        as ``source`` (the document is the corpus: its live rows, their tokens, each phrase's
        document frequency among them, and each matching row's length and phrase
        frequencies); ``None`` when the document has no visible section."""


@runtime_checkable
class MemoryStore(Protocol):
    """The memory domain's corpus (DESIGN §2, §4.3): memory entries, keyed, never deleted.

    Entries have one global scope and the source ``MEMORY.md``: an exclusion of that name
    (stored, or ``SearchFilter.excluded``) denies every entry in every read that serves an
    agent. Keys are never reused: the store keeps, per type, the highest number ever issued.
    Its keyword index and vectors are the generic ones over ``CORPUS_MEMORY_ENTRY``.
    """

    def memory_entries(self) -> list[MemoryEntry]:
        """Audit read: every entry, in every state, in insertion order (no policy applied)."""

    def memory_entry(self, key: str) -> MemoryEntry | None:
        """Audit read: one entry by key, or ``None``."""

    def memory_entries_with_identity(self, identity_hash: str) -> list[MemoryEntry]:
        """The non-superseded entries whose text has this identity hash (``remember``)."""

    def highest_memory_number(self, memory_type: str) -> int:
        """The highest key number ever issued for ``memory_type`` (0: none yet)."""

    def create_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        """Insert entries under their keys in one transaction, raising each type's highest
        issued number to theirs (``InvalidArgument`` for a key that exists)."""

    def update_memory_entries(self, writes: Sequence[MemoryWrite]) -> None:
        """Replace stored entries by key in one transaction (``NotFound`` for an unknown key);
        the index is touched only when the indexed text changed."""

    def memory_allowed(self, *, where: SearchFilter) -> bool:
        """True when the policy and ``where`` let the memory entries (``MEMORY.md``) through."""

    def visible_memory(self, *, where: SearchFilter) -> list[MemoryRow]:
        """Every entry when :meth:`memory_allowed`, else ``[]``; in insertion order."""

    def memory_rows(self, keys: Sequence[str], *, where: SearchFilter) -> dict[str, MemoryRow]:
        """The visible entries among ``keys`` (the others are simply absent)."""

    def memory_drills(self, *, after: int) -> list[MemoryDrill]:
        """The hit-log's drills of existing entries with a hit-log id above ``after``, in id
        order (what ``decay`` folds in)."""

    def decay_watermark(self) -> int:
        """The hit-log id up to which ``decay`` has folded drills in (0: none)."""

    def set_decay_watermark(self, hit_id: int) -> None:
        """Record that ``decay`` folded every drill up to ``hit_id`` in."""
