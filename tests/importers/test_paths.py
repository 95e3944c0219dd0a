"""Default transcript locations and their environment overrides."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recallbox.errors import InvalidArgument
from recallbox.importers import PARSERS, default_paths, parse_claude_code, parse_codex

SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"


def test_claude_code_sessions_and_orphan_agents_only(fixtures: Path):
    config = fixtures / "claude-code"
    environ = {"CLAUDE_CONFIG_DIR": str(config)}
    found = default_paths("claude-code", home=Path("/nowhere"), environ=environ)
    project = config / "projects" / "-home-dev-app"
    # agent-0ld1 and subagents/agent-b7e1 come through their session; agent-7a11's session is gone
    assert found == [project / f"{SESSION}.jsonl", project / "agent-7a11.jsonl"]


def test_claude_code_default_dir_and_orphaned_subagents_dir(tmp_path: Path, fixtures: Path):
    shutil.copytree(fixtures / "claude-code" / "projects", tmp_path / ".claude" / "projects")
    project = tmp_path / ".claude" / "projects" / "-home-dev-app"
    (project / f"{SESSION}.jsonl").unlink()
    found = default_paths("claude-code", home=tmp_path, environ={})
    assert found == [
        project / SESSION / "subagents" / "agent-b7e1.jsonl",
        project / "agent-0ld1.jsonl",
        project / "agent-7a11.jsonl",
    ]


def test_codex_sessions_and_archived_sessions(fixtures: Path):
    codex = fixtures / "codex"
    found = default_paths("codex", home=Path("/nowhere"), environ={"CODEX_HOME": str(codex)})
    assert [path.relative_to(codex).as_posix() for path in found] == [
        "sessions/2025/08/18/rollout-2025-08-18T01-16-13-5d1e8a52-0000-4000-8000-0000000b0a2e.jsonl",
        "sessions/2025/10/29/rollout-2025-10-29T01-00-00-019a2d7a-0000-7000-8000-00000000c0de.jsonl",
        "archived_sessions/rollout-2025-10-29T01-20-00-019a2d7b-0000-7000-8000-0000005ab0a9.jsonl",
    ]


def test_codex_default_dir_when_unset(tmp_path: Path):
    day = tmp_path / ".codex" / "sessions" / "2025" / "01" / "01"
    day.mkdir(parents=True)
    (day / "rollout-a.jsonl").write_text("", encoding="utf-8")
    (day / "notes.jsonl").write_text("", encoding="utf-8")
    assert default_paths("codex", home=tmp_path, environ={}) == [day / "rollout-a.jsonl"]


def test_openai_has_no_default_location_and_unknown_formats_raise():
    assert default_paths("openai", home=Path("/nowhere"), environ={}) == []
    with pytest.raises(InvalidArgument, match="unknown transcript format 'gemini'"):
        default_paths("gemini")


def test_parsers_are_keyed_by_format_name():
    assert list(PARSERS) == ["claude-code", "codex", "openai"]
    assert PARSERS["claude-code"] is parse_claude_code
    assert PARSERS["codex"] is parse_codex
