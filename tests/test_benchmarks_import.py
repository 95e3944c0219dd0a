"""Every benchmark script imports against today's code.

Benchmarks are not run in CI (they are long), so a refactor that moves a name they import would
otherwise only show up when someone next runs one. Importing each module in a fresh interpreter
(no ``__pycache__`` from an older tree can satisfy it) runs its top-level imports and nothing
else: every script keeps its work behind ``main()``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(p.stem for p in BENCHMARKS.glob("*.py"))
#: Scripts that drive an optional tool not in the dev install (a fuzzer): without it, the one
#: error they may raise is that tool's absence.
NEEDS_TOOL = {"reliability_fuzz": "atheris"}
LOAD = (
    "import importlib.util, sys; sys.argv = ['bench']; "
    "spec = importlib.util.spec_from_file_location('__bench__', {path!r}); "
    "module = sys.modules['__bench__'] = importlib.util.module_from_spec(spec); "
    "spec.loader.exec_module(module)"
)


def test_there_are_benchmarks() -> None:
    assert len(SCRIPTS) >= 5


@pytest.mark.parametrize("name", SCRIPTS)
def test_benchmark_imports(name: str) -> None:
    result = subprocess.run(
        # Loaded under another name, as `python benchmarks/NAME.py` runs it (`reliability.py`
        # imports the `reliability` test package: its own name must not shadow it).
        [sys.executable, "-B", "-c", LOAD.format(path=str(BENCHMARKS / f"{name}.py"))],
        cwd=BENCHMARKS,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
    )
    tool = NEEDS_TOOL.get(name)
    if tool is not None and importlib.util.find_spec(tool) is None:
        assert result.returncode != 0
        assert result.stderr.rstrip().endswith(f"No module named '{tool}'"), result.stderr[-2000:]
        return
    assert result.returncode == 0, result.stderr[-2000:]


def test_locomo_stops_before_its_run_when_the_bench_extra_is_missing(tmp_path: Path) -> None:
    """``bm25s`` (the ``bench`` extra) scores the baseline at the very end of a long run: its
    absence must stop the run at the start with the install command, not crash at the end.
    The data path does not exist, so a run that went past the check fails differently."""
    hide = "sys.modules['bm25s'] = None; "  # `import bm25s` raises ImportError
    code = LOAD.format(path=str(BENCHMARKS / "locomo.py")).replace("sys.argv", hide + "sys.argv")
    result = subprocess.run(
        [sys.executable, "-B", "-c", f"{code}; module.main(['--data', 'missing.json'])"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin"},
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "bm25s" in result.stderr and "'.[bench]'" in result.stderr, result.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []
