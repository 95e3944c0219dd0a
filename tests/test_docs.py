"""Repo hygiene: every CLI command is in the README's reference; versions agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import click

import recallbox
from recallbox.cli import VERSION, cli

ROOT = Path(__file__).resolve().parents[1]


def command_paths(group: click.Group, prefix: str = "") -> list[str]:
    paths = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, full + " "))
        else:
            paths.append(full)
    return paths


def test_every_command_is_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [p for p in command_paths(cli) if f"`recallbox {p}" not in readme]
    assert missing == []


def test_every_command_help_has_an_example() -> None:
    def walk(group: click.Group) -> list[click.Command]:
        out: list[click.Command] = []
        for command in group.commands.values():
            out.append(command)
            if isinstance(command, click.Group):
                out.extend(walk(command))
        return out

    assert [c.name for c in walk(cli) if "Example:" not in (c.help or "")] == []


def test_versions_agree() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["version"] == recallbox.__version__ == VERSION


def test_readme_shows_two_setup_commands_that_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Set up.*?```bash\n(.*?)```", readme, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
