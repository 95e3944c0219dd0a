"""The thread-search commands through click's runner: search-memory, read, compact, demo."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from recallbox.cli import cli


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input, obj={})
    return result.exit_code, result.output


def test_compact_search_read(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    calls = json.dumps([{"id": "c1", "name": "bash", "arguments": {"command": "ssh ops@web-1"}}])
    code, call_id = run(
        "--db", db, "append", "ops", "assistant", "logging in", "--tool-calls", calls
    )
    assert code == 0
    call_id = call_id.strip()
    run("--db", db, "append", "ops", "tool", "welcome to web-1", "--tool-call-id", "c1")
    summary = tmp_path / "summary.md"
    summary.write_text("Logged in to web-1.", encoding="utf-8")
    code, out = run("--db", db, "compact", "ops", "--summary-file", str(summary))
    assert code == 0 and re.fullmatch(r"ops: generation 2 opened \(g_[0-9a-f]+\)\n", out)
    code, out = run("--db", db, "compact", "ops", "--summary-file", "-", "--json", input="again")
    assert code == 0 and json.loads(out)["number"] == 3

    code, out = run("--db", db, "search-memory", "ssh ops@web-1", "--channel", "ops")
    assert code == 0 and f"[message_id={call_id} generation=1 role=assistant" in out
    code, out = run("--db", db, "search-memory", "web-1", "--json")
    data = json.loads(out)
    assert code == 0 and data["channel"] is None and call_id in data["result"]

    code, out = run("--db", db, "read", call_id)
    assert code == 0 and out.startswith(f"[message_id={call_id} ") and "ssh ops@web-1" in out
    code, out = run("--db", db, "read", call_id, "--view", "model", "--json")
    assert code == 0 and "view=model]" in json.loads(out)["text"]
    code, out = run("--db", db, "read", call_id, "--offset", "5")
    assert code == 0 and not out.startswith("[message_id")


def test_read_paging_and_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    _, mid = run("--db", db, "append", "ops", "tool", "y" * 30_000)
    mid = mid.strip()
    code, out = run("--db", db, "read", mid)
    next_offset = re.search(r"Continue with read_message\(m_\w+, offset=(\d+)\)\.", out)
    assert code == 0 and next_offset
    code, out = run("--db", db, "read", mid, "--offset", next_offset.group(1))
    assert code == 0 and "Continue with" in out
    code, out = run("--db", db, "read", "m_0000000000000000")
    assert code == 1 and "unknown message id" in out
    code, _ = run("--db", db, "read", mid, "--view", "raw")
    assert code == 2
    code, out = run("--db", db, "read", mid, "--offset", "-3")
    assert code == 1 and "non-negative" in out
    code, out = run("--db", db, "compact", "missing", "--summary-file", "-", input="s")
    assert code == 1 and "unknown channel" in out


def test_demo_searches_the_compacted_thread(tmp_path: Path) -> None:
    code, out = run("demo", "--db", str(tmp_path / "d.db"))
    assert code == 0
    assert "full-text indexes: healthy" in out  # the original lines are still there
    assert "search_memory('pg-replica-1', channel='demo:deploy-staging')" in out
    assert "FATAL could not connect to server: connection refused (host pg-replica-1" in out
    code, out = run("demo", "--db", str(tmp_path / "e.db"), "--json")
    found = json.loads(out)["search_memory"]
    assert found["query"] == "pg-replica-1" and "generation=1 role=tool" in found["result"]
