"""Driver errors stop at the store boundary: each becomes a StoreUnavailable naming the fix."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

import recallbox
from recallbox.storage.sqlite.connection import WAL_AUTOCHECKPOINT_PAGES, WAL_KEPT_BYTES
from recallbox.storage.sqlite.store import SQLiteStore


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some notes, not SQLite\n" * 100, encoding="utf-8")
    with pytest.raises(recallbox.StoreUnavailable, match="not a recallbox database"):
        recallbox.open(path)
    assert path.read_text(encoding="utf-8").startswith("just some notes")


def test_a_directory_is_not_a_database(tmp_path: Path) -> None:
    with pytest.raises(recallbox.StoreUnavailable, match="cannot open the database"):
        recallbox.open(tmp_path)


def test_a_path_under_a_regular_file(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(recallbox.StoreUnavailable, match="is a file, not a folder"):
        recallbox.open(blocker / "recall.db")


def _damaged(tmp_path: Path) -> Path:
    path = tmp_path / "recall.db"
    with recallbox.open(path) as box:
        box.append_many(
            "ops", [{"role": "user", "content": f"line {i} " * 200} for i in range(200)]
        )
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'messages'").fetchone()
    (page,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    data = bytearray(path.read_bytes())
    data[(root - 1) * page] = 0  # not a b-tree page type: SQLITE_CORRUPT on the next read
    path.write_bytes(bytes(data))
    return path


def test_corruption_found_by_a_query_names_doctor_repair(tmp_path: Path) -> None:
    damaged = r"damaged.*doctor --repair"
    with (
        recallbox.open(_damaged(tmp_path)) as box,  # the migration table is intact: it opens
        pytest.raises(recallbox.StoreUnavailable, match=damaged) as info,
    ):
        box.messages("ops")
    assert isinstance(info.value.__cause__, apsw.CorruptError)


def test_text_that_is_not_utf8_is_damage_too(tmp_path: Path) -> None:
    path = tmp_path / "recall.db"
    with recallbox.open(path) as box:
        box.append("ops", "user", "needle in a haystack")
        box.store.pool.connection().execute(  # type: ignore[attr-defined]
            "UPDATE messages SET content = CAST(X'ff6e6565646c65' AS TEXT)"
        )
        with pytest.raises(recallbox.StoreUnavailable, match=r"not UTF-8.*doctor --repair"):
            box.messages("ops")


def test_a_write_inside_a_read_snapshot_is_refused(db_path: Path) -> None:
    store = SQLiteStore(str(db_path))
    try:
        with store.read_snapshot(), pytest.raises(RuntimeError, match="read snapshot"):
            store.ensure_thread("ops", None)
        store.ensure_thread("ops", None)  # fine once the snapshot is over
        with store.transaction(), store.read_snapshot():  # a snapshot joins a write
            store.ensure_thread("dev", None)
    finally:
        store.close()


@pytest.mark.parametrize("location", ["file", ":memory:"])
def test_a_snapshot_does_not_see_a_commit_made_meanwhile(tmp_path: Path, location: str) -> None:
    path = str(tmp_path / "s.db") if location == "file" else ":memory:"
    store = SQLiteStore(path)
    try:
        store.ensure_thread("before", None)
        seen: list[list[str]] = []
        started, committed = threading.Event(), threading.Event()

        def writer() -> None:
            started.wait(5)
            store.ensure_thread("during", None)
            committed.set()

        thread = threading.Thread(target=writer)
        thread.start()
        with store.read_snapshot():
            seen.append([t.channel for t in store.list_threads()])
            started.set()
            committed.wait(0.5 if location == ":memory:" else 5)  # memory: the writer waits
            seen.append([t.channel for t in store.list_threads()])
        thread.join(5)
        assert seen == [["before"], ["before"]]
        assert [t.channel for t in store.list_threads()] == ["before", "during"]
    finally:
        store.close()


def test_closing_while_another_thread_runs_a_statement(db_path: Path) -> None:
    """A late answer may still be reading when the Box closes: closing must not raise."""
    store = SQLiteStore(str(db_path))
    store.ensure_thread("ops", None)
    inside, release = threading.Event(), threading.Event()
    rows: list[object] = []

    def block() -> int:
        inside.set()
        release.wait(5)
        return 1

    def reader() -> None:
        with store.pool.reading() as conn:
            conn.create_scalar_function("block", block)
            rows.extend(conn.execute("SELECT block() FROM threads").fetchall())

    thread = threading.Thread(target=reader)
    thread.start()
    assert inside.wait(5)
    store.close()  # the reader is inside a statement on its connection
    release.set()
    thread.join(5)
    assert rows == [(1,)]
    with pytest.raises(recallbox.StoreUnavailable, match="closed"):
        store.get_thread("ops")


#: A statement that would run for minutes: only the deadline's progress handler can end it.
ENDLESS_SQL = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000000000) "
    "SELECT count(*) FROM n"
)


@pytest.mark.parametrize("location", ["file", ":memory:"])
def test_a_cancelled_deadline_stops_a_running_statement(tmp_path: Path, location: str) -> None:
    """The teeth of a recall domain's time limit: the statement itself stops (DESIGN §5)."""
    from recallbox.storage.deadline import Deadline

    store = SQLiteStore(str(tmp_path / "d.db") if location == "file" else ":memory:")
    try:
        cancel = Deadline()
        started = threading.Event()
        timer = threading.Timer(0.2, cancel.cancel)
        timer.start()
        with (
            pytest.raises(recallbox.TimedOut),
            store.read_snapshot(deadline=cancel),
            store.pool.reading() as conn,
        ):
            started.set()
            conn.execute(ENDLESS_SQL).fetchall()
        timer.join()
        assert started.is_set()
        with store.pool.reading() as conn:  # the connection is usable again, without a handler
            assert conn.execute("SELECT 1").fetchall() == [(1,)]
    finally:
        store.close()


def test_write_nowait_refuses_inside_a_memory_snapshot() -> None:
    store = SQLiteStore(":memory:")
    try:
        with store.pool.snapshot():
            assert store.pool.write_nowait(lambda conn: None) is False
        assert store.pool.write_nowait(lambda conn: None) is True
    finally:
        store.close()


def test_the_wal_is_checkpointed_every_wal_autocheckpoint_pages_not_every_4_mib(
    tmp_path: Path,
) -> None:
    """A commit checkpoints the WAL only past ``WAL_AUTOCHECKPOINT_PAGES`` (the default, 1 000
    pages, kept the WAL under ~4 MiB and copied FTS5's rewritten pages again every 4 MiB)."""
    db = tmp_path / "wal.db"
    with recallbox.open(db) as box:
        box.store.indexer.stop()
        conn = box.store.pool.connection()
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == WAL_AUTOCHECKPOINT_PAGES
        text = "deploy step output " * 2_000  # ~38 KB a message
        for batch in range(8):
            box.append_many("t", [{"role": "tool", "content": f"{batch} {i} {text}"} for i in range(40)])
        wal = Path(f"{db}-wal").stat().st_size
        assert 8 * 2**20 < wal < WAL_AUTOCHECKPOINT_PAGES * 4096 * 1.1
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        box.append("t", "user", "after the checkpoint: the WAL restarts and is cut back")
        assert Path(f"{db}-wal").stat().st_size <= WAL_KEPT_BYTES
