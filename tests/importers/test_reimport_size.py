"""Re-importing the same data never grows the database file (#14 item 3): an unchanged file,
a touched one (read from its cursor), one rewritten with the same records (a full re-sync)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from session_files import SESSION, write_session  # tests/importers/session_files.py

import recallbox

TURNS = 300
ROUNDS = 3


def file_bytes(box: recallbox.Box, db: Path) -> int:
    """The database file's size with every committed page in it (the WAL checkpointed)."""
    box.store.indexer.drain()
    box.store.pool.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size


def reformat(path: Path) -> None:
    """The same records written again with other JSON spacing: its prefix hash changes, so the
    next sync reads it again from the start (a rewritten file)."""
    text = path.read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    separators = (",", ":") if ", " in text.split("\n", 1)[0] else (", ", ": ")
    path.write_text(
        "".join(json.dumps(r, separators=separators) + "\n" for r in records), encoding="utf-8"
    )


def test_reimporting_the_same_data_never_grows_the_file(tmp_path: Path) -> None:
    session = tmp_path / "projects" / f"{SESSION}.jsonl"
    session.parent.mkdir()
    write_session(session, TURNS)
    db = tmp_path / "x.db"
    with recallbox.open(db) as box:
        first = box.import_transcripts("claude-code", session)
        assert first.errors == () and first.added > TURNS
        messages = {t.channel: t.message_count for t in box.threads()}
        size = file_bytes(box, db)
        statuses = []
        for _ in range(ROUNDS):
            statuses.append(box.import_transcripts("claude-code", session).files[0].status)
            stat = session.stat()
            os.utime(session, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
            statuses.append(box.import_transcripts("claude-code", session).files[0].status)
            reformat(session)
            report = box.import_transcripts("claude-code", session)
            statuses.append(report.files[0].status)
            assert (report.added, report.files[0].superseded, report.errors) == (0, 0, ())
            assert {t.channel: t.message_count for t in box.threads()} == messages
            assert file_bytes(box, db) <= size
        assert set(statuses) == {"unchanged", "appended", "resynced"}
        assert box.doctor().healthy
