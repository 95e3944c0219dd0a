"""Waits for a lock another process holds stay where they belong (#15 item 1: readers are never
blocked by writers): closing a store whose background indexer waits for another process's
write lock returns at once, and a purge's truncating checkpoint is paced by its own backoff,
not by the busy timeout once per attempt while a reader holds the WAL.

The busy timeout is raised to :data:`LONG_BUSY_MS` here, so a wait for it would outlast the
:data:`WATCHDOG_S` watchdog by far: the watchdog tells "did not wait for the lock" from "did",
it measures no speed."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

import recallbox
from recallbox.storage.sqlite import connection
from recallbox.storage.sqlite import secrets as sqlite_secrets
from recallbox.storage.sqlite.literal_index import BACKLOG_TABLE

LONG_BUSY_MS = 600_000
"""A busy timeout no watchdog here waits out (10 minutes)."""
WATCHDOG_S = 60
"""How long a call that must not wait for the lock may take, at most, on a loaded machine."""


def _in_thread(work: object) -> threading.Thread:
    assert callable(work)
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    return thread


def test_closing_a_store_does_not_wait_for_another_process_write_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "held.db"
    with recallbox.open(db) as box:
        box.append("t", "user", "deploy staging while an import holds the lock")
    holder = apsw.Connection(str(db))
    holder.execute(f"INSERT OR IGNORE INTO {BACKLOG_TABLE} (id) SELECT id FROM messages")
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", LONG_BUSY_MS)
    waiting = threading.Event()

    class NoticedWait(connection._BusyWait):  # the indexer reached its wait for the lock
        def __call__(self, tries: int) -> bool:
            waiting.set()
            return super().__call__(tries)

    monkeypatch.setattr(connection, "_BusyWait", NoticedWait)
    holder.execute("BEGIN IMMEDIATE")  # another process's write, held
    try:
        reader = recallbox.open(db)  # a backlog at open starts the indexer
        assert [h.channel for h in reader.search("deploy", allow_embed=False)] == ["t"]
        assert waiting.wait(WATCHDOG_S), "the indexer never waited for the held lock"
        closing = _in_thread(reader.close)
        closing.join(WATCHDOG_S)
        assert not closing.is_alive(), "closing waited for another process's write lock"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    closing.join(WATCHDOG_S)
    with recallbox.open(db) as box:  # the row stayed queued, found meanwhile
        assert [h.channel for h in box.search("staging", allow_embed=False)] == ["t"]


def test_a_purge_beside_a_reader_is_paced_by_its_backoff_not_the_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "purge.db"
    with recallbox.open(db) as box:
        secret = box.append("t", "user", "the canary s3cr3t-walrus").id
        box.append("t", "user", "a bystander")
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", LONG_BUSY_MS)
    monkeypatch.setattr(sqlite_secrets, "CHECKPOINT_ATTEMPTS", 2)
    reports: list[bool] = []
    with recallbox.open(db) as box:
        reader = apsw.Connection(str(db))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchall()  # holds a read snapshot
        try:
            purging = _in_thread(lambda: reports.append(box.purge(secret).wal_truncated))
            purging.join(WATCHDOG_S)
            assert not purging.is_alive(), "each checkpoint attempt waited the busy timeout"
        finally:
            reader.execute("ROLLBACK")
            reader.close()
        purging.join(WATCHDOG_S)
        assert reports == [False]  # the reader kept the WAL: reported, not waited out
        assert [m.content for m in box.messages("t")] == ["a bystander"]
