"""Telling the transcript formats apart, for the hints of an import that finds nothing.

* :func:`sniff_format` reads the first records of a file and says which format they look
  like (``None`` when unsure), so a new file that imports nothing because it is a Codex
  rollout imported as ``claude-code`` (or the other way round) is refused with "wrong
  format?" instead of importing nothing in silence.
* :func:`no_files_hint` says where an import looked when it found no file.

Pure reads of a few lines; nothing is stored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from recallbox.importers.paths import (
    CLAUDE_CONFIG_ENV,
    CLAUDE_DEFAULT_DIR,
    CLAUDE_PROJECTS_DIR,
    CODEX_DEFAULT_DIR,
    CODEX_HOME_ENV,
    CODEX_SESSION_DIRS,
)
from recallbox.importers.records import FORMAT_CLAUDE_CODE, FORMAT_CODEX, FORMAT_OPENAI
from recallbox.limits import loads_bounded

SNIFF_RECORDS = 20
"""JSON object lines read to guess a file's format."""
SNIFF_MAX_BYTES = 1 << 20
"""At most this much of a file is read to guess its format."""

CODEX_LINE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
CODEX_ITEM_TYPES = frozenset(
    {"message", "reasoning", "function_call", "function_call_output", "local_shell_call"}
)
CLAUDE_LINE_TYPES = frozenset(
    {"user", "assistant", "system", "summary", "file-history-snapshot", "progress"}
)
FORMAT_NAMES = {
    FORMAT_CLAUDE_CODE: "a Claude Code session",
    FORMAT_CODEX: "a Codex rollout",
    FORMAT_OPENAI: "an OpenAI-format chat export",
}


def _vote(record: dict[str, Any]) -> str | None:
    """The format one JSON object line belongs to, when it says."""
    kind = record.get("type") if isinstance(record.get("type"), str) else None
    if isinstance(record.get("payload"), dict) and kind in CODEX_LINE_TYPES:
        return FORMAT_CODEX
    if "record_type" in record or (kind in CODEX_ITEM_TYPES and "sessionId" not in record):
        return FORMAT_CODEX
    if "sessionId" in record or (kind in CLAUDE_LINE_TYPES and "uuid" in record):
        return FORMAT_CLAUDE_CODE
    if "mapping" in record or isinstance(record.get("messages"), list):
        return FORMAT_OPENAI
    if "role" in record and "content" in record and kind is None:
        return FORMAT_OPENAI
    return None


def _records(path: Path) -> Iterable[dict[str, Any]]:
    read = found = 0
    with path.open("rb") as stream:
        for raw in stream:
            read += len(raw)
            if read > SNIFF_MAX_BYTES or found >= SNIFF_RECORDS:
                return
            try:
                value = loads_bounded(raw)
            except ValueError:  # not JSON, or nested too deeply (TooDeep): no vote
                continue
            if isinstance(value, dict):
                found += 1
                yield value


def sniff_format(path: Path) -> str | None:
    """The format the first records of ``path`` look like, when all that say agree (``None``:
    unreadable, no record says, or they disagree)."""
    votes: set[str] = set()
    try:
        for record in _records(path):
            vote = _vote(record)
            if vote is not None:
                votes.add(vote)
    except OSError:
        return None
    return votes.pop() if len(votes) == 1 else None


def wrong_format(path: Path, format: str) -> str | None:
    """The "wrong format?" message when ``path`` looks like another format than ``format``."""
    found = sniff_format(path)
    if found is None or found == format:
        return None
    return (
        f"wrong format? this looks like {FORMAT_NAMES[found]} "
        f"(try `recallbox import {found} {path}`)"
    )


def no_files_hint(format: str, named: Iterable[str | os.PathLike[str]] | None) -> str:
    """Why an import of ``format`` found no file: where it looked and how to point it
    elsewhere (``named``: the paths given, ``None`` for the default locations)."""
    if named is not None:
        where = ", ".join(str(p) for p in named)
        return (
            f"no {format} transcripts under {where}; name the files, or check the format "
            "(claude-code: *.jsonl session files; codex: rollout-*.jsonl)"
        )
    env = os.environ
    if format == FORMAT_OPENAI:
        return "OpenAI-format chat exports have no default location; name the files"
    if format == FORMAT_CLAUDE_CODE:
        base = Path(env.get(CLAUDE_CONFIG_ENV) or Path.home() / CLAUDE_DEFAULT_DIR).expanduser()
        projects = base / CLAUDE_PROJECTS_DIR
        state = "has no session files" if projects.is_dir() else "does not exist"
        return (
            f"no Claude Code transcripts: {projects} {state}; set {CLAUDE_CONFIG_ENV}, or name "
            "the files: recallbox import claude-code PATH"
        )
    base = Path(env.get(CODEX_HOME_ENV) or Path.home() / CODEX_DEFAULT_DIR).expanduser()
    dirs = " and ".join(str(base / d) for d in CODEX_SESSION_DIRS)
    return (
        f"no Codex rollouts (rollout-*.jsonl) in {dirs}; set {CODEX_HOME_ENV}, or name the "
        "files: recallbox import codex PATH"
    )
