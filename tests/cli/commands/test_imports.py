"""``import`` through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest


def test_import_reports_then_adds_nothing_on_the_second_run(
    tmp_path: Path, run, fixtures: Path
) -> None:
    db = str(tmp_path / "x.db")
    projects = str(fixtures / "claude-code" / "projects")
    r = run("--db", db, "import", "claude-code", projects)
    assert r.code == 0
    assert r.out.splitlines()[0] == (
        "claude-code: 4 file(s), 40 record(s) read, 31 message(s) added, 1 line(s) skipped, "
        "0 error(s)"
    )
    assert "skipped line 32: invalid JSON" in r.out and "file-history-snapshot ×1" in r.out
    r = run("--db", db, "import", "claude-code", projects, "--json")
    report = r.json()
    assert (r.code, report["added"], report["records"]) == (0, 0, 0)
    assert {f["status"] for f in report["files"]} == {"unchanged"}
    r = run("--db", db, "thread", "list")
    assert "claude-code:7f3c2a10-5b6d-4e8f-9a01-23456789abcd  generations=2 messages=22" in r.out


def test_import_json_lists_skipped_lines_and_errors(tmp_path: Path, run, fixtures: Path) -> None:
    db = str(tmp_path / "x.db")
    codex = fixtures / "codex" / "sessions"
    r = run("--db", db, "import", "codex", str(codex), str(tmp_path / "gone.jsonl"), "--json")
    report = r.json()
    assert r.code == 1  # a file failed; the others were imported
    assert [f["status"] for f in report["files"]] == ["new", "new", "error"]
    assert report["files"][1]["skipped"] == [
        {"line": 25, "reason": "invalid JSON: Expecting value (column 1)"}
    ]
    assert report["errors"] == 1 and report["added"] == 22


def test_import_of_a_file_that_is_not_a_transcript_exits_1(tmp_path: Path, run) -> None:
    db = str(tmp_path / "x.db")
    r = run("--db", db, "import", "claude-code", str(tmp_path / "does-not-exist.jsonl"))
    assert r.code == 1 and "1 error(s)" in r.out


def test_import_openai_needs_paths(tmp_path: Path, run) -> None:
    r = run("--db", str(tmp_path / "x.db"), "import", "openai")
    assert r.code == 2 and "no default location" in r.error_line
    j = run("--db", str(tmp_path / "x.db"), "import", "openai", "--json")
    assert j.json() == {
        "error": "OpenAI-format chats have no default location; name the files",
        "code": 2,
    }


def test_import_watch_resyncs_until_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run, fixtures: Path
) -> None:
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", sleep)
    chat = str(fixtures / "openai" / "chat.json")
    r = run("--db", str(tmp_path / "x.db"), "import", "openai", chat, "--watch", "--json")
    assert r.code == 130 and sleeps == [5.0, 5.0]
    documents = [json.loads(line) for line in r.out.splitlines()]
    assert [d["added"] for d in documents] == [7, 0]


def test_import_watch_text_prints_only_syncs_that_changed_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run, fixtures: Path
) -> None:
    chat = tmp_path / "chat.json"
    shutil.copy(fixtures / "openai" / "chat.json", chat)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            chat.write_text(chat.read_text(encoding="utf-8").replace("Oslo", "Bergen"), "utf-8")
        if len(sleeps) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", sleep)
    r = run("--db", str(tmp_path / "x.db"), "import", "openai", str(chat), "--watch")
    assert r.code == 130
    totals = [line for line in r.out.splitlines() if line.startswith("openai:")]
    assert [line.split(", ")[2] for line in totals] == ["7 message(s) added", "4 message(s) added"]
