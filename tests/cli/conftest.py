"""Running the real CLI: in-process through click's runner, or as the installed script."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from recallbox.cli import cli

FIXTURES = Path(__file__).resolve().parents[1] / "importers" / "fixtures"
SCRIPT = Path(sys.executable).parent / "recallbox"
TRACEBACK = "Traceback (most recent call last)"


@dataclass(frozen=True)
class Run:
    """One CLI run: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    @property
    def error_line(self) -> str:
        """The ``Error: …`` line on stderr (there is exactly one)."""
        (line,) = [x for x in self.err.splitlines() if x.startswith("Error: ")]
        return line.removeprefix("Error: ")


def invoke(*args: str, input: str | None = None) -> Run:
    """``recallbox ARGS`` through click's runner."""
    result = CliRunner().invoke(cli, list(args), input=input, obj={})
    run = Run(result.exit_code, result.stdout, result.stderr)
    assert TRACEBACK not in run.out + run.err, run
    return run


def script(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Run:
    """``recallbox ARGS`` as the installed console script, in a real subprocess."""
    assert SCRIPT.exists(), f"the recallbox script is not installed next to {sys.executable}"
    done = subprocess.run(
        [str(SCRIPT), *args],
        input=input or "",
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    run = Run(done.returncode, done.stdout, done.stderr)
    assert TRACEBACK not in run.out + run.err, run
    return run


@pytest.fixture
def fixtures() -> Path:
    """The importer fixtures (Claude Code, Codex and OpenAI transcripts)."""
    return FIXTURES


@pytest.fixture
def db(db_path: Path | str) -> str:
    """A fresh database (created by `init`): a SQLite path or a PostgreSQL URL."""
    path = str(db_path)
    assert invoke("--db", path, "init").code == 0
    return path


Invoke = Callable[..., Run]


@pytest.fixture
def run() -> Invoke:
    """``run(*args, input=None) -> Run`` through click's runner (fails on any traceback)."""
    return invoke


@pytest.fixture
def run_script() -> Invoke:
    """``run_script(*args, input=None, env=None) -> Run``: the installed script, a subprocess."""
    return script
