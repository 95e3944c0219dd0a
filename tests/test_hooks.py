"""``recallbox.hooks``: what one Claude Code hook event does (the CLI side is in tests/cli)."""

from __future__ import annotations

from pathlib import Path

import pytest

import recallbox
from recallbox.hooks import (
    HOOK_OUTPUT_MAX_CHARS,
    HookResult,
    claude_code_channel,
    handle_claude_code_hook,
    memory_injection_text,
    session_start_text,
)
from recallbox.injection import RESUME_HEADER

FIXTURES = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
TRANSCRIPT = FIXTURES / "-home-dev-app" / f"{SESSION}.jsonl"


def test_an_import_event_prints_nothing(box: recallbox.Box) -> None:
    payload = {"hook_event_name": "PreCompact", "transcript_path": str(TRANSCRIPT)}
    assert handle_claude_code_hook(box, payload) == HookResult("", ())
    assert box.thread(claude_code_channel(SESSION)).generation_count == 2


@pytest.mark.parametrize("source", ["compact", "resume"])
def test_session_start_prints_the_resume_context(box: recallbox.Box, source: str) -> None:
    payload = {
        "hook_event_name": "SessionStart",
        "source": source,
        "session_id": SESSION,
        "transcript_path": str(TRANSCRIPT),
    }
    result = handle_claude_code_hook(box, payload)
    assert result.notes == ()
    assert result.output.startswith(RESUME_HEADER + "\n[checkpoint channel=")
    assert f'"claude-code:{SESSION}"' in result.output.split("\n", 2)[1]
    assert result.output == box.resume_context(claude_code_channel(SESSION), 200_000, 9_000)
    assert len(result.output) <= HOOK_OUTPUT_MAX_CHARS


def test_a_fresh_session_start_prints_nothing(box: recallbox.Box) -> None:
    payload = {"hook_event_name": "SessionStart", "source": "startup", "session_id": SESSION}
    assert (
        handle_claude_code_hook(box, {**payload, "transcript_path": str(TRANSCRIPT)}).output == ""
    )


def test_the_memory_injection_takes_the_room_left(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[int] = []

    def memory_injection(*, budget_tokens: int) -> str:
        asked.append(budget_tokens)
        return "MEMORY.md\n" + "- a lesson\n" * 5_000

    monkeypatch.setattr(box, "memory_injection", memory_injection, raising=False)
    box.import_transcripts("claude-code", [TRANSCRIPT])
    text = session_start_text(box, claude_code_channel(SESSION))
    resume = box.resume_context(claude_code_channel(SESSION), 200_000, 9_000)
    assert text.startswith(resume + "\n\nMEMORY.md") and len(text) <= HOOK_OUTPUT_MAX_CHARS
    assert asked == [(HOOK_OUTPUT_MAX_CHARS - len(resume) - 2) // 4]
    assert memory_injection_text(box, 0) == ""


def test_a_quarantined_or_unknown_session_adds_nothing(box: recallbox.Box) -> None:
    box.import_transcripts("claude-code", [TRANSCRIPT])
    channel = claude_code_channel(SESSION)
    box.quarantine(channel)
    assert session_start_text(box, channel) == session_start_text(box, "claude-code:unknown") == ""


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
