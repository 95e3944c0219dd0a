"""The transcripts-domain power of a store (DESIGN §4.5): ranked chunk search and chunk vectors.

A small protocol next to :class:`~recallbox.storage.retrieval.RetrievalStore`, with the same
contract: every read applies the privacy gate in SQL (a chunk of a quarantined thread or of an
excluded source is never returned), nothing here ranks across legs or calls an embedder, and a
vector counts only while it describes the chunk's current text. Chunk vectors live in embedding
spaces of the owner :data:`OWNER_TRANSCRIPT_CHUNK`. Ids are public chunk ids
(``<channel>@<first seq>[.<part>]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from recallbox.storage.retrieval import EmbeddingSpace, EmbedTarget, SearchRow

#: The owner kind of transcript chunk vectors.
OWNER_TRANSCRIPT_CHUNK = "transcript_chunk"
CHUNK_ID_SEPARATOR = "@"
PART_SEPARATOR = "."


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
    if not seq_text.isdigit() or (part_text and not part_text.isdigit()):
        return None
    return channel, int(seq_text), int(part_text or 0)


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


class TranscriptSearchStore(Protocol):
    """Ranked keyword search and vectors over the transcript chunks of a store."""

    def keyword_chunks_ranked(
        self, expression: str, *, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """``(chunk id, s)`` with ``s = −bm25()`` over the chunk index, best first (ties by id)."""

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        """The allowed chunks among ``ids`` (others are simply absent)."""

    def search_rows(self, ids: Sequence[str]) -> dict[str, SearchRow]:
        """The searchable messages among ``ids`` (as the sessions domain sees them)."""

    def nearest_chunks(
        self, vector: Sequence[float], *, space: EmbeddingSpace, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        """``(chunk id, cosine distance)`` of the nearest allowed chunks with a fresh vector."""

    def chunk_distances(
        self, vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace
    ) -> dict[str, float]:
        """Cosine distance from ``vector`` for those of ``ids`` with a fresh vector in ``space``."""

    def transcript_chunk_count(self) -> int:
        """How many transcript chunks the store holds (any thread)."""

    def chunks_to_embed(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        """Up to ``limit`` allowed chunks with ``key > after`` whose vector is missing or stale
        (with ``drilled_only``: holding a message the hit-log records a drill for)."""

    def count_chunks_to_embed(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        """How many chunks :meth:`chunks_to_embed` would return in total."""

    def put_chunk_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        """Store chunk vectors (replacing stale ones) in one transaction; returns how many."""
