"""Agent hooks: what ``recallbox hook claude-code`` does for each Claude Code hook event.

Claude Code runs a hook command with a JSON payload on stdin (``hook_event_name``,
``session_id``, ``transcript_path``, and for ``SessionStart`` a ``source``). recallbox:

* on every event with a transcript (``PreCompact``, ``SessionEnd``, ``SessionStart``, ``Stop``)
  imports the transcript incrementally, so the pre-compaction generation is stored verbatim
  before Claude Code replaces it with a summary;
* on ``SessionStart`` with source ``compact`` also prints, for the model, the thread's channel
  (``claude-code:<session id>``), the resource directory of the generation that was just closed,
  and the line saying how to recover any of it with ``search_memory`` — within Claude Code's
  limit on hook output that reaches the context.

A hook never blocks the agent: failures (a missing ``transcript_path`` included) are reported on
stderr and the command exits 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recallbox.box import Box
from recallbox.domains.resources import extract_resources, instruction_line, render_directory

CLAUDE_CODE_FORMAT = "claude-code"
# Claude Code keeps at most 10 000 characters of hook output in the context; stay under it.
HOOK_OUTPUT_MAX_CHARS = 9_000
COMPACT_SOURCE = "compact"
TRUNCATION_MARK = "\n…truncated"


def claude_code_channel(session_id: str) -> str:
    """The thread a Claude Code session is imported into."""
    return f"{CLAUDE_CODE_FORMAT}:{session_id}"


def resume_notice(box: Box, channel: str) -> str:
    """What the model reads after a compaction: where its old history is and how to get it."""
    thread = box.store.get_thread(channel)
    if thread is None or not box.store.thread_allowed(channel):
        return ""
    closed = thread.generation_count - 1 if thread.generation_count >= 2 else 1
    directory = render_directory(
        extract_resources(box.store.iter_messages(channel, closed)), closed
    )
    text = (
        f"recallbox: the history of this session before the compaction is stored verbatim in "
        f"thread {channel} (generation {closed}).\n\n{directory}\n\n{instruction_line(channel)}"
    )
    if len(text) > HOOK_OUTPUT_MAX_CHARS:
        text = text[: HOOK_OUTPUT_MAX_CHARS - len(TRUNCATION_MARK)] + TRUNCATION_MARK
    return text


@dataclass(frozen=True, slots=True)
class HookResult:
    """What one hook event produced: ``output`` for the model (stdout), ``notes`` for stderr."""

    output: str = ""
    notes: tuple[str, ...] = ()


def _import_transcript(box: Box, transcript: object) -> list[str]:
    """Import the payload's transcript; the reasons it could not be (empty when it was)."""
    if transcript is None or transcript == "":
        return ["the payload has no transcript_path; nothing was imported"]
    if not isinstance(transcript, str):
        return ["the payload's transcript_path is not a string; nothing was imported"]
    report = box.import_transcripts(CLAUDE_CODE_FORMAT, [transcript])
    return [f"could not import {f.path}: {f.error}" for f in report.errors]


def handle_claude_code_hook(box: Box, payload: Mapping[str, Any]) -> HookResult:
    """Import the session's transcript; return the text to print (empty for most events)."""
    notes = _import_transcript(box, payload.get("transcript_path"))
    session_id = payload.get("session_id")
    output = ""
    if (
        payload.get("hook_event_name") == "SessionStart"
        and payload.get("source") == COMPACT_SOURCE
        and isinstance(session_id, str)
        and session_id
    ):
        output = resume_notice(box, claude_code_channel(session_id))
    return HookResult(output, tuple(notes))
