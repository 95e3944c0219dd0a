"""Transcript threads are keyed by the session id inside the file (DESIGN §2, #17 item 9)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import recallbox

SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
CHANNEL = f"claude-code:{SESSION}"
PROJECT = Path("claude-code/projects/-home-dev-app")


def record(uuid: str, parent: str | None, text: str, session: str | None, **more: Any) -> str:
    data: dict[str, Any] = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": more.pop("timestamp", "2025-03-01T10:00:00Z"),
        "message": {"role": "user", "content": text},
        **more,
    }
    if session is not None:
        data["sessionId"] = session
    return json.dumps(data) + "\n"


def contents(box: recallbox.Box, channel: str) -> list[str]:
    return [m.content for m in box.messages(channel) if m.superseded_by is None]


def test_a_copy_under_another_name_adds_nothing_and_appends_to_one_thread(
    box: recallbox.Box, tmp_path: Path
) -> None:
    original = tmp_path / "a" / "s-1.jsonl"
    copy = tmp_path / "b" / "renamed.jsonl"
    for path in (original, copy):
        path.parent.mkdir()
        path.write_text(record("u1", None, "first", "s-1") + record("u2", "u1", "second", "s-1"))
    box.import_transcripts("claude-code", original)
    [report] = box.import_transcripts("claude-code", copy).files
    assert (report.added, report.duplicates, report.channels) == (0, 2, ("claude-code:s-1",))
    assert [t.channel for t in box.threads()] == ["claude-code:s-1"]
    # the copy grows (the session went on there): its new record joins the same thread once
    with copy.open("a") as stream:
        stream.write(record("u3", "u2", "third, from the copy", "s-1"))
    [report] = box.import_transcripts("claude-code", copy).files
    assert (report.status, report.added, report.duplicates) == ("appended", 1, 0)
    with original.open("a") as stream:  # the original catches up: nothing twice
        stream.write(record("u3", "u2", "third, from the copy", "s-1"))
    [report] = box.import_transcripts("claude-code", original).files
    assert (report.added, report.duplicates) == (0, 1)
    assert contents(box, "claude-code:s-1") == ["first", "second", "third, from the copy"]
    assert box.search_memory("third, from the copy").count("[message_id=") == 1


def test_a_copy_does_not_take_over_the_thread_source(box: recallbox.Box, tmp_path: Path) -> None:
    """The privacy policy matches a thread by its source file: a copy that only repeats the
    session leaves the thread's source alone (excluding the original still denies it)."""
    original, copy = tmp_path / "s-2.jsonl", tmp_path / "backup-of-s-2.jsonl"
    for path in (original, copy):
        path.write_text(record("u1", None, "the vault password is hunter2-q", "s-2"))
    box.import_transcripts("claude-code", [original, copy])
    box.exclude_source("s-2.jsonl")
    assert "[message_id=" not in box.search_memory("hunter2-q")
    assert box.thread("claude-code:s-2").excluded


def test_a_file_without_a_session_id_is_keyed_by_its_stem(
    box: recallbox.Box, tmp_path: Path
) -> None:
    path = tmp_path / "no-ids.jsonl"
    path.write_text(record("u1", None, "hello", None))
    box.import_transcripts("claude-code", path)
    assert [t.channel for t in box.threads()] == ["claude-code:no-ids"]


def test_a_file_naming_several_sessions_keeps_the_first_and_reports_the_others(
    box: recallbox.Box, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        record("u1", None, "one", "first-id")
        + record("u2", "u1", "two", "second-id")
        + record("u3", "u2", "three", "third-id")
        + record("u4", "u3", "four", "second-id")
    )
    [report] = box.import_transcripts("claude-code", path).files
    assert report.other_session_ids == ("second-id", "third-id")
    assert [t.channel for t in box.threads()] == ["claude-code:first-id"]
    assert contents(box, "claude-code:first-id") == ["one", "two", "three", "four"]
    with path.open("a") as stream:  # a later sync keeps reporting them, and new ones
        stream.write(record("u5", "u4", "five", "fourth-id"))
    [report] = box.import_transcripts("claude-code", path).files
    assert report.other_session_ids == ("second-id", "third-id", "fourth-id")


def test_subagent_files_of_a_renamed_session_keep_their_parent_link(
    box: recallbox.Box, fixtures: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    shutil.copytree(fixtures / PROJECT, project)
    renamed = project / "renamed-session.jsonl"
    (project / f"{SESSION}.jsonl").rename(renamed)
    nested = project / SESSION
    if nested.is_dir():
        nested.rename(project / renamed.stem)
    box.import_transcripts("claude-code", renamed)
    channels = {t.channel for t in box.threads()}
    assert CHANNEL in channels and not any("renamed-session" in c for c in channels)
    agents = sorted(c for c in channels if c.startswith(f"{CHANNEL}/agent-"))
    assert agents, channels
    for channel in agents:
        first = box.messages(channel)[0]
        assert first.metadata["parent_channel"] == CHANNEL
        assert first.metadata.get("parent_session_id") == SESSION


def test_imported_threads_take_their_last_activity_from_their_messages(
    box: recallbox.Box, tmp_path: Path
) -> None:
    """Fix (#17 item 9): imported threads took the import time as their last activity, so
    "threads by last activity" ordered old sessions as new (DESIGN §2)."""
    old, older = tmp_path / "old.jsonl", tmp_path / "older.jsonl"
    old.write_text(record("u1", None, "x", "s-old", timestamp="2024-02-02T10:00:00Z"))
    older.write_text(record("u1", None, "y", "s-older", timestamp="2023-01-01T10:00:00Z"))
    box.append("live", "user", "now")  # a live thread, created before the imports
    box.import_transcripts("claude-code", [older, old])
    by_channel = {t.channel: t.last_activity for t in box.threads()}
    assert by_channel["claude-code:s-old"] == datetime.fromisoformat("2024-02-02T10:00:00+00:00")
    assert by_channel["claude-code:s-older"] == datetime.fromisoformat("2023-01-01T10:00:00+00:00")
    for path, word in ((old, "zebra-old"), (older, "zebra-older")):
        with path.open("a") as stream:
            stamp = "2024-02-02T11:00:00Z" if path is old else "2023-01-01T11:00:00Z"
            stream.write(record("u2", "u1", f"shared {word}", None, timestamp=stamp))
    box.import_transcripts("claude-code", [older, old])
    hits = box.search_memory("shared zebra")
    assert hits.index("zebra-old\n") < hits.index("zebra-older")  # newest thread first
