"""A long import in one process while another appends and reads, or while it is killed (#14
item 2): the import commits in short batches with its cursor, so the other process never waits
long for the write lock, and a killed import leaves a consistent database that the next import
finishes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from session_files import SESSION, write_session  # tests/importers/session_files.py
from snapshots import snapshot  # tests/importers/snapshots.py

import recallbox
from backends import DbLocation
from recallbox.storage.sqlite import connection

CHANNEL = f"claude-code:{SESSION}"
APPENDER_BUSY_TIMEOUT_MS = 2_000
"""The appending process waits at most this long for the lock (an import holding it for a
whole file — many seconds for these files — makes its append fail)."""
POLL_S = 0.05
IMPORT_TIMEOUT_S = 1_800
LONG_IMPORT_TURNS = {"sqlite": 25_000, "postgres": 2_500}
"""100 502 records on SQLite (#14 item 2: an append succeeds during a 100k-record import,
while the import takes and gives back the file's one write lock batch after batch); 10 102 on
PostgreSQL, whose writers of different threads never share a lock (row locks, MVCC): the
size matters for SQLite's lock, and the 100k-record import costs 216 s there (37 s on SQLite,
at load ~2) — the same test at a size that still spans ~75 import batches."""

IMPORTER = """
import sys, recallbox
with recallbox.open(sys.argv[1]) as box:
    report = box.import_transcripts("claude-code", sys.argv[2])
    assert report.errors == (), report.errors
"""


def start_import(db: Path | str, session: Path) -> subprocess.Popen[bytes]:
    """The import in another process (its stderr in ``import.log`` next to the session)."""
    with (session.parent / "import.log").open("wb") as log:
        return subprocess.Popen(
            [sys.executable, "-c", IMPORTER, str(db), str(session)],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )


def wait_for_messages(box: recallbox.Box, process: subprocess.Popen[bytes]) -> int:
    """Wait until the importer has committed a first batch; its message count."""
    while process.poll() is None:
        threads = {t.channel: t.message_count for t in box.threads()}
        if threads.get(CHANNEL):
            return threads[CHANNEL]
        time.sleep(POLL_S)
    raise AssertionError("the import ended before a first batch was seen")


def test_appends_and_reads_go_on_during_a_long_import(
    backend: str, db_location: DbLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = tmp_path / "projects" / f"{SESSION}.jsonl"
    session.parent.mkdir()
    records = write_session(session, turns=LONG_IMPORT_TURNS[backend])
    assert records > 4 * LONG_IMPORT_TURNS[backend]
    db = db_location("x")
    with recallbox.open(db) as box:
        live = box.append("live", "user", "before the import")
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", APPENDER_BUSY_TIMEOUT_MS)
    process = start_import(db, session)
    during: list[int] = []
    try:
        with recallbox.open(db) as box:
            seen = wait_for_messages(box, process)
            while process.poll() is None:
                box.append("live", "user", f"appended during the import ({len(during)})")
                assert "before the import" in box.read_message(live.id)
                during.append(box.thread(CHANNEL).message_count)
                time.sleep(POLL_S)
    finally:
        process.wait(IMPORT_TIMEOUT_S)
    assert process.returncode == 0, (session.parent / "import.log").read_text()
    with recallbox.open(db) as box:
        final = box.thread(CHANNEL).message_count
        assert box.thread("live").message_count == 1 + len(during)
        assert box.doctor().healthy
    # the appends ran while the import was writing, not before or after it
    assert during and seen < final and any(count < final for count in during), (records, during)


def test_a_killed_import_leaves_a_consistent_database_and_the_next_one_finishes(
    db_location: DbLocation,
    tmp_path: Path,
) -> None:
    session = tmp_path / "projects" / f"{SESSION}.jsonl"
    session.parent.mkdir()
    write_session(session, turns=600)
    with recallbox.open(db_location("reference")) as box:
        assert box.import_transcripts("claude-code", session).errors == ()
        reference = snapshot(box)
    db = db_location("x")
    with recallbox.open(db):
        pass
    process = start_import(db, session)
    with recallbox.open(db) as box:
        wait_for_messages(box, process)
    if process.poll() is None:
        os.kill(process.pid, signal.SIGKILL)
    process.wait(IMPORT_TIMEOUT_S)
    with recallbox.open(db) as box:
        assert box.doctor().healthy
        partial = box.thread(CHANNEL).message_count
        [file] = box.import_transcripts("claude-code", session).files
        assert file.error is None
        assert file.status == ("appended" if process.returncode == -signal.SIGKILL else "unchanged")
        assert snapshot(box) == reference
        assert 0 < partial <= box.thread(CHANNEL).message_count
