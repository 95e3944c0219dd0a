"""Benchmark: the transcript importer's own writes, and the same import with every index written.

``import_throughput.py`` times whole imports until every index has caught up. This one splits
them (#14's ingest target covers importers): each round writes the synthetic Claude Code
session of ``import_throughput.py`` (``--records`` records) into a fresh SQLite file with the
background literal indexer paused — the importer's writes alone, ranked indexes, transcript
chunks and import ledger included — then drains the literal index on the same thread. Reports
messages/s of the writes (wall, and per CPU-second of the process), of the drain, and of the
two together ("all indexed"), each round and their medians.

Usage::

    python benchmarks/import_writes.py --records 25000 --rounds 5

Writes ``benchmarks/results/import_writes.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import import_throughput as session  # noqa: E402

import recallbox  # noqa: E402

RESULTS = HERE / "results" / "import_writes.json"
FIGURES = (
    "messages_per_s_writes",
    "messages_per_cpu_s_writes",
    "messages_per_s_drain",
    "messages_per_s_all_indexed",
)


def one_round(path: Path, workdir: Path) -> dict[str, Any]:
    """Import ``path`` into a fresh file, the literal indexer paused; then drain it."""
    with recallbox.open(workdir / "import.db") as box:
        box.store.indexer.stop()
        wall, cpu = time.perf_counter(), time.process_time()
        report = box.import_transcripts("claude-code", path)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        queued = box.store.indexer.pending()
        drain = time.perf_counter()
        box.store.indexer.drain()
        drain = time.perf_counter() - drain
    return {
        "messages": queued,
        "files_with_errors": len(report.errors),
        "messages_per_s_writes": round(queued / wall),
        "messages_per_cpu_s_writes": round(queued / cpu),
        "messages_per_s_drain": round(queued / drain),
        "messages_per_s_all_indexed": round(queued / (wall + drain)),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=25_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory(prefix="recallbox-import-writes-") as directory:
        root = Path(directory)
        path = root / f"{session.SESSION_ID}.jsonl"
        session.SyntheticSession().write(path, args.records)
        for number in range(args.rounds):
            workdir = root / f"round-{number}"
            workdir.mkdir()
            rounds.append(one_round(path, workdir))
            print(json.dumps(rounds[-1]), flush=True)
    medians = {key: statistics.median(r[key] for r in rounds) for key in FIGURES}
    report = {
        "benchmark": "import_writes",
        "metric": "messages/s: importer writes (literal indexer paused), drain, all indexed",
        "commit": session._commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/import_writes.py " + " ".join(sys.argv[1:]),
        "dataset": "synthetic Claude Code session (benchmarks/import_throughput.py)",
        "parameters": {"records": args.records, "rounds": args.rounds},
        "medians": medians,
        "rounds": rounds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(medians))


if __name__ == "__main__":
    main()
