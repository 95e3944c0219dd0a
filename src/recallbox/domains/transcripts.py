"""The ``transcripts`` domain (DESIGN §4.5): imported threads, ranked by chunks of turns.

The chunks themselves are built by ``recallbox.domains.chunking``. A search runs the same two
legs and fusion as the sessions domain (``recallbox.domains.hybrid``) over the chunk corpus:
BM25 of the whole chunk index (a ``channel`` filters), the nearest chunk vectors,
:data:`~recallbox.ranking.fusion.THRESHOLD_TRANSCRIPTS`. A hit is one chunk, naming its file
and line range and its best message (the one the sessions domain would rank first), which is
what the ``recall()`` aggregator uses to skip a chunk the sessions bucket already shows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, TypeVar

from recallbox.domains.base import SearchContext
from recallbox.domains.buckets import fit_items
from recallbox.domains.chunking import (
    TRANSCRIPT_CHUNK_TOKENS,
    chunk_messages,
    message_text,
    split_to_budget,
)
from recallbox.domains.hybrid import HISTORY_RANK_WINDOW, fuse_legs
from recallbox.domains.sessions_render import cut_excerpt
from recallbox.ranking.fusion import THRESHOLD_TRANSCRIPTS, Fused
from recallbox.storage.base import (
    CORPUS_TRANSCRIPT_CHUNK,
    ChunkRow,
    TranscriptChunk,
    chunk_id,
    parse_chunk_id,
)
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.text.render import escape_stored, one_line
from recallbox.text.windows import WINDOW_CHARS
from recallbox.types import Hit

T = TypeVar("T")

DOMAIN = "transcripts"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200
#: A source path echoed in an item's head line is cut to this many characters.
SOURCE_MAX_CHARS = 200


class ChunkReader(Protocol):
    """What :func:`chunk_message_ids` reads of a store."""

    def transcript_chunk(self, channel: str, first_seq: int, part: int) -> TranscriptChunk | None:
        """One chunk of a thread the privacy gate allows, or ``None``."""


def chunk_message_ids(store: ChunkReader, chunk_id_value: str) -> list[str]:
    """The message ids of a chunk, in order; ``[]`` for an unknown or denied chunk.

    What the ``recall()`` aggregator uses to skip a transcripts hit whose best message the
    sessions bucket already shows (DESIGN §4.5: by message id, never by score).
    """
    parsed = parse_chunk_id(chunk_id_value)
    if parsed is None:
        return []
    chunk = store.transcript_chunk(*parsed)
    return list(chunk.message_ids) if chunk is not None else []


def skip_shown(
    hits: Sequence[T], shown_message_ids: Collection[str], best_message: Callable[[T], str | None]
) -> list[T]:
    """``hits`` without those whose best message is among ``shown_message_ids``."""
    return [hit for hit in hits if best_message(hit) not in shown_message_ids]


def best_message_id(
    message_ids: Sequence[str], contents: Mapping[str, str], terms: Sequence[str]
) -> str | None:
    """The message of a chunk the sessions domain would rank first for ``terms``: the most
    distinct terms in its content, then the shorter content (a denser match), then the first.
    Only messages in ``contents`` (the visible ones) count; ``None`` when there are none."""
    needles = [term.casefold() for term in terms if term]
    best: tuple[int, int, int] | None = None
    chosen: str | None = None
    for index, message_id in enumerate(message_ids):
        content = contents.get(message_id)
        if content is None:
            continue
        folded = content.casefold()
        found = sum(1 for needle in needles if needle in folded)
        key = (-found, len(content), index)
        if best is None or key < best:
            best, chosen = key, message_id
    return chosen


def _hit(row: ChunkRow, fused: Fused, query: FtsQuery, contents: Mapping[str, str]) -> Hit:
    lines = (
        (row.line_start, row.line_end)
        if row.line_start is not None and row.line_end is not None
        else None
    )
    return Hit(
        id=row.id,
        score=fused.score,
        text=excerpt(row.text, query.terms, query.literals),
        domain=DOMAIN,
        channel=row.channel,
        source=row.source,
        lines=lines,
        created_at=row.created_at,
        keyword=fused.keyword,
        vector=fused.vector,
        best_message_id=best_message_id(row.message_ids, contents, query.terms),
        explain=fused.explain(),
    )


def search(ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
    """Rank the transcript chunks in scope for ``query``: one hit per chunk, best first.

    Candidate pools do not depend on ``limit``, so a smaller ``limit`` returns a prefix of a
    larger one.
    """
    store, where = ctx.store, ctx.where
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        if ctx.use_keyword and not query.is_empty:
            pool = max(limit, KEYWORD_CANDIDATES)
            ranked = store.keyword_ranked(
                CORPUS_TRANSCRIPT_CHUNK,
                query.lexical,
                where=where,
                limit=pool,
                # one thread's chunks are few; a window counts every thread's matches
                window=HISTORY_RANK_WINDOW if where.channel is None else None,
            )
            keyword = dict(ranked)
        fused, rows = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda ids: store.chunk_rows(ids, where=where),
            text_of=lambda row: row.text,
            literals=query.literals,
            where=where,
            pool=max(limit, VECTOR_CANDIDATES),
            limit=limit,
            threshold=THRESHOLD_TRANSCRIPTS,
        )
        message_ids = [mid for f in fused for mid in rows[f.id].message_ids]
        found = store.search_rows(message_ids, where=where)
    contents = {mid: row.content for mid, row in found.items()}
    return [_hit(rows[f.id], f, query, contents) for f in fused]


# --- the bucket -----------------------------------------------------------------------------


def _item_head(hit: Hit, rank: int) -> str:
    parts = [f"[chunk_id={hit.id}"]
    if hit.source is not None:
        lines = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines is not None else ""
        parts.append(f"source={one_line(hit.source, SOURCE_MAX_CHARS)}{lines}")
    if hit.created_at is not None:
        parts.append(f"date={hit.created_at.date().isoformat()}")
    parts.append(f"rank={rank}")
    if hit.best_message_id is not None:
        parts.append(f"follow-up=read_message({hit.best_message_id})")
    return " ".join(parts) + "]"


def render_transcripts_bucket(hits: Sequence[Hit], budget_chars: int) -> str:
    """The transcripts bucket: one item per chunk, best first — a head line with the chunk
    id, ``source:lines``, its date, its rank and the ``read_message`` call of its best message,
    then at most :data:`~recallbox.text.windows.WINDOW_CHARS` of its text (escaped, DESIGN
    §3.5). Items that do not fit in ``budget_chars`` are counted in a last line; ``""`` for no
    hits."""
    items = [
        f"{_item_head(hit, rank)}\n{escape_stored(cut_excerpt(hit.text, WINDOW_CHARS))}"
        for rank, hit in enumerate(hits, start=1)
    ]
    return fit_items(items, budget_chars)


class TranscriptsDomain:
    """The ``transcripts`` entry of the registry."""

    name = DOMAIN
    owner: str | None = CORPUS_TRANSCRIPT_CHUNK
    threshold = THRESHOLD_TRANSCRIPTS

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """See :func:`render_transcripts_bucket`."""
        del ctx
        return render_transcripts_bucket(hits, budget_chars)


TRANSCRIPTS = TranscriptsDomain()

__all__ = [
    "DOMAIN",
    "TRANSCRIPTS",
    "TRANSCRIPT_CHUNK_TOKENS",
    "TranscriptsDomain",
    "best_message_id",
    "chunk_id",
    "chunk_message_ids",
    "chunk_messages",
    "message_text",
    "parse_chunk_id",
    "render_transcripts_bucket",
    "search",
    "skip_shown",
    "split_to_budget",
]
