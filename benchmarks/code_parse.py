"""Parse throughput of the code indexer's parsing layer (no database) on real Python sources.

    .venv/bin/python benchmarks/code_parse.py                 # click + mcp, 5 repeats
    .venv/bin/python benchmarks/code_parse.py --repeats 1     # a quick run

The dataset is the installed ``click`` and ``mcp`` package sources of the running interpreter
(a real mid-size Python code base; their versions are recorded). Each repeat runs, in this
process: the walk, reading, hashing and tree-sitter extraction of every file
(``parse_repository``, a full index), cross-file resolution (``resolve_edges``), and an
incremental pass after one file changed (the walk, reading and hashing all files, parsing one).
Reported: files/s and symbols/s of the full parse, p50/p95 seconds of each phase.

Issue #11's goal is a 1 000-file repository indexed in under 30 s and a one-edit re-index in
under 1 s, database included; this is the parsing share of that. ``benchmarks/code_index.py``
(phase 2) adds storage. Results go to ``benchmarks/results/code_parse.json``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from recallbox.code import parse_repository, resolve_edges
from recallbox.code.resolve import resolved_counts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "code_parse.json"
PACKAGES = ("click", "mcp")
DEFAULT_REPEATS = 5
EDITED_FILE_SUFFIX = "\n\ndef _benchmark_added(value):\n    return value\n"


def _commit() -> str:
    if os.environ.get("BENCH_COMMIT"):
        return os.environ["BENCH_COMMIT"]
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(statistics.median(values), 4),
        "p95": round(_percentile(values, 0.95), 4),
        "min": round(min(values), 4),
    }


def _dataset(workdir: Path) -> Path:
    """Copy the packages into one tree (the walk then sees exactly these files)."""
    root = workdir / "click_mcp"
    for name in PACKAGES:
        source = Path(importlib.import_module(name).__file__ or "").parent
        shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def run(repeats: int) -> dict[str, Any]:
    full: list[float] = []
    resolve: list[float] = []
    incremental: list[float] = []
    counts: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = _dataset(Path(scratch))
        edited = root / "click" / "utils.py"
        original = edited.read_bytes()
        for _ in range(repeats):
            edited.write_bytes(original)
            started = time.perf_counter()
            parsed = parse_repository(root)
            full.append(time.perf_counter() - started)
            started = time.perf_counter()
            edges = resolve_edges(parsed.files, root_name=root.name)
            resolve.append(time.perf_counter() - started)
            previous = {file.path: file.hash for file in parsed.files}
            edited.write_bytes(original + EDITED_FILE_SUFFIX.encode())
            started = time.perf_counter()
            again = parse_repository(root, previous=previous)
            incremental.append(time.perf_counter() - started)
            assert again.report.files_parsed == 1, again.report
            counts = {
                "files": parsed.report.files_seen,
                "parsed": parsed.report.files_parsed,
                "failed": len(parsed.report.failed),
                "skipped": parsed.report.skipped,
                "symbols": parsed.report.symbols,
                "edges": len(edges),
                "edges_by_confidence": resolved_counts(edges),
                "bytes": sum(file.size for file in parsed.files),
            }
    p50 = statistics.median(full)
    return {
        "benchmark": "code_parse",
        "commit": _commit(),
        "dataset": {
            "name": "installed click + mcp package sources",
            "versions": {name: importlib.metadata.version(name) for name in PACKAGES},
            **counts,
        },
        "parameters": {"repeats": repeats, "edited_file": "click/utils.py"},
        "metric": {
            "full_parse_seconds": _summary(full),
            "resolve_seconds": _summary(resolve),
            "incremental_one_edit_seconds": _summary(incremental),
            "files_per_second_p50": round(counts["files"] / p50, 1),
            "symbols_per_second_p50": round(counts["symbols"] / p50, 1),
        },
        "python": platform.python_version(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    args = parser.parse_args()
    result = run(args.repeats)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    json.dump(result["metric"], sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
