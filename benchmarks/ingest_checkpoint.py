"""Benchmark: ``append_many`` on a big history with the WAL checkpointed every N pages (#14).

A same-run A/B of ``PRAGMA wal_autocheckpoint`` (SQLite's default, 1 000 pages, against the
store's :data:`~recallbox.storage.sqlite.connection.WAL_AUTOCHECKPOINT_PAGES`): the settings
take turns, ``--rounds`` times each, every turn writing ``--messages`` new messages of the
scale history's kind (``scale_data.Writer``) by ``append_many`` in batches of
:data:`scale_data.APPEND_MANY_BATCH` into ``--db`` (a copy of a cached scale history: it grows),
with the literal indexer paused so that only the writes are timed. Reports wall and writer-CPU
messages/s of each turn and each setting's medians.

Usage::

    python benchmarks/ingest_checkpoint.py --db COPY/scale-1000000-v1.db --rounds 6

Writes ``benchmarks/results/ingest_checkpoint.json``.
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

import apsw  # noqa: E402
import scale_data as data  # noqa: E402

import recallbox  # noqa: E402
from recallbox.storage.sqlite import connection  # noqa: E402

RESULTS = HERE / "results" / "ingest_checkpoint.json"
SQLITE_DEFAULT_PAGES = 1_000


def _turn(db: Path, pages: int, items: list[dict[str, Any]], channel: str) -> dict[str, Any]:
    """One turn: ``items`` by ``append_many`` with the WAL checkpointed every ``pages``."""
    real = connection.ConnectionPool._open

    def opened(pool: connection.ConnectionPool) -> apsw.Connection:
        conn = real(pool)
        conn.execute(f"PRAGMA wal_autocheckpoint = {pages}")
        return conn

    connection.ConnectionPool._open = opened  # type: ignore[method-assign]
    try:
        with recallbox.open(db) as box:
            box.store.indexer.stop()
            box.store.pool.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            wall = cpu = 0.0
            for at in range(0, len(items), data.APPEND_MANY_BATCH):
                w, c = time.perf_counter(), time.thread_time()
                box.append_many(channel, items[at : at + data.APPEND_MANY_BATCH])
                wall += time.perf_counter() - w
                cpu += time.thread_time() - c
    finally:
        connection.ConnectionPool._open = real  # type: ignore[method-assign]
    return {
        "pages": pages,
        "messages_per_s": round(len(items) / wall),
        "messages_per_cpu_s": round(len(items) / cpu),
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from scale import commit  # not at the top: scale.py imports the benchmark modules

    settings = (SQLITE_DEFAULT_PAGES, connection.WAL_AUTOCHECKPOINT_PAGES)
    turns = args.rounds * len(settings)
    writer = data.Writer(data.Corpus(), args.messages * turns)
    run = int(time.time())
    results = []
    for turn in range(turns):
        pages = settings[turn % len(settings)]
        items = [writer.message(turn * args.messages + i) for i in range(args.messages)]
        results.append(_turn(args.db, pages, items, f"checkpoint-{run}-{turn}"))
        print(json.dumps(results[-1]), flush=True)
    medians = {
        str(pages): {
            key: statistics.median(r[key] for r in results if r["pages"] == pages)
            for key in ("messages_per_s", "messages_per_cpu_s")
        }
        for pages in settings
    }
    report = {
        "benchmark": "ingest_checkpoint",
        "metric": "append_many messages/s (wall, writer CPU), literal indexer paused",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/ingest_checkpoint.py " + " ".join(sys.argv[1:]),
        "parameters": {
            "messages": args.messages,
            "rounds": args.rounds,
            "batch": data.APPEND_MANY_BATCH,
        },
        "medians": medians,
        "turns": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(medians))


if __name__ == "__main__":
    main()
