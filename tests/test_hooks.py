"""The Claude Code hook helper on a compacted fixture session, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

import recallbox
from recallbox.cli import cli
from recallbox.hooks import HOOK_OUTPUT_MAX_CHARS, claude_code_channel

FIXTURES = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
TRANSCRIPT = FIXTURES / "-home-dev-app" / f"{SESSION}.jsonl"
CLAUDE_HOOK_LIMIT_CHARS = 10_000


def hook(db: Path, payload: object) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, ["--db", str(db), "hook", "claude-code"], input=json.dumps(payload), obj={}
    )
    return result.exit_code, result.stdout, result.stderr


def test_precompact_imports_and_prints_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    code, out, _ = hook(
        db,
        {
            "hook_event_name": "PreCompact",
            "session_id": SESSION,
            "transcript_path": str(TRANSCRIPT),
        },
    )
    assert code == 0 and out == ""
    with recallbox.open(db) as box:
        thread = box.thread(claude_code_channel(SESSION))
        assert thread.generation_count == 2 and thread.message_count > 0


def test_session_start_after_compact_tells_the_model_where_to_search(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    payload = {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": SESSION,
        "transcript_path": str(TRANSCRIPT),
    }
    code, out, _ = hook(db, payload)
    channel = f"claude-code:{SESSION}"
    assert code == 0
    assert channel in out
    assert "## 10. Resources used in generation 1" in out
    assert f'search_memory(channel="{channel}", query="<resource name or path>")' in out
    assert len(out) <= HOOK_OUTPUT_MAX_CHARS + 1 < CLAUDE_HOOK_LIMIT_CHARS
    with recallbox.open(db) as box:
        tool_ids = [m.id for m in box.messages(channel, generation=1) if m.role == "tool"]
    assert any(message_id in out for message_id in tool_ids)  # evidence ids are listed
    # a second start (resume) imports nothing new and prints nothing
    code, out, _ = hook(db, {**payload, "source": "resume"})
    assert code == 0 and out == ""


def test_hook_never_blocks_on_bad_input(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    code, out, err = hook(db, ["not", "an", "object"])
    assert code == 0 and out == "" and "not a JSON object" in err
    result = CliRunner().invoke(
        cli, ["--db", str(db), "hook", "claude-code"], input="{broken", obj={}
    )
    assert result.exit_code == 0 and "recallbox hook:" in result.stderr
    code, out, err = hook(
        db,
        {
            "hook_event_name": "SessionEnd",
            "session_id": "x",
            "transcript_path": str(tmp_path / "gone.jsonl"),
        },
    )
    assert code == 0 and out == ""


def test_quarantined_session_prints_nothing(tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with recallbox.open(db) as box:
        box.quarantine(f"claude-code:{SESSION}")
    code, out, _ = hook(
        db,
        {
            "hook_event_name": "SessionStart",
            "source": "compact",
            "session_id": SESSION,
            "transcript_path": str(TRANSCRIPT),
        },
    )
    assert code == 0 and out == ""
