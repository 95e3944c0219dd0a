"""Repo hygiene: the README's CLI reference and exit codes match the real CLI; versions agree."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import click

import recallbox
from recallbox.cli import VERSION, cli
from recallbox.cli.shared import EXIT_CODES
from recallbox.config import MCP_HTTP_PORT
from recallbox.mcp_server import MCP_PATH

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def command_paths(group: click.Group, prefix: str = "") -> list[str]:
    paths = []
    for name, command in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, full + " "))
        else:
            paths.append(full)
    return paths


def section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.S | re.M)
    assert found is not None, title
    return found.group(1)


def reference_rows() -> list[str]:
    """The first cell of every row of the CLI reference's command table."""
    return re.findall(r"^\| `recallbox ([^`]+)` \|", section("CLI reference"), re.M)


def test_every_command_is_in_the_readme() -> None:
    rows = reference_rows()
    missing = [p for p in command_paths(cli) if not any(r.startswith(p) for r in rows)]
    assert missing == []


def test_every_command_in_the_readme_is_real() -> None:
    real = command_paths(cli)
    words = [r.split(" --")[0].split() for r in reference_rows() if r != "--version"]
    named = [" ".join(w for w in row if not w.isupper() and not w.startswith("[")) for row in words]
    assert [n for n in named if n not in real] == []


def test_the_exit_code_table_is_the_cli_s() -> None:
    rows = re.findall(r"^\| `(\d+)` \| (.*) \|$", section("CLI reference"), re.M)
    assert {int(code): meaning for code, meaning in rows} == EXIT_CODES


def test_the_readme_names_the_http_endpoint() -> None:
    assert f"`http://127.0.0.1:{MCP_HTTP_PORT}{MCP_PATH}`" in README


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
    block = re.search(r"## Set up.*?```bash\n(.*?)```", README, re.S)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
