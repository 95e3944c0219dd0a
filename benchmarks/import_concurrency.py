"""A live writer during a long transcript import (#14 item 2): does `append` go on?

    nice -n 10 .venv/bin/python benchmarks/import_concurrency.py            # 100 000 records
    .venv/bin/python benchmarks/import_concurrency.py --records 20000      # a quick run

The synthetic Claude Code session of ``import_throughput.py`` is imported by another process
while this one appends a message and reads it back (``read_message``) every
``APPEND_EVERY_S``, as an agent's hook or MCP server would. Two modes, each into a fresh
database: ``batches`` (the import as shipped: a commit every ``COMMIT_EVERY_RECORDS`` records
or ``COMMIT_EVERY_SECONDS``, smaller batches when their writes took longer),
``fixed_batches`` (batches that never shrink) and ``one_transaction`` (the batch limits
lifted: the whole file in one write transaction, as before). For each: the import's wall time
and records/s, and the appends — how many succeeded, how many failed with "locked", latency
p50/p95/max.

Results go to ``benchmarks/results/import_concurrency.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

from import_throughput import (  # noqa: E402
    SyntheticSession,
    _commit,
    _percentiles,
)

RESULTS = HERE / "results" / "import_concurrency.json"
DEFAULT_RECORDS = 100_000
APPEND_EVERY_S = 0.05
MODES = ("batches", "fixed_batches", "one_transaction")

IMPORTER = """
import json, sys, time
import recallbox
from recallbox.importers import sync
if sys.argv[3] == "one_transaction":
    sync.COMMIT_EVERY_RECORDS = 10**12
    sync.COMMIT_EVERY_SECONDS = float("inf")
if sys.argv[3] == "fixed_batches":
    sync.MIN_BATCH_RECORDS = sync.COMMIT_EVERY_RECORDS
started = time.perf_counter()
with recallbox.open(sys.argv[1]) as box:
    report = box.import_transcripts("claude-code", sys.argv[2])
print(json.dumps({"seconds": time.perf_counter() - started, "records": report.records,
                  "errors": [f.error for f in report.files if f.error]}))
"""


def run_mode(session: Path, db: Path, mode: str) -> dict[str, Any]:
    import recallbox

    with recallbox.open(db) as box:
        box.append("live", "user", "before the import")
    importer = subprocess.Popen(
        [sys.executable, "-c", IMPORTER, str(db), str(session), mode],
        stdout=subprocess.PIPE,
        text=True,
    )
    latencies: list[float] = []
    failures = 0
    with recallbox.open(db) as box:
        while importer.poll() is None:
            started = time.perf_counter()
            try:
                message = box.append("live", "user", f"appended during the import {len(latencies)}")
                box.read_message(message.id)
            except recallbox.StoreUnavailable:
                failures += 1
            else:
                latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(APPEND_EVERY_S)
    out, _ = importer.communicate()
    imported = json.loads(out)
    assert not imported["errors"], imported
    return {
        "import_seconds": round(imported["seconds"], 2),
        "records": imported["records"],
        "records_per_s": round(imported["records"] / imported["seconds"]),
        "appends_ok": len(latencies),
        "appends_failed_locked": failures,
        "append_and_read_ms": {**_percentiles(latencies), "max": round(max(latencies), 2)}
        if latencies
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=DEFAULT_RECORDS)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="recallbox-bench-") as work:
        session = Path(work) / "session.jsonl"
        SyntheticSession().write(session, args.records)
        for mode in args.modes:
            results[mode] = run_mode(session, Path(work) / f"{mode}.db", mode)
            print(mode, json.dumps(results[mode]), flush=True)
    document = {
        "benchmark": "import_concurrency",
        "commit": _commit(),
        "dataset": f"synthetic Claude Code session (import_throughput.py), {args.records} records",
        "parameters": {"append_every_s": APPEND_EVERY_S, "modes": args.modes},
        "metric": "append + read_message latency in another process during the import (ms)",
        "results": results,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
