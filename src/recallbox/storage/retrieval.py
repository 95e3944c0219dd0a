"""The retrieval power of a store (DESIGN §4.1, §4.2): ranked keyword search, vectors, hit-log.

A separate small protocol next to :class:`~recallbox.storage.base.Store`, so a backend can
offer it or not. A store implementing it ranks nothing across legs and never calls an embedding
model: it answers "which rows match this MATCH expression, with which BM25", "which rows are
nearest this vector", stores the vectors it is handed and appends to the hit-log. Every read
applies the privacy gate and the search exclusions (DESIGN §3.2, §4.5) in SQL: pending,
superseded and ``model_visible=false`` messages, machine events, compaction summaries and
every message of a quarantined thread are never returned.

Ids are public message ids (``Message.id``). Vectors live in *embedding spaces*: one per
(owner, model id, dimension), registered with the vectors so a vector is never compared with
one of another model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

#: The owner kind of message vectors (other domains add theirs).
OWNER_MESSAGE = "message"


@dataclass(frozen=True, slots=True)
class EmbeddingSpace:
    """A registered (owner, model id, dimension) and how many vectors it holds."""

    id: int
    owner: str
    model_id: str
    dim: int
    count: int = 0


@dataclass(frozen=True, slots=True)
class SearchRow:
    """What a ranked hit needs of one searchable message."""

    id: str
    channel: str
    role: str
    content: str
    content_hash: str
    created_at: datetime
    generation: str = ""
    seq: int = 0


@dataclass(frozen=True, slots=True)
class RowFrequencies:
    """One matching row: its token count and how often each query phrase occurs in it."""

    id: str
    length: int
    freqs: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class KeywordScope:
    """The statistics BM25 needs over one scope (a thread) for a query of phrases.

    ``rows`` and ``tokens`` count every row of the scope in the index (excluded ones too, as
    FTS5 does for the whole table), ``df`` the rows of the scope holding each phrase, and
    ``matches`` the searchable rows that hold at least one.
    """

    rows: int
    tokens: int
    df: tuple[int, ...]
    matches: tuple[RowFrequencies, ...]


@dataclass(frozen=True, slots=True)
class EmbedTarget:
    """A message that needs a vector: ``key`` orders the pass (a resumable cursor)."""

    key: int
    id: str
    text: str
    content_hash: str


@runtime_checkable
class SignalStore(Protocol):
    """What the ranking signals read besides the candidates' rows (#21)."""

    def message_timelines(
        self, spans: Sequence[tuple[str, int, int]]
    ) -> dict[str, tuple[tuple[int, datetime], ...]]:
        """For each ``(generation id, first seq, last seq)``: the ``(seq, created_at)`` of every
        message of that generation in the range (any kind), in ``seq`` order; generations of
        denied threads are absent."""

    def episode_breaks(
        self, spans: Sequence[tuple[str, int, int]], *, gap_seconds: float
    ) -> dict[str, tuple[int, int, tuple[int, ...]]]:
        """For each ``(generation id, first seq, last seq)``: the first and last ``seq`` of that
        generation's messages in the range (any kind) and the seqs in it whose ``created_at`` is
        more than ``gap_seconds`` after the previous message's (where an episode starts);
        generations of denied threads, and ranges holding no message, are absent."""

    def newest_created_at(self, channel: str | None) -> datetime | None:
        """The newest ``created_at`` of the allowed threads (of ``channel`` when given)."""


@runtime_checkable
class RetrievalStore(Protocol):
    """Ranked search, vectors and the hit-log over the messages of a store."""

    def keyword_messages_ranked(
        self, expression: str, *, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """``(id, s)`` with ``s = −bm25()`` for searchable rows matching the FTS5 expression.

        Best first (ties by id), at most ``limit``. The expression must come from
        ``recallbox.text.fts_query``; IDF and average length are over the whole index.
        """

    def keyword_scope(self, phrases: Sequence[str], *, channel: str) -> KeywordScope | None:
        """BM25 statistics of ``channel``'s rows for the quoted FTS5 ``phrases``.

        ``None`` when the channel is unknown or denied by the privacy gate.
        """

    def search_rows(self, ids: Sequence[str]) -> dict[str, SearchRow]:
        """The searchable rows among ``ids`` (others, e.g. quarantined, are simply absent)."""

    def embedding_spaces(self, owner: str) -> list[EmbeddingSpace]:
        """Every registered space of ``owner`` with its vector count."""

    def ensure_embedding_space(self, owner: str, model_id: str, dim: int) -> EmbeddingSpace:
        """The space for (owner, model id, dim), created when missing."""

    def drop_embedding_space(self, space: EmbeddingSpace) -> int:
        """Delete a space and its vectors; returns how many vectors were deleted."""

    def nearest_messages(
        self, vector: Sequence[float], *, space: EmbeddingSpace, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """``(id, cosine distance)`` of the ``limit`` nearest searchable rows, nearest first.

        Exact: the channel restriction happens inside the index, and excluded rows never take
        a place among the ``limit``.
        """

    def message_distances(
        self, vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace
    ) -> dict[str, float]:
        """Cosine distance from ``vector`` for those of ``ids`` that have a vector in ``space``."""

    def messages_to_embed(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        """Up to ``limit`` messages with ``key > after`` whose vector in ``space`` is missing or
        stale, in key order: searchable-kind messages with text, outside quarantined threads;
        with ``drilled_only``, only those the hit-log records a drill for."""

    def count_to_embed(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        """How many messages :meth:`messages_to_embed` would return in total."""

    def put_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        """Store vectors (replacing stale ones) in one transaction; returns how many."""

    def record_drill(self, target_id: str, *, domain: str = "sessions") -> None:
        """Append a drill to the hit-log: recall's caller opened ``target_id``."""

    def record_hits(
        self, query: str, *, domain: str, layer: str, target_ids: Sequence[str]
    ) -> None:
        """Append one hit-log row per returned target (the recall aggregator calls this)."""
