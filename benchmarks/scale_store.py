"""The store's own parts of ``benchmarks/scale.py`` at one size (#14 items 2, 3 and the cold
open): ingest, bytes per index, ingest on top of the history, cold open and search memory.

* ``ingest`` — timed while the history was built (``scale_build.py``): ``append_many`` and
  single ``append`` messages/s (wall, and per CPU-second of the writing thread, the literal
  index following behind on its background thread), and all indexes included (every thread of
  the process, the generator's own CPU taken out);
* ``ingest_at`` — 5 000 batched + 1 000 single messages appended on top of the whole history
  (``scale_ingest_at.py``), on a copy of the database, until the literal index caught up;
* ``storage`` — file size and bytes per message per index (``scale_size.py``);
* ``probe`` — a fresh process opening the database and searching (``scale_probe.py``).

Search timings (``search_memory``, keyword, hybrid) are the other parts of ``scale.py``; they
add their operations to the same dataset entry.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import scale_data as data
import scale_ingest_at
from scale_probe import OPERATIONS, run_probe
from scale_size import storage

INGEST_AT_BATCHED = 5_000
INGEST_AT_SINGLE = 1_000


def ingest_on_top(db: Path) -> dict[str, Any]:
    """:func:`scale_ingest_at.measure` on a copy of ``db`` (the cached history is unchanged)."""
    with tempfile.TemporaryDirectory(prefix="recallbox-ingest-at-", dir=db.parent) as tmp:
        copy = Path(tmp) / db.name
        subprocess.run(["cp", "--reflink=auto", str(db), str(copy)], check=True)
        for suffix in ("-wal", "-shm"):
            if Path(str(db) + suffix).exists():
                shutil.copyfile(str(db) + suffix, str(copy) + suffix)
        return scale_ingest_at.measure(copy, INGEST_AT_BATCHED, INGEST_AT_SINGLE)


def store_parts(db: Path, meta: dict[str, Any], *, ingest_at: bool = True) -> dict[str, Any]:
    """The dataset entry of one size with the store's parts only (see the module docs)."""
    size = int(meta["size"])
    queries = [q.text for q in data.query_mix(size, int(meta["identifiers"]))]
    print(f"[{size:,}] size per index", flush=True)
    out: dict[str, Any] = {
        "dataset": f"synthetic-{size}",
        "size": size,
        "parameters": {k: v for k, v in meta.items() if k not in ("ingest", "db", "export_path")},
        "ingest": meta.get("ingest", {}),
        "storage": storage(db, int(meta["messages"])),
        "operations": {},
    }
    if ingest_at:
        print(f"[{size:,}] ingest on top of the history (a copy)", flush=True)
        out["ingest_at"] = ingest_on_top(db)
    print(f"[{size:,}] probe: cold open and search memory", flush=True)
    out["probe"] = run_probe(db, queries)
    # the same with one operation each: which one's memory grows with the history
    out["probe_by_operation"] = {
        operation: {
            key: value
            for key, value in run_probe(db, queries, operations=(operation,)).items()
            if key in ("peak_over_open_mib", "peak_rss_mib")
        }
        for operation in OPERATIONS
    }
    return out
