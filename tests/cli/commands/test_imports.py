"""``import`` through the real CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from backends import DbLocation


def test_import_reports_then_adds_nothing_on_the_second_run(
    db_location: DbLocation, tmp_path: Path, run, fixtures: Path
) -> None:
    db = str(db_location("x"))
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


def test_import_json_lists_skipped_lines_and_errors(
    db_location: DbLocation, tmp_path: Path, run, fixtures: Path
) -> None:
    db = str(db_location("x"))
    codex = fixtures / "codex" / "sessions"
    r = run("--db", db, "import", "codex", str(codex), str(tmp_path / "gone.jsonl"), "--json")
    report = r.json()
    assert r.code == 1  # a file failed; the others were imported
    assert [f["status"] for f in report["files"]] == ["new", "new", "error"]
    assert report["files"][1]["skipped"] == [
        {"line": 25, "reason": "invalid JSON: Expecting value (column 1)"}
    ]
    assert report["errors"] == 1 and report["added"] == 22


def test_import_of_a_file_that_is_not_a_transcript_exits_1(
    db_location: DbLocation, tmp_path: Path, run
) -> None:
    db = str(db_location("x"))
    r = run("--db", db, "import", "claude-code", str(tmp_path / "does-not-exist.jsonl"))
    assert r.code == 1 and "1 error(s)" in r.out


def test_import_openai_needs_paths(db_location: DbLocation, tmp_path: Path, run) -> None:
    r = run("--db", str(db_location("x")), "import", "openai")
    assert r.code == 2 and "no default location" in r.error_line
    j = run("--db", str(db_location("x")), "import", "openai", "--json")
    assert j.json() == {
        "error": "OpenAI-format chats have no default location; name the files",
        "code": 2,
    }


def test_import_watch_json_prints_only_syncs_that_changed_something(
    db_location: DbLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run, fixtures: Path
) -> None:
    """Fix (#17 item 9): `import --watch --json` printed a line on every check (1 208
    "unchanged" lines in 10 minutes); it prints the first sync and then changes only."""
    chat = tmp_path / "chat.json"
    shutil.copy(fixtures / "openai" / "chat.json", chat)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 3:
            chat.write_text(chat.read_text(encoding="utf-8").replace("Oslo", "Bergen"), "utf-8")
        if len(sleeps) == 6:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", sleep)
    r = run("--db", str(db_location("x")), "import", "openai", str(chat), "--watch", "--json")
    assert r.code == 130 and sleeps == [5.0] * 6
    documents = [json.loads(line) for line in r.out.splitlines()]
    assert [(d["added"], d["files"][0]["status"]) for d in documents] == [
        (7, "new"),
        (4, "resynced"),
    ]


def test_import_watch_text_prints_only_syncs_that_changed_something(
    db_location: DbLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run, fixtures: Path
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
    r = run("--db", str(db_location("x")), "import", "openai", str(chat), "--watch")
    assert r.code == 130
    totals = [line for line in r.out.splitlines() if line.startswith("openai:")]
    assert [line.split(", ")[2] for line in totals] == ["7 message(s) added", "4 message(s) added"]


def test_import_with_nothing_to_find_says_where_it_looked(
    db_location: DbLocation, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    """Fix (#17 item 9): `import claude-code` without ~/.claude/projects said "0 file(s)"
    and nothing else."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
    db = str(db_location("x"))
    r = run("--db", db, "import", "claude-code")
    assert r.code == 0 and r.out.splitlines()[1] == (
        f"  no Claude Code transcripts: {tmp_path / 'no-claude' / 'projects'} does not exist; "
        "set CLAUDE_CONFIG_DIR, or name the files: recallbox import claude-code PATH"
    )
    (tmp_path / "no-claude" / "projects").mkdir(parents=True)
    assert "projects has no session files" in run("--db", db, "import", "claude-code").out
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "no-codex"))
    hint = run("--db", db, "import", "codex", "--json").json()["hint"]
    assert hint.startswith("no Codex rollouts (rollout-*.jsonl) in ")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert (
        f"no codex transcripts under {empty}" in run("--db", db, "import", "codex", str(empty)).out
    )


@pytest.mark.parametrize(
    ("given", "source", "looks_like"),
    [
        ("claude-code", "codex/sessions/2025/10/29", "a Codex rollout"),
        ("codex", "claude-code/projects/-home-dev-app/7f3c2a10-5b6d-4e8f-9a01-23456789abcd.jsonl",
         "a Claude Code session"),
    ],
)  # fmt: skip
def test_a_transcript_of_another_format_is_refused_with_a_hint(
    db_location: DbLocation,
    tmp_path: Path,
    run,
    fixtures: Path,
    given: str,
    source: str,
    looks_like: str,
) -> None:
    """Fix (#17 item 9): a Codex rollout imported as claude-code said "+0 message(s)"; now it
    is refused with "wrong format?", nothing of it is kept, and the right format works."""
    db = str(db_location("x"))
    src = fixtures / source
    path = src if src.is_file() else sorted(src.glob("*.jsonl"))[0]
    target = tmp_path / ("rollout-x.jsonl" if given == "codex" else "session.jsonl")
    shutil.copy(path, target)
    r = run("--db", db, "import", given, str(target), "--json")
    right = "codex" if given == "claude-code" else "claude-code"
    assert r.code == 1 and r.json()["files"][0]["error"] == (
        f"wrong format? this looks like {looks_like} (try `recallbox import {right} {target}`)"
    )
    assert run("--db", db, "thread", "list").out.strip() == "no threads yet"
    r = run("--db", db, "import", right, str(target))
    assert r.code == 0 and "0 error(s)" in r.out.splitlines()[0] and "+0 message" not in r.out


def test_a_copied_session_is_one_thread_and_its_hits_appear_once(
    db_location: DbLocation, tmp_path: Path, run, fixtures: Path
) -> None:
    """Fix (#17 item 9): a session copied to another file name became a second thread, so
    every hit appeared twice; threads are keyed by the session id inside the file."""
    db = str(db_location("x"))
    projects = fixtures / "claude-code" / "projects"
    session = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
    backup = tmp_path / "backup" / "renamed.jsonl"
    backup.parent.mkdir()
    shutil.copy(projects / "-home-dev-app" / f"{session}.jsonl", backup)
    run("--db", db, "import", "claude-code", str(projects))
    before = run("--db", db, "thread", "list", "--json").json()
    r = run("--db", db, "import", "claude-code", str(backup), "--json")
    [file] = r.json()["files"]
    assert r.code == 0 and file["added"] == 0 and file["duplicates"] == 24
    assert file["channels"][0] == f"claude-code:{session}"
    assert run("--db", db, "thread", "list", "--json").json() == before
    text = run("--db", db, "import", "claude-code", str(backup)).out
    assert "unchanged" in text
    hits = run("--db", db, "search-memory", "README").out
    assert hits.count("[message_id=") == 2  # as before the copy was imported
