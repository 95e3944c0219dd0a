"""Benchmark: the literal indexer's batches, streams computed inline vs beside the trigram
insert (#14 ingest), alternated batch by batch in one drain.

Appends ``--messages`` messages of the scale history's kind (``scale_data.Writer``) into
``--db`` (a cached scale history: it grows by that many each round) with the background indexer
stopped, then drains the backlog in batches of the default size, one batch computing its word
and CJK streams inline (``serial``), the next on the stream worker while SQLite writes the
trigram index (``overlapped``), and so on: both modes meet the same index state, merges and
machine load. Reports per mode the messages indexed per second of write lock (the time a batch
holds it) and the lock hold p50/p95/max per batch, per round and as medians over the rounds.

Usage::

    python benchmarks/literal_drain_ab.py --db CACHE/scale-1000000-v1.db --messages 15000

Writes ``benchmarks/results/literal_drain_ab.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import scale_data as data  # noqa: E402
from scale import commit  # noqa: E402

import recallbox  # noqa: E402
from recallbox.storage.sqlite import literal_index  # noqa: E402

RESULTS = HERE / "results" / "literal_drain_ab.json"
#: A threshold no batch reaches: the batch computes its streams inline.
INLINE = 1 << 62
MODES = {"serial": INLINE, "overlapped": literal_index.OVERLAP_MIN_BYTES}
PERCENTILE_95 = 0.95


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(PERCENTILE_95 * len(ordered)))]


def drain_round(db: Path, items: list[dict[str, Any]], channel: str) -> dict[str, Any]:
    """Append ``items``, then drain alternating the modes; per-mode figures."""
    holds: dict[str, list[float]] = {mode: [] for mode in MODES}
    taken: dict[str, int] = dict.fromkeys(MODES, 0)
    with recallbox.open(db) as box:
        box.store.indexer.stop()
        box.store.indexer.drain()
        box.append_many(channel, items)
        pool = box.store.pool
        turn = 0
        while True:
            mode = list(MODES)[turn % len(MODES)]
            literal_index.OVERLAP_MIN_BYTES = MODES[mode]
            started = time.perf_counter()
            with pool.transaction() as conn:
                count = literal_index.index_backlog(conn)
            if not count:
                break
            holds[mode].append(time.perf_counter() - started)
            taken[mode] += count
            turn += 1
    literal_index.OVERLAP_MIN_BYTES = MODES["overlapped"]
    return {
        mode: {
            "batches": len(holds[mode]),
            "messages": taken[mode],
            "messages_per_lock_s": round(taken[mode] / sum(holds[mode])),
            "hold_p50_s": round(statistics.median(holds[mode]), 3),
            "hold_p95_s": round(_p95(holds[mode]), 3),
            "hold_max_s": round(max(holds[mode]), 3),
        }
        for mode in MODES
        if holds[mode]
    } | {"load1": round(os.getloadavg()[0], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--messages", type=int, default=15_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    writer = data.Writer(data.Corpus(), args.messages * args.rounds)
    run = int(time.time())
    rounds = []
    for number in range(args.rounds):
        at = number * args.messages
        items = [writer.message(at + i) for i in range(args.messages)]
        rounds.append(drain_round(args.db, items, f"drain-ab-{run}-{number}"))
        print(json.dumps(rounds[-1]), flush=True)
    medians = {
        mode: {
            key: statistics.median(r[mode][key] for r in rounds)
            for key in ("messages_per_lock_s", "hold_p50_s", "hold_p95_s", "hold_max_s")
        }
        for mode in MODES
    }
    ratio = medians["overlapped"]["messages_per_lock_s"] / medians["serial"]["messages_per_lock_s"]
    entry = {
        "benchmark": "literal_drain_ab",
        "metric": "messages indexed per second of write lock, lock hold per batch",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/literal_drain_ab.py " + " ".join(sys.argv[1:]),
        "parameters": {
            "db": args.db.name,
            "messages_per_round": args.messages,
            "rounds": args.rounds,
            "batch_bytes": literal_index.INDEX_BATCH_BYTES,
            "cpus": os.cpu_count(),
        },
        "rounds": rounds,
        "medians": medians,
        "overlapped_over_serial": round(ratio, 3),
    }
    args.out.write_text(json.dumps(entry, indent=1) + "\n", encoding="utf-8")
    print(
        json.dumps({"medians": medians, "overlapped_over_serial": entry["overlapped_over_serial"]})
    )


if __name__ == "__main__":
    main()
