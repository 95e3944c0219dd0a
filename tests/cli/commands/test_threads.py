"""``init``, ``append``, ``thread list|show`` and ``compact`` through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import recallbox
from backends import DbLocation


def test_init_append_show_doctor(db_location: DbLocation, tmp_path: Path, run) -> None:
    db = str(db_location("x"))
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


def test_db_from_environment_and_home(
    db_location: DbLocation, tmp_path: Path, tmp_home: Path, monkeypatch, run
) -> None:
    assert run("append", "t", "user", "hello").code == 0
    assert (tmp_home / "recallbox.db").exists()
    other = db_location("env")
    monkeypatch.setenv("RECALLBOX_DB", str(other))
    assert run("append", "t", "user", "hello from the environment").code == 0
    with recallbox.open(other) as box:
        assert [m.content for m in box.messages("t")] == ["hello from the environment"]


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


def quarantined_db(db_location: DbLocation) -> str:
    db = db_location("q")
    with recallbox.open(db) as box:
        box.append("open:1", "user", "the deploy went fine")
        box.append_many(
            "secret:1",
            [{"role": "user", "content": "the vault password is hunter2-unique"}] * 3,
        )
        box.quarantine("secret:1")
        box.exclude_source("private-notes.md")
    return str(db)


def test_thread_show_of_a_quarantined_thread_shows_metadata_never_text(
    db_location: DbLocation, run
) -> None:
    """Fix: `thread show` of a quarantined thread prints a notice instead of its messages."""
    db = quarantined_db(db_location)
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


def test_thread_list_marks_quarantined_threads_and_excluded_sources(
    db_location: DbLocation, run
) -> None:
    """Fix: `thread list` marks excluded sources as well as quarantined threads."""
    db = quarantined_db(db_location)
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


def test_threads_of_an_excluded_source_are_marked_and_never_shown(
    db_location: DbLocation, tmp_path: Path, run, fixtures: Path
) -> None:
    """Fix (#17 leftover): `thread list` marks each thread whose source file is excluded
    (text and --json), and `thread show` of one prints its metadata and "excluded source",
    never its text."""
    db = str(db_location("x"))
    session = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
    run("--db", db, "import", "claude-code", str(fixtures / "claude-code" / "projects"))
    run("--db", db, "policy", "exclude", f"{session}.jsonl")
    channel = f"claude-code:{session}"
    listed = run("--db", db, "thread", "list").out.splitlines()
    assert any(line.startswith(f"{channel} [excluded source]  ") for line in listed)
    assert any(line.startswith(f"{channel}/agent-b7e1  ") for line in listed)  # another file
    data = {t["channel"]: t for t in run("--db", db, "thread", "list", "--json").json()}
    assert data[channel]["excluded"] is True and data[channel]["quarantined"] is False
    assert data[f"{channel}/agent-b7e1"]["excluded"] is False
    r = run("--db", db, "thread", "show", channel)
    count = data[channel]["message_count"]
    assert r.code == 0 and r.out.splitlines()[1] == (
        f"excluded source — {count} messages hidden (`recallbox policy show` lists the "
        "exclusions; `recallbox policy include NAME` lifts one)"
    )
    assert "README" not in r.out and len(r.out.splitlines()) == 2
    shown = run("--db", db, "thread", "show", channel, "--json").json()
    assert shown["messages"] == [] and shown["hidden_messages"] == count
    assert shown["thread"]["excluded"] is True
    run("--db", db, "policy", "include", f"{session}.jsonl")
    assert "README" in run("--db", db, "thread", "show", channel, "--width", "5000").out


def test_a_channel_blank_after_normalisation_is_refused_everywhere(db: str, run) -> None:
    """Fix (#17 leftover): `create_thread("\\x08")` made channel " ", which `append` then
    refused; one rule now refuses it in both."""
    with recallbox.open(db) as box:
        for verb in (box.create_thread, box.quarantine, lambda c: box.append(c, "user", "x")):
            with pytest.raises(recallbox.InvalidArgument, match="non-empty"):
                verb("\x08")
        assert box.threads() == []
        assert box.create_thread("a\x08b").channel == "a b"
    r = run("--db", db, "append", "\x08\x07", "user", "hi", "--json")
    assert r.code == 2 and "channel must be a non-empty string" in r.json()["error"]


def test_thread_list_json_carries_last_activity(db: str, run) -> None:
    """Fix (#17 item 9, DESIGN §2): a thread's last activity is its newest message's own time,
    not the time it was appended or imported."""
    run("--db", db, "append", "old", "user", "x", "--json")
    with recallbox.open(db) as box:
        box.append_many(
            "older", [{"role": "user", "content": "y", "created_at": "2024-01-02T03:04:05Z"}]
        )
    data = {t["channel"]: t for t in run("--db", db, "thread", "list", "--json").json()}
    assert data["older"]["last_activity"] == "2024-01-02T03:04:05+00:00"
    assert data["old"]["last_activity"] > data["older"]["last_activity"]
