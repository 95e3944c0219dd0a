"""The real CLI through click's runner (and one real subprocess for --version)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from recallbox.cli import cli


def run(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), input=input, obj={})
    return result.exit_code, result.output


def test_init_append_show_doctor(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    code, out = run("--db", db, "init", "--json")
    assert code == 0 and json.loads(out)["schema_version"] >= 1
    code, out = run("--db", db, "append", "ops", "user", "deploy billing", "--json")
    assert code == 0
    message = json.loads(out)
    assert message["content"] == "deploy billing" and message["role"] == "user"
    code, out = run("--db", db, "append", "ops", "tool", "--tool-call-id", "c1", input="from stdin")
    assert code == 0 and out.strip().startswith("m_")
    code, out = run("--db", db, "thread", "show", "ops", "--json")
    shown = json.loads(out)
    assert [m["content"] for m in shown["messages"]] == ["deploy billing", "from stdin"]
    assert shown["messages"][1]["tool_call_id"] == "c1"
    code, out = run("--db", db, "thread", "show", "ops")
    assert code == 0 and "generation 1" in out and "deploy billing" in out
    code, out = run("--db", db, "thread", "list")
    assert code == 0 and "ops" in out and "messages=2" in out
    code, out = run("--db", db, "doctor", "--json")
    assert code == 0 and json.loads(out)["healthy"] is True


def test_db_from_environment_and_home(tmp_path: Path, tmp_home: Path, monkeypatch) -> None:
    code, _ = run("append", "t", "user", "hello")
    assert code == 0 and (tmp_home / "recallbox.db").exists()
    other = tmp_path / "env.db"
    monkeypatch.setenv("RECALLBOX_DB", str(other))
    code, _ = run("append", "t", "user", "hello")
    assert code == 0 and other.exists()


def test_exit_codes(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    code, out = run("--db", db, "thread", "show", "missing")
    assert code == 1 and "unknown channel" in out
    code, _ = run("--db", db, "append", "t", "robot", "x")
    assert code == 2
    code, out = run("--db", db, "append", "t", "user", "x", "--metadata", "{bad")
    assert code == 2 and "not valid JSON" in out
    code, _ = run("--db", db, "no-such-command")
    assert code == 2


def test_doctor_exit_one_when_unhealthy(tmp_path: Path) -> None:
    import recallbox

    db = tmp_path / "x.db"
    with recallbox.open(db) as box:
        box.append("t", "user", "alpha beta")
        box.store.pool.connection().execute("DROP TRIGGER messages_fts_ai")
    code, out = run("--db", str(db), "doctor")
    assert code == 1 and "UNHEALTHY" in out
    code, out = run("--db", str(db), "doctor", "--repair")
    assert code == 0 and "healthy" in out


def test_demo_runs_on_a_fresh_path(tmp_path: Path) -> None:
    db = tmp_path / "demo" / "demo.db"
    code, out = run("demo", "--db", str(db), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["thread"]["generation_count"] == 2
    assert data["indexes_healthy"] is True
    assert set(data["notes"]) == {"agent-memory.md", "deploy-runbook.md"}
    code, out = run("demo", "--db", str(db))
    assert code == 1 and "fresh database" in out


def test_version_is_fast_and_light() -> None:
    code = (
        "import sys; from recallbox.cli import main; sys.argv=['recallbox','--version'];\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('apsw', 'rich', 'mcp', 'onnxruntime') if m in sys.modules]\n"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "0.1.0" in out.stdout
    assert "HEAVY []" in out.stdout


FIXTURES = Path(__file__).parent / "importers" / "fixtures"


def test_import_reports_then_adds_nothing_on_the_second_run(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    projects = str(FIXTURES / "claude-code" / "projects")
    code, out = run("--db", db, "import", "claude-code", projects)
    assert code == 0
    assert out.splitlines()[0] == (
        "claude-code: 4 file(s), 40 record(s) read, 31 message(s) added, 1 line(s) skipped, "
        "0 error(s)"
    )
    assert "skipped line 32: invalid JSON" in out and "file-history-snapshot ×1" in out
    code, out = run("--db", db, "import", "claude-code", projects, "--json")
    report = json.loads(out)
    assert (code, report["added"], report["records"]) == (0, 0, 0)
    assert {f["status"] for f in report["files"]} == {"unchanged"}
    code, out = run("--db", db, "thread", "list")
    assert "claude-code:7f3c2a10-5b6d-4e8f-9a01-23456789abcd  generations=2 messages=22" in out


def test_import_json_lists_skipped_lines_and_errors(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    codex = FIXTURES / "codex" / "sessions"
    code, out = run(
        "--db", db, "import", "codex", str(codex), str(tmp_path / "gone.jsonl"), "--json"
    )
    report = json.loads(out)
    assert code == 1  # a file failed; the others were imported
    assert [f["status"] for f in report["files"]] == ["new", "new", "error"]
    assert report["files"][1]["skipped"] == [
        {"line": 25, "reason": "invalid JSON: Expecting value (column 1)"}
    ]
    assert report["errors"] == 1 and report["added"] == 22


def test_import_openai_needs_paths(tmp_path: Path) -> None:
    code, out = run("--db", str(tmp_path / "x.db"), "import", "openai")
    assert code == 2 and "no default location" in out


def test_import_watch_resyncs_until_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", sleep)
    chat = str(FIXTURES / "openai" / "chat.json")
    code, out = run("--db", str(tmp_path / "x.db"), "import", "openai", chat, "--watch", "--json")
    assert code == 130 and sleeps == [5.0, 5.0]
    documents = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert [d["added"] for d in documents] == [7, 0]


def test_search_and_embed(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    run("--db", db, "append", "ops", "user", "deploy the billing service to staging")
    run("--db", db, "append", "ops", "user", "lunch plans")
    code, out = run("--db", db, "search", "deploy billing", "--json")
    assert code == 0
    (hit,) = json.loads(out)
    assert hit["text"] == "deploy the billing service to staging" and hit["vector"] is None
    code, out = run("--db", db, "search", "deploy", "--channel", "ops", "--limit", "1")
    assert code == 0 and out.startswith("1. ") and "deploy the billing" in out
    code, out = run("--db", db, "search", "nothing here")
    assert (code, out.strip()) == (0, "no hits")
    code, out = run("--db", db, "embed", "--all", "--embedder", "hash", "--json")
    assert code == 0 and json.loads(out)["embedded"] == 2
    code, out = run("--db", db, "search", "deploy", "--embedder", "hash", "--json")
    assert code == 0 and json.loads(out)[0]["vector"] is not None
    code, out = run("--db", db, "embed", "--lazy", "--embedder", "hash")
    assert code == 0 and "embedded 0 message(s)" in out


def test_search_errors_exit_1_and_usage_errors_exit_2(tmp_path: Path) -> None:
    db = str(tmp_path / "e.db")
    code, out = run("--db", db, "search", "x", "--domain", "memory")
    assert code == 1 and "not available yet" in out
    code, _ = run("--db", db, "embed")
    assert code == 2
    run("--db", db, "append", "ops", "user", "deploy")
    run("--db", db, "embed", "--all", "--embedder", "hash")
    code, out = run("--db", db, "search", "deploy", "--embedder", "minilm")
    assert code == 1 and "recallbox embed --rebuild" in out
    code, out = run("--db", db, "embed", "--rebuild", "--embedder", "hash")
    assert code == 0 and "embedded 0 message(s)" in out


def test_search_transcripts_from_the_cli(tmp_path: Path) -> None:
    db = str(tmp_path / "x.db")
    run("--db", db, "import", "claude-code", str(FIXTURES / "claude-code" / "projects"))
    code, out = run("--db", db, "search", "README", "--domain", "transcripts", "--json")
    hits = json.loads(out)
    assert code == 0 and [h["domain"] for h in hits] == ["transcripts"]
    assert hits[0]["source"].endswith("7f3c2a10-5b6d-4e8f-9a01-23456789abcd.jsonl")
    assert hits[0]["lines"] == [21, 29]


def test_import_watch_text_prints_only_syncs_that_changed_something(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = tmp_path / "chat.json"
    shutil.copy(FIXTURES / "openai" / "chat.json", chat)
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 2:
            chat.write_text(chat.read_text(encoding="utf-8").replace("Oslo", "Bergen"), "utf-8")
        if len(sleeps) == 4:
            raise KeyboardInterrupt

    monkeypatch.setattr("time.sleep", sleep)
    code, out = run("--db", str(tmp_path / "x.db"), "import", "openai", str(chat), "--watch")
    assert code == 130
    totals = [line for line in out.splitlines() if line.startswith("openai:")]
    assert [line.split(", ")[2] for line in totals] == ["7 message(s) added", "4 message(s) added"]
