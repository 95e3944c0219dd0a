"""The SQLite write path at scale (#14 item 2): batched statements, no re-read, the literal
indexer's byte-bounded batches, and what a cold open does not load."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recallbox
from recallbox.storage.sqlite import backlog, literal_index
from recallbox.storage.sqlite import chunks as chunks_module
from recallbox.storage.sqlite import messages as messages_module
from recallbox.storage.values import TranscriptChunk

ROWS = 1_000
CLOSE_WAIT_S = 5.0


@contextmanager
def statements(box: recallbox.Box, prefix: str) -> Iterator[list[str]]:
    """Every statement run on the box's connection that starts with ``prefix`` (one entry per
    execution: ``executemany`` runs its statement once per row)."""
    seen: list[str] = []
    conn = box.store.pool.connection()

    def profile(sql: str, _nanoseconds: int) -> None:
        if sql.startswith(prefix):
            seen.append(sql)

    conn.set_profile(profile)
    try:
        yield seen
    finally:
        conn.set_profile(None)


def test_a_batch_is_one_insert_statement(box: recallbox.Box) -> None:
    """FTS5 flushes its pending terms at every statement that writes it (through the insert
    trigger): one statement per batch, never one per row, keeps the ranked index cheap."""
    items = [{"role": "user", "content": f"row {i} needle{i}"} for i in range(ROWS)]
    with statements(box, "INSERT INTO messages (") as seen:
        written = box.append_many("t", items)
    assert len(seen) == -(-ROWS // messages_module.INSERT_ROWS_PER_STATEMENT) == 1
    assert [m.seq for m in written] == list(range(1, ROWS + 1))
    assert box.doctor().healthy
    assert [h.id for h in box.search("needle517", domain="sessions")] == [written[517].id]


@given(
    sizes=st.lists(st.integers(min_value=0, max_value=9), min_size=1, max_size=5),
    compact_at=st.lists(st.integers(min_value=0, max_value=40), max_size=3),
    per_statement=st.integers(min_value=1, max_value=4),
)
def test_what_append_returns_is_what_a_read_gives(
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[int],
    compact_at: list[int],
    per_statement: int,
) -> None:
    """Batches split across statements and generations: the messages returned (built from the
    values written, no re-read) equal the stored ones, in order, numbered without a gap."""
    path = tmp_path_factory.mktemp("append") / "x.db"
    original = messages_module.INSERT_ROWS_PER_STATEMENT
    messages_module.INSERT_ROWS_PER_STATEMENT = per_statement
    try:
        with recallbox.open(path) as box:
            returned = []
            counter = 0
            for size in sizes:
                items: list[dict[str, object]] = []
                for _ in range(size):
                    item: dict[str, object] = {
                        "role": "assistant",
                        "content": f"m{counter} 中文{counter}\x00",
                        "tool_calls": [{"id": f"c{counter}", "name": "t", "arguments": "{}"}],
                        "metadata": {"n": counter},
                    }
                    if counter in compact_at:
                        item.update(role="system", kind="compaction_summary", tool_calls=None)
                    items.append(item)
                    counter += 1
                returned.extend(box.append_many("t", items))
            if not returned:
                return
            assert box.messages("t") == returned
            assert [m.seq for m in returned] == list(range(1, len(returned) + 1))
            assert box.doctor().healthy
    finally:
        messages_module.INSERT_ROWS_PER_STATEMENT = original


def _chunk(seq: int, word: str) -> TranscriptChunk:
    return TranscriptChunk(
        first_seq=seq,
        part=0,
        last_seq=seq,
        generation=1,
        message_ids=(f"m{seq}",),
        source="s.jsonl",
        line_start=seq,
        line_end=seq,
        text=f"[user] {word}",
        message_offsets=(0,),
    )


def test_transcript_chunks_are_written_in_one_statement(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    written = box.append_many("t", [{"role": "user", "content": f"w{i}"} for i in range(9)])
    store = box.store
    with statements(box, "INSERT INTO transcript_chunks") as seen:
        first = [_chunk(m.seq, f"w{m.seq}") for m in written]
        assert store.replace_transcript_chunks("t", 1, first) == 9
    assert len(seen) == 1
    monkeypatch.setattr(chunks_module, "CHUNKS_PER_STATEMENT", 2)
    with statements(box, "INSERT INTO transcript_chunks") as seen:
        new = [_chunk(m.seq, f"x{m.seq}") for m in written]
        assert store.replace_transcript_chunks("t", 1, new) == 9
    assert len(seen) == 5
    assert [c.text for _, _, c in store.transcript_chunks("t")] == [c.text for c in new]
    hits = box.search("x4", domain="transcripts")
    assert [h.id for h in hits] == ["t@4"]
    assert box.doctor().healthy


@given(
    lengths=st.lists(st.integers(min_value=0, max_value=3_000), min_size=1, max_size=25),
    budget=st.integers(min_value=1, max_value=8_000),
    limit=st.integers(min_value=1, max_value=30),
)
def test_the_indexer_takes_batches_bounded_by_bytes(
    tmp_path_factory: pytest.TempPathFactory, lengths: list[int], budget: int, limit: int
) -> None:
    """Each batch stops once its text reaches the byte budget (but takes at least one row)
    and at ``limit`` rows; batches drain the backlog, oldest first, and leave the index whole."""
    path = tmp_path_factory.mktemp("indexer") / "x.db"
    with recallbox.open(path) as box:
        box.store.indexer.stop()  # the batches below are the only indexing
        items = [{"role": "user", "content": "é" * n + f" tag{i}"} for i, n in enumerate(lengths)]
        box.append_many("t", items)
        sizes = [len(str(item["content"]).encode()) for item in items]
        conn = box.store.pool.connection()
        start = 0
        while True:
            with box.store.pool.transaction():
                taken = literal_index.index_backlog(conn, limit, budget)
            if not taken:
                break
            batch = sizes[start : start + taken]
            assert taken <= limit
            assert taken == 1 or sum(batch[:-1]) < budget
            assert taken == limit or sum(batch) >= budget or start + taken == len(sizes)
            start += taken
        assert start == len(sizes)
        assert literal_index.backlog_size(conn) == 0
        assert box.doctor().healthy
        found = box.search_memory(f"tag{len(lengths) - 1}")
        assert f"tag{len(lengths) - 1}" in found


def test_opening_a_store_does_not_import_numpy(db_path: Path) -> None:
    """A cold start (a hook, a CLI call) pays only for what it uses: numpy (about 0.13 s to
    import) is loaded by what computes with it (a vector copy, the ranking's signal columns),
    not by opening the store or by a literal search."""
    with recallbox.open(db_path) as box:
        box.append("t", "user", "hello world")
    script = textwrap.dedent(
        f"""
        import json, sys, recallbox
        with recallbox.open({str(db_path)!r}) as box:
            box.search_memory("hello")
        print(json.dumps("numpy" in sys.modules))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) is False


def test_the_ranked_index_follows_every_batch_exactly(box: recallbox.Box) -> None:
    """The ranked index stays synchronous: a message is found by keyword search the moment
    its append returns, and the index holds exactly the content table's rows."""
    for batch in range(5):
        items = [{"role": "user", "content": f"batch{batch} row{i}"} for i in range(50 * batch)]
        written = box.append_many(f"t{batch}", items)
        if written:
            hits = box.search(f"batch{batch}", domain="sessions", limit=500)
            assert {h.id for h in hits} == {m.id for m in written}
    conn = box.store.pool.connection()
    conn.execute("INSERT INTO messages_fts(messages_fts, rank) VALUES ('integrity-check', 1)")
    docsize = conn.execute("SELECT count(*) FROM messages_fts_docsize").fetchone()
    assert docsize == conn.execute("SELECT count(*) FROM messages").fetchone()


def test_closing_never_hangs_on_an_indexer_waiting_for_the_lock(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An indexer blocked on a write lock that is not coming (here held by this thread and not
    released, as a writer interrupted at the wrong instant can leave it) does not make
    ``close()`` wait for ever; the queued rows stay queued for the next process."""
    monkeypatch.setattr(backlog, "INDEXER_STOP_WAIT_S", 0.2)
    monkeypatch.setattr(backlog, "INDEXER_QUIET_S", 0.0)
    box = recallbox.open(db_path)
    box.store.indexer.stop()  # no indexing while the row is queued
    box.append("t", "user", "queued for the literal index")
    gate = box.store.pool._write_gate
    gate.acquire()  # the lock every transaction of this process takes first
    try:
        box.store.indexer._stopping = False
        box.store.indexer._halt.clear()
        box.store.indexer.wake()  # the thread starts and blocks on the lock
        time.sleep(0.1)
        closing = threading.Thread(target=box.close, daemon=True)
        closing.start()
        closing.join(CLOSE_WAIT_S)
        assert not closing.is_alive(), "close() is still waiting for the indexer"
    finally:
        gate.release()
    with recallbox.open(db_path) as again:
        assert again.store.indexer.drain() == 1  # still queued, indexed now
        assert "queued for the literal index" in again.search_memory("queued for the literal")
