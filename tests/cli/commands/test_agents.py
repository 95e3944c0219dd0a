"""``mcp`` option checks and ``hook claude-code`` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

import recallbox
from backends import DbLocation
from recallbox.cli import cli
from recallbox.cli.commands.agents import http_options
from recallbox.hooks import HOOK_OUTPUT_MAX_CHARS, claude_code_channel
from recallbox.injection import RESUME_HEADER

SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
CLAUDE_HOOK_LIMIT_CHARS = 10_000


@pytest.fixture
def transcript(fixtures: Path) -> Path:
    return fixtures / "claude-code" / "projects" / "-home-dev-app" / f"{SESSION}.jsonl"


def hook(run, db: Path, payload: object):
    return run("--db", str(db), "hook", "claude-code", input=json.dumps(payload))


def test_precompact_imports_and_prints_nothing(
    db_location: DbLocation, tmp_path: Path, run, transcript: Path
) -> None:
    db = db_location("h")
    payload = {
        "hook_event_name": "PreCompact",
        "session_id": SESSION,
        "transcript_path": str(transcript),
    }
    r = hook(run, db, payload)
    assert (r.code, r.out) == (0, "")
    with recallbox.open(db) as box:
        thread = box.thread(claude_code_channel(SESSION))
        assert thread.generation_count == 2 and thread.message_count > 0


def test_session_start_after_compact_tells_the_model_where_to_search(
    db_location: DbLocation, tmp_path: Path, run, transcript: Path
) -> None:
    db = db_location("h")
    payload = {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": SESSION,
        "transcript_path": str(transcript),
    }
    r = hook(run, db, payload)
    channel = f"claude-code:{SESSION}"
    assert r.code == 0 and r.out.startswith(RESUME_HEADER)
    assert f'[checkpoint channel="{channel}"]' in r.out
    assert "search this thread with search_memory(channel, query)" in r.out
    assert len(r.out) <= HOOK_OUTPUT_MAX_CHARS + 1 < CLAUDE_HOOK_LIMIT_CHARS
    with recallbox.open(db) as box:
        tool_ids = [m.id for m in box.messages(channel) if m.role == "tool"]
    assert any(message_id in r.out for message_id in tool_ids)  # evidence ids are listed
    # a second start (resume) imports nothing new and prints the same resume context
    again = hook(run, db, {**payload, "source": "resume"})
    assert (again.code, again.out) == (0, r.out)
    fresh = hook(run, db, {**payload, "source": "startup"})
    assert (fresh.code, fresh.out) == (0, "")


def test_hook_never_blocks_on_bad_input(db_location: DbLocation, tmp_path: Path, run) -> None:
    db = db_location("h")
    r = hook(run, db, ["not", "an", "object"])
    assert (r.code, r.out) == (0, "") and r.err.endswith("not a JSON object\n")
    r = run("--db", str(db), "hook", "claude-code", input="{broken")
    assert r.code == 0 and r.err.startswith("recallbox hook: the hook payload is not valid JSON")
    r = run("--db", str(db), "hook", "claude-code", "--bogus", input="{}")
    assert r.code == 0 and "No such option" in r.err


def test_hook_says_why_nothing_was_imported(db_location: DbLocation, tmp_path: Path, run) -> None:
    """Fix: a payload without transcript_path (or with a missing file) is no longer silent."""
    db = db_location("h")
    r = hook(run, db, {"hook_event_name": "SessionEnd", "session_id": "x"})
    assert (r.code, r.out) == (0, "")
    assert "recallbox hook: the payload has no transcript_path; nothing was imported" in r.err
    gone = tmp_path / "gone.jsonl"
    r = hook(run, db, {"hook_event_name": "SessionEnd", "transcript_path": str(gone)})
    assert r.code == 0 and f"recallbox hook: could not import {gone}:" in r.err


def test_hook_on_a_bad_database_reports_on_stderr_and_exits_0(
    bad_db: tuple[str, str], run, transcript: Path
) -> None:
    """Fix: a bad database makes the hook print one line on stderr and exit 0."""
    bad, says = bad_db
    r = hook(run, bad, {"hook_event_name": "PreCompact", "transcript_path": str(transcript)})
    assert (r.code, r.out) == (0, "")
    assert r.err.startswith("recallbox hook: ") and says in r.err
    assert len(r.err.splitlines()) == 1


def test_quarantined_session_prints_nothing(
    db_location: DbLocation, tmp_path: Path, run, transcript: Path
) -> None:
    db = db_location("h")
    with recallbox.open(db) as box:
        box.quarantine(f"claude-code:{SESSION}")
    payload = {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": SESSION,
        "transcript_path": str(transcript),
    }
    r = hook(run, db, payload)
    assert (r.code, r.out) == (0, "")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--http", "--port", "99999"), "99999 is not in the range 1<=x<=65535"),
        (("--http", "--port", "0"), "0 is not in the range"),
        (("--host", "127.0.0.1"), "--host needs --http"),
        (("--port", "9000"), "--port needs --http"),
        (("--allow-remote",), "--allow-remote needs --http"),
        (("--http", "--host", "0.0.0.0"), "add --allow-remote"),
        (("--http", "--host", "192.168.1.20"), "add --allow-remote"),
    ],
)
def test_mcp_option_errors_are_usage_errors(db: str, run, args: tuple[str, ...], says: str) -> None:
    """Fix: `--port 99999` and `--host` without `--http` exit 2 with one line."""
    r = run("mcp", "--db", db, *args)
    assert (r.code, r.out) == (2, "") and says in r.error_line


def test_mcp_on_a_bad_database_fails_before_serving(bad_db: tuple[str, str], run_script) -> None:
    """Fix: `recallbox --db x.db mcp` on a bad file is one line and exit 1, not a dropped
    connection and a 106-line ExceptionGroup."""
    bad, says = bad_db
    r = run_script("--db", bad, "mcp", input="")
    assert (r.code, r.out) == (1, "")
    assert says in r.error_line
    assert len(r.err.splitlines()) == 1


def test_mcp_creates_a_missing_database_and_logs_it(tmp_path: Path, run_script) -> None:
    db = tmp_path / "new" / "agent.db"
    r = run_script("mcp", "--db", str(db), input="")  # stdin closes: the server ends at once
    assert r.code == 0 and r.out == "" and db.exists()
    assert f"recallbox: created database {db}" in r.err.splitlines()


def test_mcp_on_a_port_in_use_is_one_error_and_exit_1(db: str, run_script) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = run_script("mcp", "--db", db, "--http", "--port", str(port))
    assert (r.code, r.out) == (1, "")
    assert r.error_line == (
        f"the MCP server could not listen on 127.0.0.1:{port} "
        "(the reason is logged above; pick another --port)"
    )


def test_http_options_generate_a_token_only_for_a_remote_bind_without_one() -> None:
    ctx = click.Context(cli.commands["mcp"])
    options, generated = http_options(
        ctx,
        http=True,
        host="10.0.0.5",
        port=8766,
        allow_remote=True,
        allowed_host=(),
        token="given",
    )
    assert options is not None and options.token == "given" and generated is False
    options, generated = http_options(
        ctx,
        http=True,
        host="0.0.0.0",
        port=8766,
        allow_remote=True,
        allowed_host=("box.lan",),
        token=None,
    )
    assert options is not None and options.token and generated is True
    assert options.allowed_hosts == ("box.lan",)
    options, generated = http_options(
        ctx, http=True, host=None, port=8766, allow_remote=False, allowed_host=(), token=None
    )
    assert options is not None and (options.host, options.token, generated) == (
        "127.0.0.1",
        None,
        False,
    )
