"""``search``, ``search-memory``, ``read`` and ``embed`` through the real CLI."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from recallbox import THREAD_SEARCH_MAX_CHARS
from recallbox.domains.message_view import MESSAGE_HEADER

CLI_CONTINUE = re.compile(r"^Continue with `recallbox read (m_[0-9a-f]+) --offset (\d+)`\.$")


def test_search_and_embed(db: str, run) -> None:
    run("--db", db, "append", "ops", "user", "deploy the billing service to staging")
    run("--db", db, "append", "ops", "user", "lunch plans")
    r = run("--db", db, "search", "deploy billing", "--json")
    (hit,) = r.json()
    assert r.code == 0
    assert hit["text"] == "deploy the billing service to staging" and hit["vector"] is None
    r = run("--db", db, "search", "deploy", "--channel", "ops", "--limit", "1")
    assert r.code == 0 and r.out.startswith("1. ") and "deploy the billing" in r.out
    assert run("--db", db, "search", "nothing here").out.strip() == "no hits"
    r = run("--db", db, "embed", "--all", "--embedder", "hash", "--json")
    assert r.code == 0 and r.json()["embedded"] == 2
    r = run("--db", db, "search", "deploy", "--embedder", "hash", "--json")
    assert r.code == 0 and r.json()[0]["vector"] is not None
    r = run("--db", db, "embed", "--lazy", "--embedder", "hash")
    assert r.code == 0 and "embedded 0 message(s)" in r.out


def test_embed_progress_never_reaches_stdout(db: str, run) -> None:
    run("--db", db, "append", "ops", "user", "deploy")
    r = run("--db", db, "embed", "--all", "--embedder", "hash")
    assert r.code == 0 and re.fullmatch(r"embedded 1 message\(s\) with \S+\n", r.out)


def test_search_runtime_errors_exit_1(db: str, run) -> None:
    run("--db", db, "append", "ops", "user", "deploy")
    run("--db", db, "embed", "--all", "--embedder", "hash")
    r = run("--db", db, "search", "deploy", "--embedder", "minilm")
    assert r.code == 1 and "recallbox embed --rebuild" in r.error_line
    r = run("--db", db, "embed", "--rebuild", "--embedder", "hash")
    assert r.code == 0 and "embedded 0 message(s)" in r.out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("search", "x", "--limit", "0"), "0 is not in the range x>=1"),
        (("search", "x", "--domain", "bogus"), "bogus"),
        (("read", "m_0000000000000000", "--offset", "-1"), "-1 is not in the range x>=0"),
        (("read", "m_0000000000000000", "--view", "raw"), "'raw' is not one of"),
        (("embed",), "choose one of --all, --lazy"),
        (("embed", "--all", "--batch-size", "0"), "0 is not in the range x>=1"),
    ],
)
def test_usage_errors_exit_2(db: str, run, args: tuple[str, ...], says: str) -> None:
    """Fix: bad values exit 2 (not 1), with one line; --json prints the error object."""
    r = run("--db", db, *args)
    assert r.code == 2 and says in r.error_line
    j = run("--db", db, *args, "--json")
    assert j.code == 2 and says in j.json()["error"] and j.json()["code"] == 2


def test_search_memory_and_read(db: str, run) -> None:
    calls = json.dumps([{"id": "c1", "name": "bash", "arguments": {"command": "ssh ops@web-1"}}])
    call_id = run("--db", db, "append", "ops", "assistant", "in", "--tool-calls", calls).out.strip()
    run("--db", db, "append", "ops", "tool", "welcome to web-1", "--tool-call-id", "c1")
    run("--db", db, "compact", "ops", "--summary", "Logged in to web-1.")
    r = run("--db", db, "search-memory", "ssh ops@web-1", "--channel", "ops")
    assert r.code == 0 and f"[message_id={call_id} generation=1 role=assistant" in r.out
    data = run("--db", db, "search-memory", "web-1", "--json").json()
    assert data["channel"] is None and call_id in data["result"]
    r = run("--db", db, "read", call_id)
    assert r.code == 0 and r.out.startswith(f"{MESSAGE_HEADER}\n[message_id={call_id} ")
    assert "ssh ops@web-1" in r.out
    data = run("--db", db, "read", call_id, "--view", "model", "--json").json()
    assert "view=model]" in data["text"] and data["next_offset"] is None
    assert data["total_chars"] == len(data["text"]) - len(MESSAGE_HEADER) - 1
    assert data["offset"] == 0
    r = run("--db", db, "read", call_id, "--offset", "5")
    assert r.code == 0 and not r.out.split("\n", 1)[1].startswith("[message_id")


def test_read_pages_end_with_the_cli_command(db: str, run) -> None:
    """Fix: `read` says `recallbox read ID --offset N`; `read --json` has `next_offset`."""
    mid = run("--db", db, "append", "ops", "tool", "y" * 30_000).out.strip()
    text, offset, pages = "", 0, 0
    while True:
        r = run("--db", db, "read", mid, "--offset", str(offset))
        body, _, last = r.out.removesuffix("\n").rpartition("\n")
        assert r.code == 0 and "read_message(" not in r.out
        page = run("--db", db, "read", mid, "--offset", str(offset), "--json").json()
        assert len(page["text"]) <= THREAD_SEARCH_MAX_CHARS and page["offset"] == offset
        pages += 1
        found = CLI_CONTINUE.match(last)
        assert page["text"].startswith(MESSAGE_HEADER + "\n")  # not counted by offset
        if found is None:
            assert page["next_offset"] is None and r.out == page["text"] + "\n"
            text += page["text"][len(MESSAGE_HEADER) + 1 :]
            break
        assert found.group(1) == mid and int(found.group(2)) == page["next_offset"]
        assert body == page["text"]
        text += page["text"][len(MESSAGE_HEADER) + 1 :]
        offset = page["next_offset"]
    assert pages == 3 and len(text) == page["total_chars"] and text.endswith("y" * 30_000)


def test_read_errors(db: str, run) -> None:
    mid = run("--db", db, "append", "ops", "user", "short").out.strip()
    r = run("--db", db, "read", "m_0000000000000000")
    assert r.code == 1 and "unknown message id" in r.error_line
    r = run("--db", db, "read", mid, "--offset", "10000", "--json")
    assert r.code == 2 and "past the end" in r.json()["error"]


def test_search_transcripts_from_the_cli(tmp_path: Path, run, fixtures: Path) -> None:
    db = str(tmp_path / "x.db")
    run("--db", db, "import", "claude-code", str(fixtures / "claude-code" / "projects"))
    r = run("--db", db, "search", "README", "--domain", "transcripts", "--json")
    hits = r.json()
    assert r.code == 0 and [h["domain"] for h in hits] == ["transcripts"]
    assert hits[0]["source"].endswith("7f3c2a10-5b6d-4e8f-9a01-23456789abcd.jsonl")
    assert hits[0]["lines"] == [21, 29]
