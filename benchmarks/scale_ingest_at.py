"""Benchmark: ingest on top of a big history (#14 item 2) — ``append_many`` and ``append``.

Writes ``--messages`` new messages of the scale history's kind (``scale_data.Writer``) into
``--db`` (a cached scale history: it grows by that many), in new threads: ``append_many`` in
batches of :data:`scale_data.APPEND_MANY_BATCH`, then ``--single`` messages one ``append`` at
a time. Reports wall and CPU (the writing thread's) messages/s of each, and how long the
background literal indexer then needs to catch up (``messages_per_s_all_indexed``). CPU time
is the figure a shared, oversubscribed machine distorts least.

Usage::

    python benchmarks/scale_ingest_at.py --db CACHE/scale-N-v1.db --messages 5000 --single 1000

Merges one entry per history size into ``benchmarks/results/scale_ingest_at.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402
import scale_data as data  # noqa: E402

import recallbox  # noqa: E402

RESULTS = HERE / "results" / "scale_ingest_at.json"
PROBE_CHANNEL = "ingest-probe-{run}-{kind}"


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def _history(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    count = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    conn.close()
    return count


def measure(db: Path, messages: int, single: int) -> dict[str, Any]:
    """Append ``messages`` (batched) then ``single`` messages (one by one) into ``db``."""
    history = _history(db)
    writer = data.Writer(data.Corpus(), messages + single)
    items = [writer.message(i) for i in range(messages + single)]
    run = int(time.time())
    out: dict[str, Any] = {"history_messages": history}
    with recallbox.open(db) as box:
        box.store.indexer.drain()  # start from an indexed history
        started, started_cpu = time.perf_counter(), time.process_time()
        wall = cpu = 0.0
        channel = PROBE_CHANNEL.format(run=run, kind="many")
        for at in range(0, messages, data.APPEND_MANY_BATCH):
            batch = items[at : min(messages, at + data.APPEND_MANY_BATCH)]
            w, c = time.perf_counter(), time.thread_time()
            box.append_many(channel, batch)
            wall += time.perf_counter() - w
            cpu += time.thread_time() - c
        out["append_many"] = {
            "messages": messages,
            "batch": data.APPEND_MANY_BATCH,
            "seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "messages_per_s": _rate(messages, wall),
            "messages_per_cpu_s": _rate(messages, cpu),
        }
        wall = cpu = 0.0
        channel = PROBE_CHANNEL.format(run=run, kind="single")
        for item in items[messages:]:
            w, c = time.perf_counter(), time.thread_time()
            box.append(channel, **item)
            wall += time.perf_counter() - w
            cpu += time.thread_time() - c
        out["append"] = {
            "messages": single,
            "seconds": round(wall, 2),
            "cpu_seconds": round(cpu, 2),
            "messages_per_s": _rate(single, wall),
            "messages_per_cpu_s": _rate(single, cpu),
        }
        written = time.perf_counter()
        backlog = box.store.indexer.pending()
        box.store.indexer.drain()
        caught_up, process_cpu = time.perf_counter(), time.process_time() - started_cpu
    out["literal_index"] = {
        "backlog_when_writes_ended": backlog,
        "catch_up_seconds": round(caught_up - written, 1),
        "messages_per_s_all_indexed": _rate(messages + single, caught_up - started),
    }
    # every thread (the writer and the background literal indexer) until all is indexed
    out["all_indexed"] = {
        "process_cpu_seconds": round(process_cpu, 2),
        "messages_per_process_cpu_s": _rate(messages + single, process_cpu),
    }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--single", type=int, default=1_000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from scale import commit  # not at the top: scale.py imports this module

    entry = measure(args.db, args.messages, args.single)
    entry["commit"] = commit()
    entry["created_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    entry["command"] = "python benchmarks/scale_ingest_at.py " + " ".join(sys.argv[1:])
    results = (
        json.loads(args.out.read_text(encoding="utf-8"))
        if args.out.exists()
        else {"benchmark": "scale_ingest_at", "metric": "messages/s written, wall and CPU"}
    )
    results.setdefault("runs", {})[str(entry["history_messages"])] = entry
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(entry, indent=1))


if __name__ == "__main__":
    main()
