"""Chunking imported threads for the transcripts domain (DESIGN §4.5).

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
* A thread is re-chunked from the chunk holding its first change (:func:`rechunk`): on import,
  and when a message of a chunked thread is delivered or superseded (:func:`refresh_chunks`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from typing import Protocol

from recallbox.storage.base import ChunkSource, StoreLifecycle, TranscriptChunk, TranscriptChunks
from recallbox.text.cjk import cjk_count, is_cjk_char
from recallbox.text.tokens import NON_CJK_CHARS_PER_TOKEN
from recallbox.types import Message

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


def rechunk(store: TranscriptChunks, channel: str, changed_from: int) -> int:
    """Re-chunk a thread from the chunk holding its first change at ``changed_from`` (lines
    appended to a transcript replace only its last chunk). Returns how many chunks were
    written."""
    start = store.chunk_restart_seq(channel, changed_from)
    sources = store.iter_chunk_sources(channel, start)
    return store.replace_transcript_chunks(channel, start, chunk_messages(sources))


class ChunkedStore(StoreLifecycle, TranscriptChunks, Protocol):
    """What :func:`refresh_chunks` needs: the chunks and a write transaction."""


def refresh_chunks(store: ChunkedStore, message: Message) -> None:
    """Keep an imported thread's chunks in step when one of its messages changed status
    (delivered, superseded): a chunk only ever holds visible messages."""
    if store.has_transcript_chunks(message.channel):
        with store.transaction():
            rechunk(store, message.channel, message.seq)
