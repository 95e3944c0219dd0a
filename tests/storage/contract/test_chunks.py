"""TranscriptChunks: the chunk corpus of imported threads, kept in step with its messages."""

from __future__ import annotations

from recallbox.domains.chunking import chunk_messages
from recallbox.storage.base import EVERYTHING, SearchFilter, Store, TranscriptChunk

from .helpers import add, chunk


def test_chunk_sources_are_the_visible_messages_in_order(store: Store) -> None:
    first = add(
        store, "t", "one", metadata={"source_file": "a.jsonl", "line_start": 3, "line_end": 4}
    )[0]
    add(store, "t", "queued", pending=True)
    add(store, "t", "event", role="system", kind="machine_event")
    last = add(store, "t", "two", role="assistant")[0]
    sources = list(store.iter_chunk_sources("t", 1))
    assert [s.id for s in sources] == [first.id, last.id]
    assert (sources[0].source, sources[0].line_start, sources[0].line_end) == ("a.jsonl", 3, 4)
    assert (sources[1].role, sources[1].generation) == ("assistant", 1)
    assert [s.id for s in store.iter_chunk_sources("t", last.seq)] == [last.id]


def test_chunks_are_replaced_kept_or_removed(store: Store) -> None:
    add(store, "t", "alpha one", "alpha two")
    assert not store.has_transcript_chunks("t")
    assert chunk(store, "t") == 1
    assert store.has_transcript_chunks("t")
    assert chunk(store, "t") == 0  # unchanged: kept, nothing written
    ((key, digest, stored),) = store.transcript_chunks("t")
    assert stored.first_seq == 1 and stored.part == 0 and stored.text.startswith("[user] alpha one")
    assert store.transcript_chunk("t", 1, 0) == stored
    assert store.transcript_chunk("t", 9, 0) is None
    assert store.chunk_restart_seq("t", 2) == 1 and store.chunk_restart_seq("t", 0) == 0
    add(store, "t", "alpha three")
    assert chunk(store, "t") == 1  # the one chunk is rewritten
    ((new_key, new_digest, _),) = store.transcript_chunks("t")
    assert new_key != key and new_digest != digest
    assert store.replace_transcript_chunks("t", 1, []) == 0
    assert store.transcript_chunks("t") == [] and not store.has_transcript_chunks("t")
    assert store.replace_transcript_chunks("nope", 1, []) == 0


def test_chunk_rows_name_their_source_lines_and_messages(store: Store) -> None:
    meta = {"source_file": "s.jsonl", "line_start": 1, "line_end": 2}
    ids = [m.id for m in add(store, "t", "alpha", "beta", metadata=meta)]
    chunks = list(chunk_messages(store.iter_chunk_sources("t", 1)))
    store.replace_transcript_chunks("t", 1, chunks)
    rows = store.chunk_rows(["t@1", "t@1.0", "t@7", "nonsense"], where=EVERYTHING)
    assert set(rows) == {"t@1", "t@1.0"}
    got = rows["t@1"]
    assert got.id == "t@1" and got.channel == "t" and got.message_ids == tuple(ids)
    assert (got.source, got.line_start, got.line_end) == ("s.jsonl", 1, 2)
    assert got.message_offsets == chunks[0].message_offsets and got.text == chunks[0].text
    assert got.created_at is not None and got.content_hash
    assert store.chunk_rows(["t@1"], where=SearchFilter(channel="other")) == {}
    assert store.chunk_rows([], where=EVERYTHING) == {}


def test_a_long_message_becomes_parts(store: Store) -> None:
    add(store, "t", "word " * 3000)
    chunks = list(chunk_messages(store.iter_chunk_sources("t", 1)))
    assert len(chunks) > 1 and [c.part for c in chunks] == list(range(len(chunks)))
    assert store.replace_transcript_chunks("t", 1, chunks) == len(chunks)
    stored: list[TranscriptChunk] = [c for _, _, c in store.transcript_chunks("t")]
    assert stored == chunks
