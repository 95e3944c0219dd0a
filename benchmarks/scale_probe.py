"""The cold-open and search-RSS probe of ``benchmarks/scale.py``: a fresh process that opens a
scale database and searches it, and nothing else.

Run as its own script (``python benchmarks/scale_probe.py DB QUERIES.json``) so the process
holds only what a real cold start holds: the interpreter, recallbox and the database — not the
benchmark's baselines. It reports, as one JSON line:

* ``import_ms`` — ``import recallbox``;
* ``open_ms`` — ``recallbox.open(db)`` (the migrations check, the schema, the indexer's
  backlog look);
* ``first_search_ms`` — the first ``search_memory`` after opening, and
  ``open_and_first_search_ms`` the two together (the cold open: a process opening the
  database and answering); each also in CPU time (``*_cpu_ms``: what a loaded machine
  distorts least);
* ``rss_before_open_mib`` / ``peak_rss_mib`` — resident memory after the imports, and the peak
  while opening and answering every query with ``search_memory`` and keyword ``search``;
  ``peak_over_open_mib`` is what opening and searching added. The peak is reset after the
  imports (``/proc/self/clear_refs``), so it measures the store, not the interpreter;
  ``peak_raised_most_by`` names the calls that raised the peak most (what to look at when it
  grows with the history).

A history-size-independent search keeps ``peak_over_open_mib`` flat from 10k to 1M messages.
"""

from __future__ import annotations

import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
KIB_PER_MIB = 1024
PEAK_RAISERS_SHOWN = 5


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (``VmRSS``, ``VmHWM``); 0 where there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _peak_kib() -> int:
    return _status_kib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


OPERATIONS = ("search_memory", "search")


def probe(db: Path, queries: list[str], operations: tuple[str, ...] = OPERATIONS) -> dict[str, Any]:
    """Import recallbox, open ``db``, answer every query with each of ``operations``
    (``search_memory``, keyword ``search``); times and resident memory."""
    started, started_cpu = time.perf_counter(), time.process_time()
    sys.path.insert(0, str(HERE.parent / "src"))
    import recallbox

    imported, imported_cpu = time.perf_counter(), time.process_time()
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak to the current RSS
    rss_before = _status_kib("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    opened_at, opened_at_cpu = time.perf_counter(), time.process_time()
    box = recallbox.open(db)
    opened, opened_cpu = time.perf_counter(), time.process_time()
    box.search_memory(queries[0])
    first, first_cpu = time.perf_counter(), time.process_time()
    rss_opened = _status_kib("VmRSS")
    raised: list[tuple[int, str, str]] = []  # (peak raised by, KiB; operation; query)
    for query in queries:
        runs = {"search_memory": box.search_memory,
                "search": lambda q: box.search(q, allow_embed=False)}  # fmt: skip
        for operation in operations:
            run = runs[operation]
            before = _peak_kib()
            run(query)
            raised.append((_peak_kib() - before, operation, query))
    box.close()
    peak = _peak_kib()
    raised.sort(reverse=True)
    return {
        "import_ms": round((imported - started) * 1000, 1),
        "open_ms": round((opened - opened_at) * 1000, 1),
        "first_search_ms": round((first - opened) * 1000, 1),
        "open_and_first_search_ms": round((first - opened_at) * 1000, 1),
        "import_cpu_ms": round((imported_cpu - started_cpu) * 1000, 1),
        "open_cpu_ms": round((opened_cpu - opened_at_cpu) * 1000, 1),
        "open_and_first_search_cpu_ms": round((first_cpu - opened_at_cpu) * 1000, 1),
        "rss_before_open_mib": round(rss_before / KIB_PER_MIB, 1),
        "rss_after_first_search_mib": round(rss_opened / KIB_PER_MIB, 1),
        "peak_rss_mib": round(peak / KIB_PER_MIB, 1),
        "peak_over_open_mib": round((peak - rss_before) / KIB_PER_MIB, 1),
        "queries": len(queries),
        "peak_raised_most_by": [
            {"operation": op, "query": query[:60], "mib": round(kib / KIB_PER_MIB, 1)}
            for kib, op, query in raised[:PEAK_RAISERS_SHOWN]
            if kib > 0
        ],
    }


def run_probe(
    db: Path, queries: list[str], *, repeats: int = 3, operations: tuple[str, ...] = OPERATIONS
) -> dict[str, Any]:
    """:func:`probe` in ``repeats`` fresh processes; each figure's median, and every run."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(queries, fh)
    runs = []
    try:
        for _ in range(repeats):
            out = subprocess.run(
                [sys.executable, __file__, str(db), fh.name, ",".join(operations)],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        Path(fh.name).unlink()
    result: dict[str, Any] = {
        key: sorted(run[key] for run in runs)[len(runs) // 2]
        for key in runs[0]
        if isinstance(runs[0][key], int | float)
    }
    result["runs"] = runs
    return result


def main() -> None:
    db, queries = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text(encoding="utf-8"))
    operations = tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else OPERATIONS
    print(json.dumps(probe(db, queries, operations)))


if __name__ == "__main__":
    main()
