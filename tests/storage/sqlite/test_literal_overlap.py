"""The literal indexer's overlapped path: word and CJK streams computed on a worker thread
while SQLite writes the trigram index (``literal_index.index_backlog``) must write exactly the
index the serial path writes, and a failure on the worker must roll the batch back."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import pytest

import recallbox
from recallbox.storage.sqlite import literal_index
from recallbox.storage.sqlite.literal_index import backlog_size

#: Small batches, so that a drain takes several (each of them overlapped when forced).
BATCH_BYTES = 600
#: A threshold no batch reaches: every batch computes its streams inline.
NEVER = 1 << 62
TABLES = ("messages_literal", "messages_words", "messages_cjk")


def _items() -> list[dict[str, Any]]:
    """ASCII, CJK, mixed and argument-only rows, some long enough to be cut into words."""
    items: list[dict[str, Any]] = []
    for i in range(40):
        items.append({"role": "user", "content": f"plain ascii row{i} Foo_Bar-baz {'x' * 30}"})
        items.append(
            {"role": "assistant", "content": f"検索エンジン{i}の索引 mixed テスト word{i}"}
        )
        call = {"id": f"c{i}", "name": "grep", "arguments": {"q": f"召回{i} needle{i}", "n": i}}
        items.append({"role": "assistant", "content": "", "tool_calls": [call]})
        items.append({"role": "user", "content": f"한국어 텍스트 {i} — ÜBER straße ﬁle"})
    return items


def _drain(box: recallbox.Box) -> None:
    while True:
        with box.store.pool.transaction() as conn:
            if not literal_index.index_backlog(conn, literal_index.INDEX_BATCH_ROWS, BATCH_BYTES):
                return


def _contents(conn: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every (term, row, column, offset) each index holds."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in TABLES:
        conn.execute(
            f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, instance)"
        )
        out[table] = sorted(conn.execute(f"SELECT * FROM temp.v_{table}").fetchall())
        conn.execute(f"DROP TABLE temp.v_{table}")
    return out


def _indexed(tmp_path: Path, name: str, threshold: int, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(literal_index, "OVERLAP_MIN_BYTES", threshold)
    with recallbox.open(tmp_path / f"{name}.db") as box:
        box.store.indexer.stop()
        box.append_many("t", _items())
        _drain(box)
        conn = box.store.pool.connection()
        assert backlog_size(conn) == 0
        return _contents(conn)


def test_the_overlapped_indexer_writes_what_the_serial_one_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workers: set[str] = set()
    real = literal_index._streams

    def streams(rows: Sequence[Sequence[Any]]) -> literal_index.Streams:
        workers.add(threading.current_thread().name)
        return real(rows)

    monkeypatch.setattr(literal_index, "_streams", streams)
    serial = _indexed(tmp_path, "serial", NEVER, monkeypatch)
    assert workers == {threading.current_thread().name}
    workers.clear()
    overlapped = _indexed(tmp_path, "overlapped", 0, monkeypatch)
    assert len(workers) == 1 and next(iter(workers)).startswith("recallbox-streams")
    assert all(serial[table] for table in TABLES)  # every index holds something to compare
    assert overlapped == serial


def test_a_failure_on_the_worker_rolls_the_batch_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(literal_index, "OVERLAP_MIN_BYTES", 0)

    def broken(rows: Sequence[Sequence[Any]]) -> list[tuple[int, str, str | None]]:
        raise ValueError(f"word stream failed on {threading.current_thread().name}")

    with recallbox.open(tmp_path / "x.db") as box:
        box.store.indexer.stop()
        box.append_many("t", _items())
        conn = box.store.pool.connection()
        queued = backlog_size(conn)
        with monkeypatch.context() as patch:
            patch.setattr(literal_index, "word_rows", broken)
            with pytest.raises(ValueError, match="recallbox-streams"):
                box.store.indexer.index_batch()
        assert backlog_size(conn) == queued
        assert conn.execute("SELECT count(*) FROM messages_literal").fetchone()[0] == 0
        box.store.indexer.drain()
        assert backlog_size(conn) == 0
        assert "needle7" in box.search_memory("needle7")


def test_an_in_memory_store_indexes_on_the_writer_thread_with_the_worker(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(literal_index, "OVERLAP_MIN_BYTES", 0)
    threads: list[str] = []
    real = literal_index.word_rows

    def recorded(rows: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(rows)

    monkeypatch.setattr(literal_index, "word_rows", recorded)
    with recallbox.open(":memory:") as box:
        box.append_many("t", _items())
        assert threads and all(name.startswith("recallbox-streams") for name in threads)
        box.append("u", "user", "late 召回 arrival")
        conn = box.store.pool.connection()
        assert backlog_size(conn) == 0
        words = conn.execute("SELECT count(*) FROM messages_words").fetchone()[0]
        assert words == len(_items()) + 1
        assert "arrival" in box.search_memory("late")
        assert "needle3" in box.search_memory("needle3")


#: How long a forked child may take to index a few rows (it hangs if it waits for a thread
#: only its parent has).
CHILD_WAIT_S = 60


def _index_in_child() -> None:
    with recallbox.open(":memory:") as box:
        box.append_many("t", _items())
        assert backlog_size(box.store.pool.connection()) == 0
        assert "needle5" in box.search_memory("needle5")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_child_makes_its_own_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(literal_index, "OVERLAP_MIN_BYTES", 0)
    with recallbox.open(":memory:") as box:  # the parent's worker exists before the fork
        box.append_many("t", _items())
    child = multiprocessing.get_context("fork").Process(target=_index_in_child)
    child.start()
    child.join(CHILD_WAIT_S)
    if child.is_alive():
        child.kill()
    assert child.exitcode == 0
