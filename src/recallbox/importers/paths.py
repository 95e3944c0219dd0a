"""Where the agents keep their transcripts: the default files of each format.

Pure discovery: nothing is read except, for an old-style Claude Code ``agent-*.jsonl``, its
first lines (to find its session). The environment is an argument so callers and tests decide
what it is; it defaults to ``os.environ``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recallbox.errors import InvalidArgument
from recallbox.importers.claude_code import (
    AGENT_FILE_PREFIX,
    COMPACTION_AGENT_PREFIX,
    SUBAGENTS_DIR,
    _subagent_files,
    peek_session_id,
)
from recallbox.importers.records import FORMAT_CLAUDE_CODE, FORMAT_CODEX, FORMATS

CLAUDE_CONFIG_ENV = "CLAUDE_CONFIG_DIR"
CLAUDE_DEFAULT_DIR = ".claude"
CLAUDE_PROJECTS_DIR = "projects"
CODEX_HOME_ENV = "CODEX_HOME"
CODEX_DEFAULT_DIR = ".codex"
CODEX_SESSION_DIRS = ("sessions", "archived_sessions")
CODEX_ROLLOUT_GLOB = "rollout-*.jsonl"
JSONL_GLOB = "*.jsonl"


def default_paths(
    format: str, *, home: Path | None = None, environ: Mapping[str, str] | None = None
) -> list[Path]:
    """The transcript files a format's tool writes by default, sorted.

    Args:
        format: ``"claude-code"``, ``"codex"`` or ``"openai"`` (no default location: ``[]``).
        home: the user's home directory (default ``Path.home()``).
        environ: the environment (default ``os.environ``); ``CLAUDE_CONFIG_DIR`` and
            ``CODEX_HOME`` move the tools' directories as they do for the tools.

    Returns:
        Claude Code: every session file under ``projects/``, plus sub-agent files whose
        session file is gone (the others are parsed through their session). Codex: every
        ``rollout-*.jsonl`` under ``sessions/`` and ``archived_sessions/``.

    Raises:
        InvalidArgument: ``format`` is not one of the three.
    """
    if format not in FORMATS:
        raise InvalidArgument(f"unknown transcript format {format!r}; use one of {FORMATS}")
    env = os.environ if environ is None else environ
    user_home = Path.home() if home is None else home
    if format == FORMAT_CLAUDE_CODE:
        return _claude_code_files(_tool_dir(env, CLAUDE_CONFIG_ENV, user_home, CLAUDE_DEFAULT_DIR))
    if format == FORMAT_CODEX:
        base = _tool_dir(env, CODEX_HOME_ENV, user_home, CODEX_DEFAULT_DIR)
        return [
            path
            for directory in CODEX_SESSION_DIRS
            for path in sorted((base / directory).rglob(CODEX_ROLLOUT_GLOB))
        ]
    return []  # FORMAT_OPENAI: chat exports have no default location


OPENAI_SUFFIXES = (".json", ".jsonl", ".ndjson")


def transcript_files(format: str, directory: Path) -> list[Path]:
    """The transcript files of a format inside ``directory`` (recursively), sorted.

    Claude Code: session files, plus sub-agent files whose session file is not there (the
    others come with their session); Codex: ``rollout-*.jsonl``; OpenAI: ``*.json``,
    ``*.jsonl`` and ``*.ndjson``.

    Raises:
        InvalidArgument: ``format`` is not one of the three.
    """
    if format not in FORMATS:
        raise InvalidArgument(f"unknown transcript format {format!r}; use one of {FORMATS}")
    if format == FORMAT_CLAUDE_CODE:
        projects = directory / CLAUDE_PROJECTS_DIR
        return _claude_code_files(directory, projects=projects if projects.is_dir() else directory)
    if format == FORMAT_CODEX:
        return sorted(directory.rglob(CODEX_ROLLOUT_GLOB))
    return sorted(p for p in directory.rglob("*") if p.suffix in OPENAI_SUFFIXES and p.is_file())


def _tool_dir(env: Mapping[str, str], variable: str, home: Path, default: str) -> Path:
    value = env.get(variable)
    return Path(value).expanduser() if value else home / default


def _claude_code_files(config_dir: Path, *, projects: Path | None = None) -> list[Path]:
    projects = config_dir / CLAUDE_PROJECTS_DIR if projects is None else projects
    found = []
    for path in sorted(projects.rglob(JSONL_GLOB)):
        if not path.name.startswith(AGENT_FILE_PREFIX):
            if SUBAGENTS_DIR not in path.relative_to(projects).parts:
                found.append(path)
        elif not path.name.startswith(COMPACTION_AGENT_PREFIX) and _orphan_agent(path):
            found.append(path)
    return found


def _orphan_agent(path: Path) -> bool:
    """Whether a sub-agent file has no session file to be discovered through."""
    if path.parent.name == SUBAGENTS_DIR:
        session_dir = path.parent.parent
        return not (session_dir.parent / f"{session_dir.name}.jsonl").is_file()
    session_id = peek_session_id(path)
    return session_id is None or not (path.parent / f"{session_id}.jsonl").is_file()


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One file to sync; ``parent_session`` is set for a sub-agent file found via its session."""

    path: Path
    parent_session: str | None = None
    not_imported: dict[str, int] = field(default_factory=dict)
    """Files beside it that are deliberately not imported, counted by kind (Claude Code's
    compaction-agent transcripts, ``subagent_file:acompact``)."""


ACOMPACT_KEY = "subagent_file:acompact"


def files_to_import(
    format: str, paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str] | None
) -> list[TranscriptFile]:
    """Expand what the caller named into transcript files, sub-agent files after their session.

    ``None`` means the format's default directories; a directory means its transcript files.
    A Claude Code session file brings its sub-agent files along. Missing paths are kept (the
    sync reports them as errors).

    Raises:
        InvalidArgument: ``format`` is not one of :data:`~recallbox.importers.FORMATS`.
    """
    if format not in FORMATS:
        raise InvalidArgument(f"unknown transcript format {format!r}; use one of {FORMATS}")
    if paths is None:
        named = default_paths(format)
    elif isinstance(paths, str | os.PathLike):
        named = [Path(paths)]
    else:
        named = [Path(p) for p in paths]
    found: list[TranscriptFile] = []
    seen: set[Path] = set()

    def add(path: Path, parent: str | None = None, skipped: int = 0) -> None:
        key = path.expanduser().absolute()
        if key not in seen:
            seen.add(key)
            found.append(TranscriptFile(key, parent, {ACOMPACT_KEY: skipped} if skipped else {}))

    for path in named:
        path = path.expanduser()
        listed = transcript_files(format, path) if path.is_dir() else [path]
        for item in listed:
            if format == FORMAT_CLAUDE_CODE and item.name.startswith(COMPACTION_AGENT_PREFIX):
                continue
            session = not item.name.startswith(AGENT_FILE_PREFIX)
            claude_session = format == FORMAT_CLAUDE_CODE and session and item.is_file()
            # The session's own id (a copy of the file under another name keeps it).
            session_id = (peek_session_id(item) or item.stem) if claude_session else item.stem
            agents = _subagent_files(item, session_id) if claude_session else []
            compaction = [a for a in agents if a.name.startswith(COMPACTION_AGENT_PREFIX)]
            add(item, skipped=len(compaction))
            for agent in agents:
                if agent not in compaction:
                    add(agent, session_id)
    return found
