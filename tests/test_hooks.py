"""``recallbox.hooks``: what one Claude Code hook event does (the CLI side is in tests/cli)."""

from __future__ import annotations

from pathlib import Path

import recallbox
from recallbox.hooks import (
    HOOK_OUTPUT_MAX_CHARS,
    HookResult,
    claude_code_channel,
    handle_claude_code_hook,
)

FIXTURES = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
TRANSCRIPT = FIXTURES / "-home-dev-app" / f"{SESSION}.jsonl"


def test_an_import_event_prints_nothing(box: recallbox.Box) -> None:
    payload = {"hook_event_name": "PreCompact", "transcript_path": str(TRANSCRIPT)}
    assert handle_claude_code_hook(box, payload) == HookResult("", ())
    assert box.thread(claude_code_channel(SESSION)).generation_count == 2


def test_session_start_after_a_compaction_returns_the_notice(box: recallbox.Box) -> None:
    payload = {
        "hook_event_name": "SessionStart",
        "source": "compact",
        "session_id": SESSION,
        "transcript_path": str(TRANSCRIPT),
    }
    result = handle_claude_code_hook(box, payload)
    assert result.notes == ()
    assert result.output.startswith(
        f"recallbox: the history of this session before the compaction is stored verbatim in "
        f"thread claude-code:{SESSION} (generation 1)."
    )
    assert len(result.output) <= HOOK_OUTPUT_MAX_CHARS


def test_notes_say_why_nothing_was_imported(box: recallbox.Box, tmp_path: Path) -> None:
    assert handle_claude_code_hook(box, {"hook_event_name": "SessionEnd"}).notes == (
        "the payload has no transcript_path; nothing was imported",
    )
    assert handle_claude_code_hook(box, {"transcript_path": 7}).notes == (
        "the payload's transcript_path is not a string; nothing was imported",
    )
    gone = tmp_path / "gone.jsonl"
    (note,) = handle_claude_code_hook(box, {"transcript_path": str(gone)}).notes
    assert note.startswith(f"could not import {gone}: ")
