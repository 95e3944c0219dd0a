"""SQLite backend: file mode, pragmas, migrations, schema version, concurrency."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import apsw
import pytest

import recallbox
from recallbox import SchemaMismatch
from recallbox.storage.sqlite import connection
from recallbox.storage.sqlite.schema import LATEST_VERSION, MIGRATIONS

IMPORT_LIKE_GAP_S = 0.01
"""The other connection lets go of the lock this long between two of its batches."""
IMPORT_LIKE_BATCHES_S = 10.0
"""… for at most this long (the waiting append gets in long before)."""


def test_file_created_private_with_wal(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.append("t", "user", "x")
        conn = box.store.pool.connection()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert stat.S_IMODE(os.stat(db_path).st_mode) == 0o600


def test_a_writer_waits_for_the_lock_and_gets_it_between_two_batches(db_path: Path) -> None:
    """Another connection holds the write lock, lets go for an instant, takes it again: the
    waiting append gets in within that gap (SQLite's own busy timeout backs off to 100 ms
    between tries and mostly misses it; the import test in tests/importers shows the effect)."""
    with recallbox.open(db_path) as box:
        box.append("t", "user", "x")
        other = apsw.Connection(str(db_path))
        other.execute("BEGIN IMMEDIATE")
        waiting = threading.Thread(target=box.append, args=("t", "user", "waited"))
        waiting.start()
        deadline = time.monotonic() + IMPORT_LIKE_BATCHES_S
        while waiting.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
            other.execute("COMMIT")
            time.sleep(IMPORT_LIKE_GAP_S)
            other.execute("BEGIN IMMEDIATE")
        other.execute("COMMIT")
        waiting.join()
        assert [m.content for m in box.messages("t")] == ["x", "waited"]


def test_a_lock_held_too_long_names_the_wait(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 50)
    with recallbox.open(db_path) as box:
        box.append("t", "user", "x")
        other = apsw.Connection(str(db_path))
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(recallbox.StoreUnavailable, match="stayed locked"):
            box.append("t", "user", "y")
        other.execute("COMMIT")


def test_migrations_recorded_once_and_idempotent(db_path: Path) -> None:
    for _ in range(3):
        with recallbox.open(db_path) as box:
            assert box.store.schema_version() == LATEST_VERSION
    conn = apsw.Connection(str(db_path))
    rows = conn.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    conn.close()
    assert [r[0] for r in rows] == sorted(version for version, _, _ in MIGRATIONS)


def test_newer_schema_is_refused_clearly(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.append("t", "user", "x")
    conn = apsw.Connection(str(db_path))
    conn.execute(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 'now')",
        (LATEST_VERSION + 1,),
    )
    conn.close()
    with pytest.raises(SchemaMismatch, match="newer recallbox"):
        recallbox.open(db_path)


def test_foreign_keys_enforced(box: recallbox.Box) -> None:
    conn = box.store.pool.connection()
    with pytest.raises(apsw.ConstraintError):
        conn.execute(
            "INSERT INTO generations (uid, thread_id, number, opened_at) VALUES ('g', 999, 1, 'x')"
        )


WRITER = textwrap.dedent(
    """
    import sys, recallbox
    path, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with recallbox.open(path) as box:
        for i in range(n):
            box.append("shared", "user", f"{name} {i}")
    """
)


def test_two_processes_append_to_one_thread(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.create_thread("shared")
    n = 150
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path), name, str(n)],
            stderr=subprocess.PIPE,
            env=env,
        )
        for name in ("alpha", "beta")
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    with recallbox.open(db_path) as box:
        messages = box.messages("shared")
        assert len(messages) == 2 * n
        assert [m.seq for m in messages] == list(range(1, 2 * n + 1))
        for name in ("alpha", "beta"):
            mine = [m.content for m in messages if m.content.startswith(name)]
            assert mine == [f"{name} {i}" for i in range(n)]
        assert box.doctor().healthy


def test_threads_share_a_box(db_path: Path) -> None:
    import threading

    with recallbox.open(db_path) as box:
        errors: list[BaseException] = []

        def work(k: int) -> None:
            try:
                for i in range(40):
                    box.append("t", "user", f"{k}-{i}")
            except BaseException as exc:  # pragma: no cover - surfaced below
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        assert len(box.messages("t")) == 160
