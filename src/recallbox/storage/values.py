"""The values the storage protocols pass (``recallbox.storage.base``): rows in, rows out.

Frozen, slotted dataclasses with no behaviour beyond a property or two, and no SQL: a backend
builds them from its own rows. The typed queries and the search filter live next door, in
``recallbox.storage.queries``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recallbox.types import MemoryEntry, Message

CHUNK_ID_SEPARATOR = "@"
PART_SEPARATOR = "."


# -- threads and messages ------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewMessage:
    """A validated, normalised message row, ready to insert.

    ``opens_generation`` marks a compaction summary: the store closes the thread's current
    generation and inserts this message as the first of the next one, in the same transaction.

    ``metadata_json`` is the stored JSON text of ``metadata`` (exactly what
    :func:`~recallbox.storage.codecs.dump_json` makes of it) when
    :func:`~recallbox.domains.messages.build_row` validated the metadata by that very dump and
    the text is UTF-8; ``None`` lets the store dump it. ``metadata`` must not change once built.
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
    metadata_json: str | None = field(default=None, compare=False, repr=False)


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
    caller's ``limit`` while its index held more (known only after that point is reached).
    """

    def __init__(self) -> None:
        self.rows: Iterator[SearchableMessage] = iter(())
        self.truncated = False

    def __next__(self) -> SearchableMessage:
        return next(self.rows)


@dataclass(frozen=True, slots=True)
class SearchRow:
    """What a ranked hit needs of one searchable message.

    ``generation`` (the generation's public id) and ``seq`` place it in its thread: the ranking
    signals (#21) cut episodes and find neighbours from them.
    """

    id: str
    channel: str
    role: str
    content: str
    content_hash: str
    created_at: datetime
    generation: str
    seq: int


# -- the ranking signals' reads (#21) -------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GenerationSpan:
    """A range of one generation's positions: ``first`` to ``last`` ``seq``, both included."""

    generation: str
    first: int
    last: int


@dataclass(frozen=True, slots=True)
class EpisodeBreaks:
    """Where episodes start in a :class:`GenerationSpan`: ``first``/``last`` are the lowest and
    highest ``seq`` of the span's messages, ``starts`` (ascending, ``first`` included) the seqs
    whose ``created_at`` is more than the gap away from the previous message's."""

    first: int
    last: int
    starts: tuple[int, ...]


# -- keyword index -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RowFrequencies:
    """One matching row: its token count and how often each query phrase occurs in it."""

    id: str
    length: int
    freqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class KeywordScope:
    """The statistics BM25 needs over one scope (a thread) for a query of phrases.

    ``rows`` and ``tokens`` count every row of the scope in the index (hidden ones too, as
    FTS5 does for the whole table), ``df`` the rows of the scope holding each phrase, and
    ``matches`` the rows the visibility rule lets through that hold at least one.
    """

    rows: int
    tokens: int
    df: tuple[int, ...]
    matches: tuple[RowFrequencies, ...]


# -- vectors -------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """A registered (owner, model id, dimension) and how many vectors it holds.

    ``owner`` is the corpus the vectors describe (``recallbox.storage.queries.CORPUS_*``).
    """

    id: int
    owner: str
    model_id: str
    dim: int
    count: int = 0


@dataclass(frozen=True, slots=True)
class EmbedTarget:
    """A row that needs a vector: ``key`` orders the pass (a resumable cursor), ``id`` is the
    row's public id and ``text`` what is embedded."""

    key: int
    id: str
    text: str
    content_hash: str


# -- the import ledger ---------------------------------------------------------------------
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
    """One record key of an imported file and the message it became.

    ``mirror``: the message belongs to another file of the same session (a copy of a
    transcript, or two files sharing a session id): this file's sync never changes it.
    ``file_id`` is filled in by reads (the file the record is of).
    """

    key: str
    channel: str
    message_id: str
    content_hash: str
    sync_id: int
    node: str | None = None
    mirror: bool = False
    file_id: int = field(default=0, compare=False)


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


# -- transcript chunks ---------------------------------------------------------------------
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


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """What a ranked transcripts hit needs of one chunk."""

    id: str
    channel: str
    text: str
    content_hash: str
    source: str | None
    line_start: int | None
    line_end: int | None
    created_at: datetime | None
    message_ids: tuple[str, ...]
    message_offsets: tuple[int, ...]


# -- knowledge sections (#10) -----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class StoredSection:
    """What the store holds of one section row of a document (what a re-sync plans against)."""

    id: str
    heading: str | None
    start_line: int
    end_line: int
    content_hash: str
    body_hash: str
    removed: bool = False


@dataclass(frozen=True, slots=True)
class SectionWrite:
    """One section to store: a new row (``id`` is ``None``) or the new version of row ``id``
    (its content, heading or lines; a removed row written again is live again)."""

    id: str | None
    heading: str | None
    level: int
    start_line: int
    end_line: int
    heading_line: int | None
    content: str
    content_hash: str
    body_hash: str


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """One document's changes, applied in one transaction (``KnowledgeStore.write_document``).

    A document is ``(scope, source)``; ``source_path`` and ``source_name`` are its source
    normalised for the privacy gate (``domains.privacy.normalize_source_path`` and its
    basename), ``identity`` its file identity (``None`` for ``add_document``), ``root`` the
    sync root it came from (``None`` for ``add_document``); with ``writes``, every row of the
    document takes these. ``removals`` are row ids marked removed (kept, dropped from the
    index).
    """

    source: str
    scope: str | None
    source_path: str
    source_name: str
    identity: str | None
    root: str | None
    writes: tuple[SectionWrite, ...] = ()
    removals: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SectionRow:
    """What a ranked knowledge hit (and ``recall_context``) needs of one live section."""

    id: str
    source: str
    scope: str | None
    heading: str | None
    start_line: int
    end_line: int
    heading_line: int | None
    content: str
    content_hash: str


# -- memory entries (#10) ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class MemoryWrite:
    """A memory entry to insert or update, with what its indexes read.

    ``number`` is its key's number (an insert raises the type's highest issued number to it);
    ``content`` is the text the keyword index and the vectors see, ``identity_hash`` what the
    identical-text rule of ``remember`` compares (``domains.memory_model.identity_hash``).
    """

    entry: MemoryEntry
    number: int
    content: str
    content_hash: str
    identity_hash: str


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A memory entry as a search reads it: the entry, its indexed text and content hash."""

    entry: MemoryEntry
    content: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class MemoryDrill:
    """A drill the hit-log holds for a memory entry: its hit-log row id, the key, when."""

    hit_id: int
    key: str
    at: datetime


def chunk_id(channel: str, first_seq: int, part: int = 0) -> str:
    """``<channel>@<first seq>`` (``.<part>`` for the further parts of one long message)."""
    base = f"{channel}{CHUNK_ID_SEPARATOR}{first_seq}"
    return base if part == 0 else f"{base}{PART_SEPARATOR}{part}"


def parse_chunk_id(value: str) -> tuple[str, int, int] | None:
    """``(channel, first seq, part)`` of a chunk id, or ``None`` when it is not one."""
    channel, separator, tail = value.rpartition(CHUNK_ID_SEPARATOR)
    if not separator or not channel:
        return None
    seq_text, _, part_text = tail.partition(PART_SEPARATOR)
    if not _is_number(seq_text) or (part_text and not _is_number(part_text)):
        return None
    return channel, int(seq_text), int(part_text or 0)


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


# -- the hit-log (#12) ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HitRow:
    """One hit-log row (DESIGN §5): a *hit* (a target a verb returned for ``query``, found by
    ``layer``) or, when ``verb`` is set, a *drill* (the verb opened ``target_id``).

    ``event`` ties the rows of one recall (or search) together; ``at`` is when it happened.
    """

    at: datetime
    domain: str
    target_id: str
    query: str | None = None
    layer: str | None = None
    verb: str | None = None
    event: str | None = None

    @property
    def drilled(self) -> bool:
        """True for a drill row."""
        return self.verb is not None


# -- stored tool outputs (#12) ---------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewToolOutput:
    """The original of a compressed tool output, to keep under ``handle`` (DESIGN §6).

    ``channel`` (a thread) and ``source`` (a normalised file name or path, with its file
    ``identity``) are what the handle's privacy follows: the handle is denied exactly when
    its thread or its source is.
    """

    handle: str
    content: str
    channel: str | None = None
    source: str | None = None
    identity: str | None = None
    tool: str | None = None
