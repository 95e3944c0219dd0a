"""Agent hooks: what ``recallbox hook claude-code`` does for each Claude Code hook event.

Claude Code runs a hook command with a JSON payload on stdin (``hook_event_name``,
``session_id``, ``transcript_path``, and for ``SessionStart`` a ``source``). recallbox:

* on every event with a transcript (``PreCompact``, ``SessionEnd``, ``SessionStart``, ``Stop``)
  imports the transcript incrementally, so the pre-compaction generation is stored verbatim
  before Claude Code replaces it with a summary;
* on ``SessionStart`` with source ``resume`` or ``compact`` also prints, for the model, the
  session start of DESIGN §7.1 within :data:`HOOK_OUTPUT_MAX_CHARS` (Claude Code's limit on hook
  output that reaches the context): the thread's resume context first (a checkpoint naming the
  channel ``claude-code:<session id>``, recent conclusions, key tool actions, the last turns —
  built from the stored messages through one gated read), then the memory injection in the
  room left.

A hook never blocks the agent: failures (a missing ``transcript_path`` included) are reported on
stderr and the command exits 0.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recallbox.box import Box
from recallbox.errors import RecallError
from recallbox.injection import (
    HOOK_OUTPUT_MAX_CHARS,
    assemble_session_start,
    memory_budget_tokens,
    resume_budget_chars,
)
from recallbox.injection_resume import resume_is_empty

CLAUDE_CODE_FORMAT = "claude-code"
#: The ``SessionStart`` sources that print the session start (a fresh ``startup`` does not).
SESSION_START_SOURCES = frozenset({"resume", "compact"})
#: The model's context window the resume budget is scaled from (Claude Code's default).
CONTEXT_WINDOW_TOKENS = 200_000
logger = logging.getLogger(__name__)

__all__ = [
    "HOOK_OUTPUT_MAX_CHARS",
    "HookResult",
    "claude_code_channel",
    "handle_claude_code_hook",
    "memory_injection_text",
    "session_start_text",
]


def claude_code_channel(session_id: str) -> str:
    """The thread a Claude Code session is imported into."""
    return f"{CLAUDE_CODE_FORMAT}:{session_id}"


def memory_injection_text(box: Box, budget_tokens: int) -> str:
    """``box.memory_injection(budget_tokens=…)``, or ``""`` when this version has no memory
    injection yet (#10) or it cannot give one within ``budget_tokens``."""
    verb = getattr(box, "memory_injection", None)
    if verb is None or budget_tokens <= 0:
        return ""
    try:
        text = verb(budget_tokens=budget_tokens)
    except RecallError:  # e.g. a budget too small for the manifest: the resume context stands
        logger.debug("memory injection skipped", exc_info=True)
        return ""
    return text if isinstance(text, str) else ""


def session_start_text(box: Box, channel: str) -> str:
    """The resume context of ``channel``, then the memory injection in the room left, within
    :data:`HOOK_OUTPUT_MAX_CHARS` (DESIGN §7.1). A thread with nothing a model may read —
    unknown, denied or empty alike — adds no resume context."""
    budget = min(resume_budget_chars(CONTEXT_WINDOW_TOKENS), HOOK_OUTPUT_MAX_CHARS)
    resume = box.resume_context(channel, CONTEXT_WINDOW_TOKENS, budget)
    if resume_is_empty(resume):
        resume = ""
    memory = memory_injection_text(box, memory_budget_tokens(resume))
    return assemble_session_start(resume, memory)


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
        and payload.get("source") in SESSION_START_SOURCES
        and isinstance(session_id, str)
        and session_id
    ):
        output = session_start_text(box, claude_code_channel(session_id))
    return HookResult(output, tuple(notes))
