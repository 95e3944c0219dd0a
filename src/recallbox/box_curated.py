"""The Box verbs of knowledge and memory (DESIGN §4.3, §4.4, §9), mixed into ``recallbox.Box``.

Each verb validates and delegates to ``recallbox.domains`` (``knowledge_sync``, ``memory_ops``,
``context``); no SQL, ranking or rendering here. :meth:`CuratedVerbs.memories` is a
person-facing audit verb (every entry, flagged ``excluded``): agents read memory through
``search``, ``recall_context`` and ``memory_injection``, which apply the privacy policy.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import date

from recallbox.domains import context, knowledge_sync, memory_ops
from recallbox.domains.memory_inject import FULL_INJECTION_TOKENS
from recallbox.storage.base import Store
from recallbox.types import (
    DecayReport,
    MemoryEntry,
    MemoryImportReport,
    RecallResult,
    Section,
    SyncReport,
)


class CuratedVerbs:
    """Knowledge documents and memory entries (part of :class:`recallbox.Box`)."""

    store: Store

    # -- knowledge -------------------------------------------------------------------------
    def add_document(self, text: str, source: str, scope: str | None = None) -> list[Section]:
        """Index ``text`` as the document ``source``, split at ``##``/``###`` headings (a
        ``.txt`` source is one section); returns its sections by line.

        Adding it again re-indexes only what changed (a section keeps its id through a move,
        a renamed heading or an edit; a section that went away is kept as removed). ``scope``
        is a project name, or ``None`` for the global library.

        Raises:
            InvalidArgument: a non-string text, a blank source or scope.
        """
        return knowledge_sync.add_document(self.store, text, source, scope)

    def sync_directory(
        self,
        path: str | os.PathLike[str],
        scope: str | None = None,
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> SyncReport:
        """Index every ``.md``, ``.markdown`` and ``.txt`` file under ``path`` (incremental).

        Unchanged sections are skipped by hash; each file is written atomically; a file that
        is gone has its sections marked removed (kept, out of the index); an unreadable,
        binary, non-UTF-8 or oversized file is counted and skipped with its reason (its stored
        sections stay). ``progress(files_done, files_total)`` after each file.

        Raises:
            NotFound: ``path`` is not a directory.
            InvalidArgument: a blank scope.
        """
        return knowledge_sync.sync_directory(self.store, path, scope, progress=progress)

    # -- memory entries --------------------------------------------------------------------
    def remember(
        self,
        text: str,
        type: str = "guideline",
        title: str | None = None,
        evergreen: bool | None = None,
        supersedes: str | None = None,
    ) -> MemoryEntry:
        """Store a durable lesson as a memory entry with the next key of its type (``GDL03``).

        Routing question: would it still help in another project? Yes → remember it; a
        reference fact → knowledge (``add_document``); a project judgement → that project's
        docs. ``type`` is one of principle, correction, decision, guideline, pitfall, process,
        model; principles and corrections are evergreen unless ``evergreen=False``. A text
        identical to an existing non-superseded entry returns that entry (referenced, and
        revived if dormant or archived). ``supersedes`` marks an older entry replaced.

        Raises:
            InvalidArgument: an unknown type (the message names the seven), an empty or
                over-long text.
            NotFound: ``supersedes`` is an unknown key.
        """
        return memory_ops.remember(self.store, text, type, title, evergreen, supersedes)

    def memories(self, state: str | None = None) -> list[MemoryEntry]:
        """Every memory entry (or those in ``state``), in MEMORY.md order (person-facing audit
        verb: entries of an excluded ``MEMORY.md`` are returned flagged ``excluded``).

        Raises:
            InvalidArgument: an unknown state.
        """
        return memory_ops.memories(self.store, state)

    def supersede_memory(self, key: str, by: str) -> MemoryEntry:
        """Mark entry ``key`` as replaced by entry ``by`` (it ranks ×0.1; nothing is deleted).

        Raises:
            NotFound: either key is unknown.
        """
        return memory_ops.supersede(self.store, key, by)

    def restore(self, key: str) -> MemoryEntry:
        """Make entry ``key`` active and current again (referenced today, no longer superseded).

        Raises:
            NotFound: unknown key.
        """
        return memory_ops.restore(self.store, key)

    def touch(self, key: str) -> MemoryEntry:
        """Record a reference to entry ``key`` today (revives a dormant or archived entry).

        Raises:
            NotFound: unknown key.
        """
        return memory_ops.touch(self.store, key)

    def decay(self, today: date | None = None, dry_run: bool = False) -> DecayReport:
        """Run the mechanical decay for ``today`` (``None``: today): drills recorded in the
        hit-log are folded in first, then active entries idle ≥ 90 days become dormant and
        dormant ones idle ≥ 180 days (and dormant ≥ 90) archived. Idempotent for a day; never
        deletes; ``dry_run`` reports without writing.

        Raises:
            InvalidArgument: ``today`` is not a date.
        """
        return memory_ops.decay(self.store, today, dry_run=dry_run)

    def export_memory(self) -> str:
        """Every memory entry as MEMORY.md: a section per type, a bullet per entry, its
        metadata in one HTML comment (person-facing: every state, whatever the policy)."""
        return memory_ops.export_memory(self.store)

    def import_memory(self, text: str) -> MemoryImportReport:
        """Apply an edited MEMORY.md: titles, bodies, states and evergreen flags; new bullets
        become entries; removed bullets are only reported. All or nothing.

        Raises:
            InvalidArgument: the file has a malformed comment, a duplicate key, … (every
                problem named by line; nothing changed).
        """
        return memory_ops.import_memory(self.store, text)

    # -- agent-facing reads ----------------------------------------------------------------
    def recall_context(
        self, query: str, source: str = "MEMORY.md", excluded: Sequence[str] = ()
    ) -> RecallResult:
        """The exact entries of ``source`` that match ``query``: at most 2 000 tokens from at
        most 3 sections, verbatim, in on-disk order (DESIGN §4.4).

        ``source="MEMORY.md"`` means the memory entries; any other names an indexed document
        (its stored source, else a unique basename). A denied or unknown source gives
        ``allowed=False, reason="source not available"``; no overlapping entry gives
        ``allowed=True, content=""``. Records a hit and a drill per target in the hit-log.

        Raises:
            InvalidArgument: a non-string query or source, a bad ``excluded``, or a basename
                that matches several documents (the message names them).
        """
        return context.recall_context(self.store, query, source, excluded)

    def memory_injection(
        self,
        query: str | None = None,
        budget_tokens: int = FULL_INJECTION_TOKENS,
        excluded: Sequence[str] = (),
    ) -> str:
        """The session-start memory text (DESIGN §4.3): the whole active memory when it fits
        ``budget_tokens``, else evergreen entries first, then by relevance to ``query`` and
        ``ref_count``, ending with a manifest of what was left out; ``""`` for no memory.
        Starts with its evidence header; writes nothing.

        Raises:
            InvalidArgument: ``budget_tokens`` below 200, a bad query or ``excluded``.
        """
        return context.memory_injection(self.store, query, budget_tokens, excluded)
