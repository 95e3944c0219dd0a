"""The storage contract every backend implements (SQLite now, PostgreSQL later): one protocol
per concern, composed into :class:`Store`.

A store persists threads, generations and messages, keeps its indexes in sync, applies the
privacy policy it stores and answers typed queries. It does **not** validate user input
(``Box`` does that before building :class:`NewMessage` rows), rank across legs or domains,
build windows, or call an embedding model. No driver is imported above this module.

**The visibility rule.** Each backend has one definition of *visible* per corpus and applies
it inside every statement that returns text, ids or counts to a search: a message is visible
when it is not superseded, not ``model_visible=false``, not pending, not a machine event, not
a compaction summary, its thread is not quarantined and the thread's source is not excluded
(stored exclusions plus a call's :attr:`SearchFilter.excluded`); a transcript chunk when its
thread passes the same gate. :meth:`StoreLifecycle.read_snapshot` runs several reads on one
snapshot, so a quarantine committing mid-search never lets a row through. The audit reads
(:meth:`ThreadStore.get_message`, :meth:`ThreadStore.messages`, :meth:`ThreadStore.list_threads`)
show everything and belong to person-facing verbs only. Ranking statistics (BM25's IDF and average length) are corpus-level, as FTS5 computes them;
only rows, ids and texts are gated. A backend may implement a subset; :func:`require` checks a
capability at run time. The contract suite (``tests/storage/contract/``) runs on every backend.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Protocol, runtime_checkable

from recallbox.inventory_types import GenerationSpan
from recallbox.storage.base_code import CodeStore
from recallbox.storage.capability import protocol_members, require
from recallbox.storage.curated import KnowledgeStore, MemoryStore
from recallbox.storage.deadline import Deadline
from recallbox.storage.episode_reads import EpisodeReads
from recallbox.storage.queries import (
    CORPUS_CODE_SYMBOL,
    CORPUS_MEMORY_ENTRY,
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    LexicalQuery,
    LiteralQuery,
    Phrase,
    RankWindow,
    SearchFilter,
)
from recallbox.storage.recall_protocols import HitLog, ToolOutputStore
from recallbox.storage.secrets import SecretStore  # not re-exported: import it from there
from recallbox.storage.values import (
    CandidateStream,
    ChunkRow,
    ChunkSource,
    DocumentWrite,
    EmbeddingSpace,
    EmbedTarget,
    HitRow,
    ImportFile,
    ImportNode,
    ImportRecord,
    KeywordScope,
    MemoryDrill,
    MemoryRow,
    MemoryWrite,
    NewMessage,
    NewToolOutput,
    ReadableMessage,
    RowFrequencies,
    SearchableMessage,
    SearchRow,
    SectionRow,
    SectionWrite,
    StoredSection,
    TranscriptChunk,
    chunk_id,
    parse_chunk_id,
)
from recallbox.types import DoctorReport, Generation, Message, Policy, Thread


@runtime_checkable
class StoreLifecycle(Protocol):
    """Opening, migrating, transactions and snapshots."""

    capabilities: frozenset[str]

    def migrate(self) -> None:
        """Apply missing numbered migrations, one transaction each; refuse a newer schema."""

    def schema_version(self) -> int:
        """The highest applied migration number."""

    def close(self) -> None:
        """Close every connection this store opened."""

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested calls join it. Not allowed inside a read snapshot."""

    def read_snapshot(self, deadline: Deadline | None = None) -> AbstractContextManager[None]:
        """Run the calling thread's reads inside on one snapshot (nested snapshots and a write
        transaction around join). With ``deadline``, a statement running when it expires (or is
        cancelled, from any thread) stops, and it and every later read inside raise
        :class:`~recallbox.errors.TimedOut`; a nested deadline adds to the outer's."""


@runtime_checkable
class ThreadStore(Protocol):
    """Threads, generations and messages: the history itself."""

    def ensure_thread(self, channel: str, title: str | None) -> Thread:
        """Return the thread for ``channel``, creating it (generation 1) when missing."""

    def get_thread(self, channel: str) -> Thread | None:
        """The thread for ``channel`` or ``None`` (metadata only; no policy applied)."""

    def list_threads(self) -> list[Thread]:
        """Audit read: every thread, oldest first."""

    def set_title(self, channel: str, title: str | None) -> None:
        """Set a thread's title (the thread is created when missing)."""

    def append(self, channel: str, rows: Sequence[NewMessage]) -> list[Message]:
        """Insert rows at the end of ``channel`` (created when missing), in one transaction."""

    def current_generation(self, channel: str) -> Generation:
        """The open generation of ``channel`` (``NotFound`` for an unknown channel)."""

    def generations(self, channel: str) -> list[Generation]:
        """Every generation of ``channel``, in order."""

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        """Audit read: every message of ``channel`` (or of one generation), by (generation, seq)."""

    def iter_messages(self, channel: str, generation: int | None = None) -> Iterator[Message]:
        """Audit read: :meth:`messages`, streamed."""

    def get_message(self, message_id: str) -> Message | None:
        """Audit read: one message by id, or ``None``."""

    def set_pending(self, message_id: str, pending: bool) -> Message:
        """Change a message's pending flag (``NotFound`` for an unknown id)."""

    def set_superseded(self, message_id: str, by: str | None) -> Message:
        """Mark a message superseded by another (or clear it with ``None``)."""

    def readable_message(self, message_id: str) -> ReadableMessage | None:
        """One message with its raw tool-call text, or ``None`` when unknown **or** denied."""

    def search_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, SearchRow]:
        """The visible messages among ``ids`` (the others are simply absent)."""

    def session_window(self, message_id: str, radius: int, *, where: SearchFilter) -> list[Message]:
        """The hit and up to ``radius`` visible messages before and after it in its thread, in
        order; ``[]`` when the hit itself is not visible."""

    def generation_spans(
        self, channel: str, first: int, last: int, *, head_chars: int
    ) -> list[GenerationSpan]:
        """Audit read: generations ``first``..``last`` (numbers, inclusive) of ``channel`` in
        order, each with its message count and time span, and its opening compaction summary's
        id, length and first ``head_chars`` characters; ``[]`` for an unknown channel."""

    def message_slice(
        self, channel: str, generation: int, offset: int, limit: int
    ) -> list[Message]:
        """Audit read: at most ``limit`` messages of generation ``generation`` of ``channel`` by
        seq, the first ``offset`` skipped (``[]`` past the end or for an unknown channel)."""

    def readable_history(self, channel: str) -> list[Message]:
        """Every message of an allowed thread a model may read, in (generation, seq) order:
        not pending, superseded, hidden from the model or a machine event (compaction
        summaries included); ``[]`` when the thread is unknown **or** denied. One read."""


@runtime_checkable
class PolicyStore(Protocol):
    """The stored privacy policy (DESIGN §5): quarantined threads, excluded sources."""

    def set_quarantined(self, channel: str, quarantined: bool) -> None:
        """Quarantine or release a thread (``NotFound`` for an unknown channel)."""

    def set_source_excluded(self, name: str, excluded: bool, identity: str | None = None) -> None:
        """Add or remove an exclusion (and its file identity).

        ``name`` is the exclusion normalised by ``domains.privacy.normalize_source_path``: a
        basename, or a path holding ``/``. Every exclusion denies thread sources with its
        basename; a path also denies a knowledge document whose source equals it or ends with
        ``/`` + it and a code file whose scope-relative path equals it; one without ``/``
        denies every document and file with that basename (DESIGN §5). Removing lifts exactly
        that exclusion.
        """

    def set_thread_source(self, channel: str, source: str | None, identity: str | None) -> None:
        """Record the source a thread came from (normalised name, file identity)."""

    def thread_allowed(self, channel: str) -> bool:
        """True when the policy lets ``channel`` be read (False for unknown channels)."""

    def policy(self) -> Policy:
        """The stored privacy policy."""


@runtime_checkable
class LiteralSearch(Protocol):
    """Thread search's candidates (DESIGN §3.2, §3.3)."""

    def literal_candidates(
        self, query: LiteralQuery, *, where: SearchFilter, limit: int | None = None, recent: int = 0
    ) -> CandidateStream:
        """Visible messages that may hold ``query.term`` in their content or an argument leaf.

        A superset the caller rechecks exactly, found through an index, never a full scan
        (``recent`` adds the newest ``recent`` visible messages in scope: the bounded scan for
        terms no index holds). **Every** such message, in thread-search order, while the caller
        reads: no candidate cap (``limit`` stops it; ``truncated`` then says more were left).
        Every statement applies the rule."""


@runtime_checkable
class KeywordIndex(Protocol):
    """Ranked keyword search over any corpus (DESIGN §4.1)."""

    def keyword_ranked(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter, limit: int,
        window: RankWindow | None = None,
    ) -> list[tuple[str, float]]:  # fmt: skip
        """``(public id, s)``, ``s`` the BM25 score over the whole corpus (higher is better),
        of the visible rows matching ``query`` (only ``window``'s candidates: ``RankWindow``);
        best first, ties by id, at most ``limit``."""

    def keyword_scope(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """BM25 statistics of ``query`` over the rows of one thread (``where.channel``,
        required); ``None`` when the thread is unknown or denied."""


@runtime_checkable
class VectorIndex(Protocol):
    """Vectors of any corpus in embedding spaces (DESIGN §4.2); a space's owner is its corpus.

    A vector counts only while it describes its row's current text (same content hash).
    """

    def corpus_size(self, corpus: str) -> int:
        """How many rows ``corpus`` holds in every thread (the embedding passes skip an empty
        corpus); bookkeeping, never shown."""

    def embedding_spaces(self, owner: str) -> list[EmbeddingSpace]:
        """Every registered space of ``owner`` with its vector count."""

    def ensure_embedding_space(self, owner: str, model_id: str, dim: int) -> EmbeddingSpace:
        """The space for (owner, model id, dim), created when missing."""

    def drop_embedding_space(self, space: EmbeddingSpace) -> int:
        """Delete a space and its vectors; returns how many vectors were deleted."""

    def nearest(
        self, vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        """``(public id, cosine distance)`` of the ``limit`` nearest visible rows, nearest first;
        exact: a hidden row never takes a visible row's place, a channel filters in the index;
        over every thread of a very large space, exact over the newest threads only (a bound
        the backend names): callers score their keyword candidates with :meth:`distances`."""

    def distances(
        self,
        vector: Sequence[float],
        ids: Sequence[str],
        *,
        space: EmbeddingSpace,
        where: SearchFilter,
    ) -> dict[str, float]:
        """Cosine distance from ``vector`` of those visible ``ids`` that have a vector."""

    def embed_targets(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        """Up to ``limit`` rows of the space's corpus with ``key > after`` whose vector is
        missing or stale, in key order; never a row of a denied thread (an embedder may be
        remote). ``drilled_only``: rows the hit-log records a drill for."""

    def count_embed_targets(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        """How many rows :meth:`embed_targets` would return in total."""

    def put_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        """Store vectors (replacing stale ones) in one transaction; returns how many."""


@runtime_checkable
class ImportLedger(Protocol):
    """The bookkeeping of incremental transcript import (DESIGN §4.5), next to the messages.

    Which file was read how far, which record became which message, the Claude Code branch
    forest of each file. Meant to run inside write transactions that each save a
    file's records with its cursor, so an import stopped anywhere resumes from its last
    commit. It never parses a file.
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

    def channel_import_record(
        self, channel: str, key: str, *, other_than: int
    ) -> ImportRecord | None:
        """The record ``key`` of another file than ``other_than`` that fed thread ``channel``
        (not a mirror, the earliest file first), or ``None``: the same record already imported
        from another file of the same session."""

    def put_import_records(self, file_id: int, records: Sequence[ImportRecord]) -> None:
        """Insert or replace records of a file (by key)."""

    def vanished_import_records(self, file_id: int, sync_id: int) -> Iterator[ImportRecord]:
        """The records of a file last seen before ``sync_id`` (a rewrite dropped them),
        mirrors included (their ``mirror`` is set)."""

    def import_node(self, file_id: int, uuid: str) -> ImportNode | None:
        """A node of a file's branch forest, or ``None``."""

    def add_import_nodes(self, file_id: int, nodes: Sequence[ImportNode]) -> None:
        """Add nodes to a file's branch forest (a node already there is kept)."""

    def last_conversational_node(self, file_id: int, root: str, side: bool) -> str | None:
        """The uuid of the last conversational node (by line) of one tree of a file."""

    def reset_import_nodes(self, file_id: int) -> int:
        """Forget a file's branch forest (before it is read again from the start)."""

    def resolve_branches(
        self, file_id: int, root: str, side: bool, *, full: bool = False, since_line: int = 0
    ) -> list[tuple[str, bool]]:
        """Recompute which nodes of one tree are superseded (the live line runs to the tree's
        last conversational record) and return ``(message id, superseded)`` for every message
        whose status must change (with ``full``: of every node of the tree). Messages the file
        only mirrors are never returned (their own file decides). Nodes before ``since_line``
        were resolved already: a backend may walk only what the rest can change (same answer)."""

    def next_live_message(self, message_id: str) -> str:
        """The first live message after ``message_id`` in its thread (else the last live one
        before it, else ``message_id`` itself): what a dropped message is superseded by."""

    def extend_message(self, message_id: str, row: NewMessage) -> None:
        """Replace a message's content, tool calls and metadata (records of one API message
        arriving in two syncs); indexes follow."""

    def set_thread_times(
        self, channel: str, first: datetime, last: datetime, *, replace_last: bool
    ) -> None:
        """Date an imported thread by its transcript: ``created_at`` (and generation 1's
        ``opened_at``) move back to ``first``; ``last_activity`` becomes ``last`` (with
        ``replace_last``) or the later of the two."""


@runtime_checkable
class TranscriptChunks(Protocol):
    """The transcripts domain's corpus (DESIGN §4.5): chunks of imported threads."""

    def chunk_restart_seq(self, channel: str, seq: int) -> int:
        """The first seq of the chunk holding (or preceding) ``seq``: where re-chunking must
        start to take in a change at ``seq`` (``seq`` itself when no chunk starts before)."""

    def iter_chunk_sources(self, channel: str, from_seq: int) -> Iterator[ChunkSource]:
        """The messages a chunk may hold (not pending, superseded, hidden, machine events or
        summaries) of a thread from ``from_seq`` on, in order (streamed)."""

    def replace_transcript_chunks(
        self, channel: str, from_seq: int, chunks: Iterable[TranscriptChunk]
    ) -> int:
        """Make ``chunks`` the thread's chunks from ``from_seq`` on: an unchanged chunk is
        kept, a changed one rewritten, one no longer produced removed. Returns how many were
        written."""

    def transcript_chunk(self, channel: str, first_seq: int, part: int) -> TranscriptChunk | None:
        """One chunk of a thread the policy allows, or ``None``."""

    def has_transcript_chunks(self, channel: str) -> bool:
        """Whether a thread is chunked (an imported thread with chunkable messages)."""

    def transcript_chunks(self, channel: str) -> list[tuple[int, str, TranscriptChunk]]:
        """Audit read: ``(row key, content hash, chunk)`` of every chunk of a thread, in order."""

    def chunk_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, ChunkRow]:
        """The visible chunks among ``ids`` (the others are simply absent)."""


@runtime_checkable
class Health(Protocol):
    """Index health (DESIGN §4.1)."""

    def doctor(self, *, repair: bool = False) -> DoctorReport:
        """Check (and with ``repair``, rebuild) every full-text index; never loses a base row."""


@runtime_checkable
class Store(
    StoreLifecycle,
    ThreadStore,
    PolicyStore,
    LiteralSearch,
    KeywordIndex,
    VectorIndex,
    HitLog,
    ImportLedger,
    TranscriptChunks,
    KnowledgeStore,
    MemoryStore,
    SecretStore,
    Health,
    ToolOutputStore,
    CodeStore,
    EpisodeReads,
    Protocol,
):
    """A complete backend: every concern above."""


@runtime_checkable
class SyncStore(StoreLifecycle, ThreadStore, PolicyStore, ImportLedger, TranscriptChunks, Protocol):
    """What transcript import needs: the history, the policy, the ledger and the chunks."""


#: Every protocol of the contract, in the order ``Store`` composes them (and
#: ``docs/ARCHITECTURE.md`` lists them): one list, so a new protocol cannot be left out.
PROTOCOLS: tuple[type, ...] = tuple(base for base in Store.__bases__ if base is not Protocol)


__all__ = [
    "CORPUS_CODE_SYMBOL",
    "CORPUS_MEMORY_ENTRY",
    "CORPUS_MESSAGE",
    "CORPUS_SECTION",
    "CORPUS_TRANSCRIPT_CHUNK",
    "EVERYTHING",
    "PROTOCOLS",
    "CandidateStream",
    "ChunkRow",
    "ChunkSource",
    "CodeStore",
    "Deadline",
    "DocumentWrite",
    "EmbedTarget",
    "EmbeddingSpace",
    "EpisodeReads",
    "Health",
    "HitLog",
    "HitRow",
    "ImportFile",
    "ImportLedger",
    "ImportNode",
    "ImportRecord",
    "KeywordIndex",
    "KeywordScope",
    "KnowledgeStore",
    "LexicalQuery",
    "LiteralQuery",
    "LiteralSearch",
    "MemoryDrill",
    "MemoryRow",
    "MemoryStore",
    "MemoryWrite",
    "NewMessage",
    "NewToolOutput",
    "Phrase",
    "PolicyStore",
    "RankWindow",
    "ReadableMessage",
    "RowFrequencies",
    "SearchFilter",
    "SearchRow",
    "SearchableMessage",
    "SectionRow",
    "SectionWrite",
    "Store",
    "StoreLifecycle",
    "StoredSection",
    "SyncStore",
    "ThreadStore",
    "ToolOutputStore",
    "TranscriptChunk",
    "TranscriptChunks",
    "VectorIndex",
    "chunk_id",
    "parse_chunk_id",
    "protocol_members",
    "require",
]
