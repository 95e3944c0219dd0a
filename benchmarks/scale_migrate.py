"""Benchmark: upgrading a database written by the previous release in place (#14 item 6).

Copies ``--db`` (a scale history built with the previous release's code, schema 4) unless
``--in-place``, opens it with this code — which applies the numbered migrations (literal index
by thread, text stored once) with their progress logged — and reports the time of each, the
file size and the bytes per table group before and after, and ``doctor``'s verdict.

Usage::

    python benchmarks/scale_migrate.py --db OLD.db --work COPY.db [--in-place]

Merges one entry per database (keyed by its message count) into
``benchmarks/results/scale_migrate.json``.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402
from scale import commit  # noqa: E402
from scale_size import storage  # noqa: E402

import recallbox  # noqa: E402

RESULTS = HERE / "results" / "scale_migrate.json"


class Timeline(logging.Handler):
    """Collects the migration progress records: when each migration reported, how far."""

    def __init__(self) -> None:
        super().__init__()
        self.started = time.perf_counter()
        self.last: dict[str, tuple[float, int, int]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        name = getattr(record, "migration", None)
        if name is not None:
            elapsed = time.perf_counter() - self.started
            self.last[name] = (elapsed, int(record.done), int(record.total))  # type: ignore[attr-defined]
            print(f"  {elapsed:7.1f} s  {name}: {record.done}/{record.total}", flush=True)  # type: ignore[attr-defined]


def _version(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    messages = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    conn.close()
    return int(row[0]) * 10**12 + messages


def _freelist(db: Path) -> int:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    pages = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    conn.close()
    return pages * size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--work", type=Path, help="where the copy goes")
    parser.add_argument("--in-place", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    db = args.db if args.in_place else args.work
    if not args.in_place:
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(args.db) + suffix)
            if source.exists():
                shutil.copyfile(source, str(db) + suffix)
    coded = _version(db)
    version, messages = divmod(coded, 10**12)
    before = storage(db, messages)
    timeline = Timeline()
    log = logging.getLogger("recallbox.storage.sqlite.migrations")
    log.addHandler(timeline)
    log.setLevel(logging.INFO)
    started = time.perf_counter()
    with recallbox.open(db) as box:
        opened = time.perf_counter() - started
        report = box.doctor()
    after = storage(db, messages)
    entry: dict[str, Any] = {
        "commit": commit(),
        "messages": messages,
        "from_schema": version,
        "migration_seconds": round(opened, 1),
        "per_migration_seconds": {},
        "before": before,
        "after": after,
        "free_bytes_after": _freelist(db),
        "doctor_healthy": report.healthy,
    }
    previous = 0.0
    for name, (elapsed, _, _) in sorted(timeline.last.items(), key=lambda kv: kv[1][0]):
        entry["per_migration_seconds"][name] = round(elapsed - previous, 1)
        previous = elapsed
    results = json.loads(args.out.read_text()) if args.out.exists() else {"benchmark": "scale_migrate"}
    results.setdefault("runs", {})[str(messages)] = entry
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({k: v for k, v in entry.items() if k not in ("before", "after")}, indent=1))


if __name__ == "__main__":
    main()
