"""A database written by the release before #17 item 9 (threads named by their file) migrates
in place: threads keyed by the session id inside the file, copies merged, no message lost,
none shown twice, every thread's last activity its newest message's time."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest
from pre_session_keys import NOTES_SESSION, OLD_DB, SESSION, write_transcripts

import recallbox
from recallbox.storage.sqlite.schema import LATEST_VERSION

OLD_SCHEMA = 4
CHANNEL = f"claude-code:{SESSION}"


def live(box: recallbox.Box) -> dict[str, list[str]]:
    """Every thread's live (not superseded) message contents, in order."""
    return {
        t.channel: [m.content for m in box.messages(t.channel) if m.superseded_by is None]
        for t in box.threads()
    }


@pytest.fixture
def migrated(tmp_path: Path) -> Path:
    db = tmp_path / "old.db"
    shutil.copyfile(OLD_DB, db)
    return db


def test_the_fixture_is_the_old_release(migrated: Path) -> None:
    import apsw

    conn = apsw.Connection(str(migrated))
    assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone() == (OLD_SCHEMA,)
    channels = {row[0] for row in conn.execute("SELECT channel FROM threads")}
    assert {"claude-code:copy", "claude-code:moved/agent-b7e1", "claude-code:notes"} <= channels
    conn.close()


def test_threads_are_keyed_by_session_and_match_a_fresh_import(
    migrated: Path, tmp_path: Path
) -> None:
    with recallbox.open(migrated) as box:
        assert box.store.schema_version() == LATEST_VERSION
        after = live(box)
    with recallbox.open(tmp_path / "fresh.db") as fresh:
        fresh.import_transcripts("claude-code", write_transcripts(tmp_path / "files"))
        fresh.append("live", "user", "appended by hand")
        expected = live(fresh)
    assert after == expected
    assert f"claude-code:{NOTES_SESSION}" in after and "claude-code:loose" in after
    assert not any(c.startswith(("claude-code:copy", "claude-code:moved")) for c in after)
    assert f"{CHANNEL}/agent-b7e1" in after  # the moved sub-agent joined its session's


def test_no_message_is_lost_and_none_is_shown_twice(migrated: Path) -> None:
    import apsw

    conn = apsw.Connection(str(migrated))
    before = conn.execute("SELECT uid, content FROM messages").fetchall()
    conn.close()
    with recallbox.open(migrated) as box:
        for message_id, content in before:
            assert box.message(message_id).content == content
        shown = Counter(
            line.split(" ")[0]
            for line in box.search_memory("vault").splitlines()
            if line.startswith("[message_id=")
        )
        assert shown and set(shown.values()) == {1}


def test_last_activity_is_the_newest_message_time(migrated: Path) -> None:
    with recallbox.open(migrated) as box:
        for thread in box.threads():
            newest = max(m.created_at for m in box.messages(thread.channel))
            assert thread.last_activity == newest, thread.channel
        activity = {t.channel: t.last_activity for t in box.threads()}
        # the imported sessions are from 2025, whenever they were imported
        assert max(activity, key=activity.__getitem__) == "live"
        assert activity[CHANNEL] > activity[f"claude-code:{NOTES_SESSION}"]


def test_reimporting_after_the_migration_adds_nothing(migrated: Path, tmp_path: Path) -> None:
    """The ledger followed the threads: the same transcripts (at another path) add no
    message, each record found in the session's thread."""
    with recallbox.open(migrated) as box:
        threads = live(box)
        report = box.import_transcripts("claude-code", write_transcripts(tmp_path / "again"))
        assert [f.error for f in report.files if f.error] == []
        assert sum(f.added for f in report.files) == 0
        assert live(box) == threads


def test_the_migration_runs_once(migrated: Path) -> None:
    with recallbox.open(migrated) as box:
        first = live(box)
    with recallbox.open(migrated) as box:
        assert live(box) == first
        assert box.doctor().healthy
