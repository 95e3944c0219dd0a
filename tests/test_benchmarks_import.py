"""Every benchmark script imports against today's code.

Benchmarks are not run in CI (they are long), so a refactor that moves a name they import would
otherwise only show up when someone next runs one. Importing each module in a fresh interpreter
(no ``__pycache__`` from an older tree can satisfy it) runs its top-level imports and nothing
else: every script keeps its work behind ``main()``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py"))


def test_there_are_benchmarks() -> None:
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_imports(name: str) -> None:
    result = subprocess.run(
        [sys.executable, "-B", "-c", f"import {name}"],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
