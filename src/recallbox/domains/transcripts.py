"""The transcripts domain: imported threads as chunks of consecutive turns (DESIGN §4.5).

Rules (records and rules only; the store keeps the rows):

* Only imported threads are chunked, and only their searchable messages: kind ``message``,
  model-visible, not pending, not superseded (machine events and compaction summaries are not
  evidence).
* A chunk packs consecutive messages while its text stays within
  :data:`TRANSCRIPT_CHUNK_TOKENS` (by :func:`recallbox.estimate_tokens`), and never crosses a
  generation. A message longer than that is cut into parts at line or sentence ends, each
  part a chunk of its own.
* A chunk's id is its thread and first ``seq`` (``<channel>@<seq>``; a further part of one
  long message ``<channel>@<seq>.<part>``). Chunking is greedy from a chunk start, so
  re-chunking from the last chunk's start gives exactly what chunking the whole thread would:
  lines appended to a transcript replace only its last chunk.
* A chunk carries its message ids (in order), the source file and the source line range.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Protocol, TypeVar

from recallbox.domains.sessions import QueryVector, fuse_legs
from recallbox.ranking.fusion import THRESHOLD_TRANSCRIPTS
from recallbox.storage.base import ChunkSource, TranscriptChunk
from recallbox.storage.transcripts import ChunkRow, TranscriptSearchStore, chunk_id, parse_chunk_id
from recallbox.text.cjk import cjk_count, is_cjk_char
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.text.tokens import NON_CJK_CHARS_PER_TOKEN
from recallbox.types import Hit

T = TypeVar("T")

TRANSCRIPT_CHUNK_TOKENS = 500
MESSAGE_SEPARATOR = "\n\n"
CUT_MARKS = ("\n", ". ", "! ", "? ", "。", "！", "？", "; ")
MIN_CUT_FRACTION = 0.5
"""A part is cut at a line or sentence end only past this fraction of its budget."""


def message_text(message: ChunkSource) -> str:
    """A message as it reads in a chunk: ``[role] content``, then one line per tool call."""
    lines = [f"[{message.role}] {message.content}".rstrip()]
    for call in message.tool_calls or ():
        arguments = json.dumps(call.get("arguments"), ensure_ascii=False)
        lines.append(f"[{message.role} → {call.get('name')}] {arguments}")
    return "\n".join(lines)


def _tokens(non_cjk: int, cjk: int) -> int:
    """:func:`recallbox.estimate_tokens` from character counts (the counts add up)."""
    return math.ceil(non_cjk / NON_CJK_CHARS_PER_TOKEN) + cjk


def _counts(text: str) -> tuple[int, int]:
    cjk = 0 if text.isascii() else cjk_count(text)
    return len(text) - cjk, cjk


def split_to_budget(text: str, budget: int = TRANSCRIPT_CHUNK_TOKENS) -> list[str]:
    """``text`` cut into parts of at most ``budget`` estimated tokens, at a line or sentence
    end when one falls in the second half of a part, else hard."""
    parts: list[str] = []
    start = 0
    while start < len(text) and _tokens(*_counts(text[start:])) > budget:
        end = start + _fit(text, start, budget)
        cut = start + _last_mark(text[start:end], end - start)
        parts.append(text[start:cut])
        start = cut
    if start < len(text) or not parts:
        parts.append(text[start:])
    return parts


def _fit(text: str, start: int, budget: int) -> int:
    """The longest length of ``text[start:]`` whose estimate is within ``budget`` (one pass)."""
    limit = budget * NON_CJK_CHARS_PER_TOKEN
    window = text[start : start + limit]
    if window.isascii():
        return max(1, len(window))
    non_cjk = cjk = 0
    for index, char in enumerate(window):
        if is_cjk_char(char):
            cjk += 1
        else:
            non_cjk += 1
        if _tokens(non_cjk, cjk) > budget:
            return max(1, index)
    return max(1, len(window))


def _last_mark(text: str, end: int) -> int:
    floor = int(end * MIN_CUT_FRACTION)
    best = max((text.rfind(mark, floor, end) + len(mark) for mark in CUT_MARKS), default=-1)
    return best if best > floor else end


def chunk_messages(
    messages: Iterable[ChunkSource], budget: int = TRANSCRIPT_CHUNK_TOKENS
) -> Iterator[TranscriptChunk]:
    """Pack messages (in thread order, searchable ones only) into chunks; streams."""
    pending: list[ChunkSource] = []
    texts: list[str] = []
    non_cjk = cjk = 0  # character counts of the pending chunk's text

    def flush() -> Iterator[TranscriptChunk]:
        nonlocal non_cjk, cjk
        if pending:
            yield _chunk(pending, MESSAGE_SEPARATOR.join(texts), offsets=_offsets(texts))
            pending.clear()
            texts.clear()
            non_cjk = cjk = 0

    for message in messages:
        text = message_text(message)
        text_non_cjk, text_cjk = _counts(text)
        if pending and message.generation != pending[0].generation:
            yield from flush()
        if _tokens(text_non_cjk, text_cjk) > budget:
            yield from flush()
            for part, piece in enumerate(split_to_budget(text, budget)):
                yield _chunk([message], piece, part=part)
            continue
        separator = len(MESSAGE_SEPARATOR) if pending else 0
        if pending and _tokens(non_cjk + separator + text_non_cjk, cjk + text_cjk) > budget:
            yield from flush()
            separator = 0
        pending.append(message)
        texts.append(text)
        non_cjk += separator + text_non_cjk
        cjk += text_cjk
    yield from flush()


def _offsets(texts: list[str]) -> tuple[int, ...]:
    offsets, position = [], 0
    for text in texts:
        offsets.append(position)
        position += len(text) + len(MESSAGE_SEPARATOR)
    return tuple(offsets)


def _chunk(
    messages: list[ChunkSource], text: str, *, part: int = 0, offsets: tuple[int, ...] = (0,)
) -> TranscriptChunk:
    starts = [m.line_start for m in messages if m.line_start is not None]
    ends = [m.line_end for m in messages if m.line_end is not None]
    sources = [m.source for m in messages if m.source]
    return TranscriptChunk(
        first_seq=messages[0].seq,
        part=part,
        last_seq=messages[-1].seq,
        generation=messages[0].generation,
        message_ids=tuple(m.id for m in messages),
        text=text,
        source=sources[0] if sources else None,
        line_start=min(starts) if starts else None,
        line_end=max(ends) if ends else None,
        message_offsets=offsets,
    )


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


# --- ranked search (DESIGN §4.2, §4.5) ------------------------------------------------------

DOMAIN = "transcripts"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200


def best_message_id(
    message_ids: Sequence[str], contents: Mapping[str, str], terms: Sequence[str]
) -> str | None:
    """The message of a chunk the sessions domain would rank first for ``terms``: the most
    distinct terms in its content, then the shorter content (a denser match), then the first.
    Only messages in ``contents`` (the searchable ones) count; ``None`` when there are none."""
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


def _hit(
    row: ChunkRow,
    score: float,
    k: float | None,
    v: float | None,
    query: FtsQuery,
    contents: Mapping[str, str],
) -> Hit:
    lines = (
        (row.line_start, row.line_end)
        if row.line_start is not None and row.line_end is not None
        else None
    )
    return Hit(
        id=row.id,
        score=score,
        text=excerpt(row.text, query.terms, query.literals),
        domain=DOMAIN,
        channel=row.channel,
        source=row.source,
        lines=lines,
        created_at=row.created_at,
        keyword=k,
        vector=v,
        best_message_id=best_message_id(row.message_ids, contents, query.terms),
    )


def search(
    store: TranscriptSearchStore,
    query: FtsQuery,
    *,
    channel: str | None,
    limit: int,
    query_vector: QueryVector | None,
    use_keyword: bool = True,
) -> list[Hit]:
    """Rank the transcript chunks in scope for ``query``: one hit per chunk, best first.

    The same two legs and fusion as the sessions domain (``recallbox.domains.sessions``), over
    the chunk index: BM25 of the whole chunk corpus (a ``channel`` filters), the nearest chunk
    vectors, :data:`~recallbox.ranking.fusion.THRESHOLD_TRANSCRIPTS`. Candidate pools do not
    depend on ``limit``, so a smaller ``limit`` returns a prefix of a larger one.
    """
    keyword: dict[str, float] | None = None
    if use_keyword and not query.is_empty:
        keyword = dict(
            store.keyword_chunks_ranked(
                query.expression, channel=channel, limit=max(limit, KEYWORD_CANDIDATES)
            )
        )
    fused, rows = fuse_legs(
        keyword,
        query_vector,
        nearest=store.nearest_chunks,
        distances=store.chunk_distances,
        rows_of=store.chunk_rows,
        text_of=lambda row: row.text,
        literals=query.literals,
        channel=channel,
        pool=max(limit, VECTOR_CANDIDATES),
        limit=limit,
        threshold=THRESHOLD_TRANSCRIPTS,
    )
    message_ids = [mid for f in fused for mid in rows[f.id].message_ids]
    contents = {mid: row.content for mid, row in store.search_rows(message_ids).items()}
    return [_hit(rows[f.id], f.score, f.keyword, f.vector, query, contents) for f in fused]


__all__ = [
    "DOMAIN",
    "TRANSCRIPT_CHUNK_TOKENS",
    "best_message_id",
    "chunk_id",
    "chunk_message_ids",
    "chunk_messages",
    "message_text",
    "parse_chunk_id",
    "search",
    "skip_shown",
    "split_to_budget",
]
