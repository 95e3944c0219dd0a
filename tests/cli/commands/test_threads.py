"""``init``, ``append``, ``thread list|show`` and ``compact`` through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import recallbox


def test_init_append_show_doctor(tmp_path: Path, run) -> None:
    db = str(tmp_path / "x.db")
    r = run("--db", db, "init", "--json")
    assert r.code == 0 and r.json()["schema_version"] >= 1
    r = run("--db", db, "append", "ops", "user", "deploy billing", "--json")
    message = r.json()
    assert r.code == 0 and message["content"] == "deploy billing" and message["role"] == "user"
    r = run("--db", db, "append", "ops", "tool", "--tool-call-id", "c1", input="from stdin")
    assert r.code == 0 and r.out.strip().startswith("m_")
    shown = run("--db", db, "thread", "show", "ops", "--json").json()
    assert [m["content"] for m in shown["messages"]] == ["deploy billing", "from stdin"]
    assert shown["messages"][1]["tool_call_id"] == "c1" and shown["hidden_messages"] == 0
    r = run("--db", db, "thread", "show", "ops")
    assert r.code == 0 and "generation 1" in r.out and "deploy billing" in r.out
    r = run("--db", db, "thread", "list")
    assert r.code == 0 and "ops" in r.out and "messages=2" in r.out
    r = run("--db", db, "doctor", "--json")
    assert r.code == 0 and r.json()["healthy"] is True


def test_init_says_it_created_the_database_on_stderr(tmp_path: Path, run) -> None:
    db = tmp_path / "new" / "x.db"
    r = run("init", "--db", str(db))
    assert r.code == 0 and db.exists()
    assert r.err == f"recallbox: created database {db}\n"
    assert run("init", "--db", str(db)).err == ""  # the second time: nothing created


def test_db_from_environment_and_home(tmp_path: Path, tmp_home: Path, monkeypatch, run) -> None:
    assert run("append", "t", "user", "hello").code == 0
    assert (tmp_home / "recallbox.db").exists()
    other = tmp_path / "env.db"
    monkeypatch.setenv("RECALLBOX_DB", str(other))
    assert run("append", "t", "user", "hello").code == 0 and other.exists()


def test_thread_show_of_an_unknown_channel_exits_1(db: str, run) -> None:
    r = run("--db", db, "thread", "show", "missing")
    assert r.code == 1 and "unknown channel" in r.error_line


@pytest.mark.parametrize(
    "args",
    [
        ("append", "t", "robot", "x"),
        ("append", "", "user", "hi"),
        ("append", "t", "user", "x", "--metadata", "{bad"),
        ("append", "t", "user", "x", "--metadata", "[1,2]"),
        ("append", "t", "user", "x", "--tool-calls", '{"id": 1}'),
        ("thread", "show", "t", "--generation", "0"),
        ("no-such-command",),
    ],
)
def test_usage_errors_exit_2_with_one_line(db: str, run, args: tuple[str, ...]) -> None:
    """Fix: an invalid command-line value is a usage error (exit 2), as the README says."""
    r = run("--db", db, *args)
    assert r.code == 2 and r.out == ""
    assert r.error_line  # exactly one "Error: …" line, no traceback
    j = run("--db", db, *args, "--json")
    assert j.code == 2 and j.json() == {"error": j.json()["error"], "code": 2}
    assert "\n" not in j.json()["error"]


def test_append_bad_json_names_the_option(db: str, run) -> None:
    r = run("--db", db, "append", "t", "user", "x", "--metadata", "{bad")
    assert r.error_line.startswith("--metadata: not valid JSON")
    r = run("--db", db, "append", "t", "user", "x", "--metadata", "[1,2]")
    assert "metadata must be a mapping" in r.error_line


def quarantined_db(tmp_path: Path) -> str:
    db = tmp_path / "q.db"
    with recallbox.open(db) as box:
        box.append("open:1", "user", "the deploy went fine")
        box.append_many(
            "secret:1",
            [{"role": "user", "content": "the vault password is hunter2-unique"}] * 3,
        )
        box.quarantine("secret:1")
        box.exclude_source("private-notes.md")
    return str(db)


def test_thread_show_of_a_quarantined_thread_shows_metadata_never_text(tmp_path: Path, run) -> None:
    """Fix: `thread show` of a quarantined thread prints a notice instead of its messages."""
    db = quarantined_db(tmp_path)
    r = run("--db", db, "thread", "show", "secret:1")
    assert r.code == 0 and "hunter2" not in r.out
    assert r.out.splitlines() == [
        "secret:1",
        "quarantined — 3 messages hidden "
        "(`recallbox policy unquarantine secret:1` shows them again)",
    ]
    data = run("--db", db, "thread", "show", "secret:1", "--json").json()
    assert data["messages"] == [] and data["hidden_messages"] == 3
    assert data["thread"]["quarantined"] is True and "hunter2" not in json.dumps(data)


def test_thread_list_marks_quarantined_threads_and_excluded_sources(tmp_path: Path, run) -> None:
    """Fix: `thread list` marks excluded sources as well as quarantined threads."""
    db = quarantined_db(tmp_path)
    r = run("--db", db, "thread", "list")
    assert r.code == 0
    assert r.out.splitlines() == [
        "open:1  generations=1 messages=1",
        "secret:1 [quarantined]  generations=1 messages=3",
        "excluded sources (their threads and files are hidden from recall): private-notes.md",
    ]
    data = run("--db", db, "thread", "list", "--json").json()
    assert [(t["channel"], t["quarantined"]) for t in data] == [
        ("open:1", False),
        ("secret:1", True),
    ]


def test_compact_with_summary_text_or_file(db: str, tmp_path: Path, run) -> None:
    run("--db", db, "append", "ops", "user", "ssh ops@web-1")
    summary = tmp_path / "summary.md"
    summary.write_text("Logged in to web-1.", encoding="utf-8")
    r = run("--db", db, "compact", "ops", "--summary-file", str(summary))
    assert r.code == 0 and re.fullmatch(r"ops: generation 2 opened \(g_[0-9a-f]+\)\n", r.out)
    r = run("--db", db, "compact", "ops", "--summary", "again", "--json")
    assert r.code == 0 and r.json()["number"] == 3
    r = run("--db", db, "compact", "ops", "--summary-file", "-", input="from stdin")
    assert r.code == 0 and "generation 4" in r.out


def test_compact_needs_exactly_one_summary(db: str, run) -> None:
    for args in ((), ("--summary", "a", "--summary-file", "-")):
        r = run("--db", db, "compact", "ops", *args)
        assert r.code == 2 and "exactly one of --summary or --summary-file" in r.error_line
    r = run("--db", db, "compact", "missing", "--summary", "s")
    assert r.code == 1 and "unknown channel" in r.error_line
