"""Indexing throughput and search latency of the code domain, database included (issue #11).

    nice -n 10 .venv/bin/python benchmarks/code_index.py                # both datasets, 3 repeats
    nice -n 10 .venv/bin/python benchmarks/code_index.py --repeats 1    # a quick run

Datasets, copied from the running interpreter's installed packages into one tree each (so the
walk sees exactly these files; versions recorded):

* ``click_mcp``: the ``click`` and ``mcp`` sources (a real mid-size Python code base);
* ``python_1000``: those plus ``rich``, ``starlette``, ``hypothesis``, ``jinja2``, ``pydantic``,
  ``anyio``, ``uvicorn``, ``_pytest`` and ``pygments`` (about 1 000 files).

Each repeat, on a fresh SQLite file: a full ``box.index_code`` (walk, read, hash, tree-sitter,
resolution across the scope, the writes and their FTS5 index), a re-index with nothing changed,
a re-index after one edit of a function body (``click/utils.py``: one file parsed, only the
edges a changed name can affect resolved again), and a re-index after an edit that adds an
import (every edge of the scope resolved again). Then code-search latency: one
``box.search(q, domain="code", allow_embed=False)`` per query, over every 40th symbol name of
the index and a few phrases. Goals (issue #11): a 1 000-file repository indexes in < 30 s, a
re-index after one edit takes < 1 s. Results: ``benchmarks/results/code_index.json``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import recallbox

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "code_index.json"
DATASETS: dict[str, tuple[str, ...]] = {
    "click_mcp": ("click", "mcp"),
    "python_1000": (
        "click", "mcp", "rich", "starlette", "hypothesis", "jinja2", "pydantic", "anyio",
        "uvicorn", "_pytest", "pygments",
    ),
}  # fmt: skip
DEFAULT_REPEATS = 3
EDITED_FILE = "click/utils.py"
BODY_EDIT = "\n\ndef _benchmark_added(value):\n    return len(value)\n"
IMPORT_EDIT = "\nimport json as _benchmark_json\n"
#: Every this-many-th distinct symbol name is a search query.
QUERY_EVERY = 40
PHRASES = ("parse command line options", "open a file", "render a table", "retry on error")


def _commit() -> str:
    if os.environ.get("BENCH_COMMIT"):
        return os.environ["BENCH_COMMIT"]
    try:
        done = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
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


def _dataset(workdir: Path, name: str) -> Path:
    root = workdir / name
    for package in DATASETS[name]:
        source = Path(importlib.import_module(package).__file__ or "").parent
        shutil.copytree(source, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


#: CPU seconds of the last :func:`_timed` call (the machine is shared: wall time includes
#: waiting for a core, CPU time does not).
_CPU: list[float] = []


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started, cpu = time.perf_counter(), time.process_time()
    result = action()
    _CPU.append(time.process_time() - cpu)
    return time.perf_counter() - started, result


def _queries(box: recallbox.Box, scope: str) -> list[str]:
    graph = box.store.code_graph(scope)
    names = sorted({s.name for g in graph for s in g.symbols if s.kind != "module"})
    return [*names[::QUERY_EVERY], *PHRASES]


def run_dataset(name: str, repeats: int, scratch: Path) -> dict[str, Any]:
    root = _dataset(scratch, name)
    edited = root / EDITED_FILE
    original = edited.read_bytes()
    timings: dict[str, list[float]] = {
        "full": [], "unchanged": [], "one_edit_body": [], "one_edit_import": []
    }  # fmt: skip
    cpu: dict[str, list[float]] = {key: [] for key in timings}
    search: list[float] = []
    report: Any = None
    facts: dict[str, Any] = {}
    for repeat in range(repeats):
        edited.write_bytes(original)
        db = scratch / f"{name}-{repeat}.db"
        with recallbox.open(db) as box:
            seconds, report = _timed(lambda: box.index_code(root))
            timings["full"].append(seconds)
            cpu["full"].append(_CPU[-1])
            seconds, again = _timed(lambda: box.index_code(root))
            timings["unchanged"].append(seconds)
            cpu["unchanged"].append(_CPU[-1])
            assert again.files_parsed == 0, again
            edited.write_bytes(original + BODY_EDIT.encode())
            seconds, body = _timed(lambda: box.index_code(root))
            timings["one_edit_body"].append(seconds)
            cpu["one_edit_body"].append(_CPU[-1])
            assert body.files_parsed == 1 and not body.full_resolution, body
            edited.write_bytes(original + BODY_EDIT.encode() + IMPORT_EDIT.encode())
            seconds, imported = _timed(lambda: box.index_code(root))
            timings["one_edit_import"].append(seconds)
            cpu["one_edit_import"].append(_CPU[-1])
            assert imported.files_parsed == 1 and imported.full_resolution, imported
            queries = _queries(box, root.name)
            for query in queries:
                seconds, _ = _timed(
                    lambda q=query: box.search(q, domain="code", allow_embed=False)  # type: ignore[misc]
                )
                search.append(seconds)
            facts = {
                "load_average_1min": round(os.getloadavg()[0], 2),
                "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "edges_reresolved_after_body_edit": body.edges_reresolved,
                "edges_reresolved_after_import_edit": imported.edges_reresolved,
                "queries": len(queries),
                "db_bytes": db.stat().st_size,
            }
    full_p50 = statistics.median(timings["full"])
    return {
        "dataset": {
            "name": name,
            "packages": {p: importlib.metadata.version(p.lstrip("_")) for p in DATASETS[name]},
            "files": report.files_seen,
            "parsed": report.files_parsed,
            "failed": len(report.failed),
            "skipped": report.skipped,
            "symbols": report.total_symbols,
            "edges": report.total_edges,
        },
        "seconds": {key: _summary(values) for key, values in timings.items()},
        "cpu_seconds": {key: _summary(values) for key, values in cpu.items()},
        "files_per_second_p50": round(report.files_seen / full_p50, 1),
        "symbols_per_second_p50": round(report.total_symbols / full_p50, 1),
        "search_ms": {k: round(v * 1000, 2) for k, v in _summary(search).items()},
        **facts,
    }


def run(repeats: int, names: list[str]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        results = [run_dataset(name, repeats, Path(scratch)) for name in names]
    return {
        "benchmark": "code_index",
        "commit": _commit(),
        "parameters": {
            "repeats": repeats,
            "edited_file": EDITED_FILE,
            "search": "keyword leg only (allow_embed=False)",
            "query_every": QUERY_EVERY,
        },
        "metric": {"index": "seconds per box.index_code run", "search": "ms per box.search"},
        "results": results,
        "goals": {"full_index_1000_files_seconds": 30, "one_edit_reindex_seconds": 1},
        "python": platform.python_version(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeats", type=int, default=DEFAULT_REPEATS)
    parser.add_argument("--dataset", choices=sorted(DATASETS), action="append")
    args = parser.parse_args()
    result = run(args.repeats, args.dataset or list(DATASETS))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    keys = ("seconds", "cpu_seconds", "search_ms")
    json.dump([{k: r[k] for k in keys} for r in result["results"]], sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
