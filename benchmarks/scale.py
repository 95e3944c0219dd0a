"""Benchmark: how recallbox's cost grows with history — 10k, 100k and 1M messages (#14).

For each size, a deterministic synthetic agent history (``benchmarks/scale_data.py``) is
written once through the public API and cached under ``--workdir``; then, each beside same-run
baselines (``benchmarks/scale_baselines.py``):

* ingest messages/s through ``append_many`` and single ``append`` (timed while building);
* file size and bytes per message per index (``dbstat``): content, FTS, trigram, vectors;
* ``search_memory`` p50/p95, global and thread-scoped (the public verb, and its literal part
  alone), against the naive Python scan, ``grep -F`` and ripgrep over an export of the text;
  how many answers equal the naive (complete) answer, and how many carry a candidate-cap note;
* keyword ``search`` p50/p95 against ``bm25s``; hybrid ``search`` (hashing-embedder vectors)
  against an exact numpy nearest-neighbour scan;
* the acceptance plants (a) and (b), and the 120 × 60 000-character stress thread;
* peak RSS and cold-open time of a fresh search process.

Usage::

    python benchmarks/scale.py --sizes 10000,100000 --workdir /path/to/cache
    python benchmarks/scale.py --sizes 1000000 --workdir /path/to/cache   # merges into the JSON
    python benchmarks/scale.py --ci            # 10k; fails on a > 3x ratio regression

Results are merged by size into ``benchmarks/results/scale.json`` (commit, dataset,
parameters, metric, p50/p95) and plotted to ``benchmarks/results/scale.png``. Latencies are
quoted beside their same-run baseline; the ``--ci`` check compares ratios, never times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

import apsw  # noqa: E402
import scale_build  # noqa: E402
import scale_data as data  # noqa: E402
import scale_literal as literal  # noqa: E402
import scale_ranked as ranked  # noqa: E402
import scale_store  # noqa: E402
from scale_ci import ci_check  # noqa: E402
from scale_plot import plot  # noqa: E402
from scale_probe import run_probe  # noqa: E402
from scale_size import storage  # noqa: E402

import recallbox  # noqa: E402
from recallbox.domains.threads import search_literal  # noqa: E402

RESULTS = HERE / "results" / "scale.json"
PLOT = HERE / "results" / "scale.png"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
CI_SIZE = 10_000
TIMED_PASSES = 2
CAP_NOTES = literal.CAP_NOTES

def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


class Timings(list[float]):
    """Wall-clock seconds per call, with the process CPU seconds of each call in ``cpu``
    (CPU time is what a shared, oversubscribed machine distorts least)."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: list[float] = []


def summary(values: list[float]) -> dict[str, float]:
    out = {
        "p50_ms": round(percentile(values, 50) * 1000, 3),
        "p95_ms": round(percentile(values, 95) * 1000, 3),
        "mean_ms": round(statistics.fmean(values) * 1000, 3),
        "samples": len(values),
    }
    cpu = getattr(values, "cpu", None)
    if cpu:
        out["cpu_p50_ms"] = round(percentile(cpu, 50) * 1000, 3)
        out["cpu_p95_ms"] = round(percentile(cpu, 95) * 1000, 3)
    return out


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--", "src") else "")


def timed(
    fn: Callable[[str], Any], queries: list[str], passes: int, warmup: bool = True
) -> tuple[list[float], list[Any]]:
    """Run ``fn`` over ``queries`` (a warm-up pass, then ``passes`` timed passes)."""
    if warmup:
        for query in queries:
            fn(query)
    timings = Timings()
    outputs: list[Any] = []
    for _ in range(passes):
        outputs = []
        for query in queries:
            cpu = time.process_time()
            started = time.perf_counter()
            outputs.append(fn(query))
            timings.append(time.perf_counter() - started)
            timings.cpu.append(time.process_time() - cpu)
    return timings, outputs


# -- one dataset ---------------------------------------------------------------------------


def _op(metric: str, index: list[float], baselines: dict[str, list[float]]) -> dict[str, Any]:
    idx = summary(index)
    out: dict[str, Any] = {
        "metric": metric,
        "index": idx,
        "baselines": {},
        "ratio_p95": {},
        "ratio_cpu_p95": {},
    }
    for name, values in baselines.items():
        b = summary(values)
        out["baselines"][name] = b
        out["ratio_p95"][name] = round(idx["p95_ms"] / b["p95_ms"], 3) if b["p95_ms"] else None
        if b.get("cpu_p95_ms") and "cpu_p95_ms" in idx:
            out["ratio_cpu_p95"][name] = round(idx["cpu_p95_ms"] / b["cpu_p95_ms"], 3)
    return out


def index_only(
    db: Path,
    meta: dict[str, Any],
    *,
    passes: int,
    with_literal: bool = True,
    bm25: bool = False,
    vectors: bool = False,
) -> dict[str, Any]:
    """The index side of :func:`run_dataset` alone, for a history too big to scan on a busy
    machine: latencies, the plants checked against what the generator planted (plant (a):
    the one planted message is the only hit; plant (b): the newest generation first and a
    "more hits" count that is at most the planted count left), cold open and peak RSS.
    ``with_literal=False`` skips ``search_memory``; ``bm25``/``vectors`` add the ranked
    baselines (``bm25s``, numpy KNN: an in-memory copy of every text or vector) and hybrid."""
    size = int(meta["size"])
    mix = data.query_mix(size, int(meta["identifiers"]))
    queries = [q.text for q in mix]
    meta = {**meta, "db": str(db)}
    channels = literal.channels_for(meta)
    channel_of = {q: channels[i % len(channels)] for i, q in enumerate(queries)}
    print(f"[{size:,}] index only: {len(queries)} queries, {passes} timed passes", flush=True)
    ops: dict[str, Any] = {}
    plant: dict[str, Any] = {}
    g_out: list[Any] = []
    if with_literal:
        with recallbox.open(db) as box:
            g_times, g_out = timed(lambda q: box.search_memory(q), queries, passes)
            t_times, _ = timed(lambda q: box.search_memory(q, channel_of[q]), queries, passes)
            l_times, _ = timed(
                lambda q: search_literal(box.store, q, channel_of[q]), queries, passes
            )
            plant = index_plants(box, meta)
        ops.update(
            search_memory_global=_op(
                "search_memory(query): global literal search, ms", g_times, {}
            ),
            search_memory_thread=_op(
                "search_memory(query, channel): literal part + other-memory answerer, ms",
                t_times,
                {},
            ),
            search_memory_thread_literal=_op(
                "literal part of search_memory(query, channel) alone, ms", l_times, {}
            ),
        )
    keyword, facts = ranked.keyword_ops(
        db, queries, channel_of, passes=passes, bm25=bm25, timed=timed, op=_op
    )
    ops.update(keyword)
    if vectors and meta.get("embedded"):
        print(f"[{size:,}] hybrid search", flush=True)
        ops.update(ranked.hybrid_ops(db, queries, channel_of, passes=passes, timed=timed, op=_op))
    print(f"[{size:,}] probe: cold open and peak RSS", flush=True)
    return {
        "dataset": f"synthetic-{size}",
        "size": size,
        "commit": commit(),
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "index_only": True,
        "parameters": {k: v for k, v in meta.items() if k not in ("ingest", "db", "export_path")},
        "ingest": meta.get("ingest", {}),
        "operations": ops,
        "correctness": {
            "global_with_cap_note": sum(any(n in r for n in CAP_NOTES) for r in g_out),
            "queries": len(queries),
            "plants": plant,
            **facts,
        },
        "probe": run_probe(db, queries),
        "queries": [{"text": q.text, "band": q.band, "kind": q.kind} for q in mix],
    }


def index_plants(box: recallbox.Box, meta: dict[str, Any]) -> dict[str, Any]:
    """Plants (a) and (b) checked against what the generator planted (no naive scan)."""
    plant: dict[str, Any] = {}
    for name, query, channel in (
        ("a_global", data.PLANT_A, None),
        ("a_thread", data.PLANT_A, data.channel_name(0)),
        ("b_global", data.PLANT_B, None),
        ("b_thread", data.PLANT_B, data.PLANT_B_CHANNEL),
    ):
        started = time.perf_counter()
        text = search_literal(box.store, query, channel)
        entry: dict[str, Any] = {"ms": round((time.perf_counter() - started) * 1000, 1)}
        shown = [ln for ln in text.splitlines() if ln.startswith("[message_id=")]
        if name.startswith("a"):
            entry["found_planted_message"] = meta["plant_a_message_id"] in text
            entry["hits"] = len(shown)
        else:
            gens = sorted({ln.split("generation=")[1].split()[0] for ln in shown})
            notice = next((ln for ln in text.splitlines() if "more hits" in ln), "")
            count = re.search(r"(\d+)\+? more hits", notice)
            left = int(meta["plant_b_messages"]) - len(shown)
            entry.update(
                shown=len(shown),
                generations_shown=gens,
                notice=notice,
                notice_within_planted=bool(count and int(count.group(1)) <= left),
            )
        entry["cap_note"] = any(n in text for n in CAP_NOTES)
        plant[name] = entry
    return plant


def run_dataset(
    db: Path,
    meta: dict[str, Any],
    *,
    passes: int,
    bm25: bool,
    vectors: bool,
    naive_every: int = 1,
    keyword: bool = True,
) -> dict[str, Any]:
    """Every measurement of one size. ``naive_every`` > 1 runs the global full-history
    baselines (naive scan, grep, ripgrep) and the global check against the complete answer on
    every ``naive_every``-th query of the mix only (at 1M one full scan takes seconds); the
    index is timed on every query. ``keyword=False``: ``search_memory`` and the storage only
    (``scale_literal.py``), merged into the size's earlier figures."""
    size = int(meta["size"])
    mix = data.query_mix(size, int(meta["identifiers"]))
    queries = [q.text for q in mix]
    ops, correctness, naive, naive_load = literal.measure(
        db, meta, passes=passes, naive_every=naive_every
    )
    if not keyword:
        naive.rows.clear()
        return {
            "dataset": f"synthetic-{size}",
            "size": size,
            "commit": commit(),
            "parameters": {
                k: v for k, v in meta.items() if k not in ("ingest", "db", "export_path")
            },
            "storage": storage(db, int(meta["messages"])),
            "operations": ops,
            "correctness": correctness,
            "naive_load_seconds": round(naive_load, 1),
            "queries": [{"text": q.text, "band": q.band, "kind": q.kind} for q in mix],
        }
    channels = literal.channels_for({**meta, "db": str(db)})
    channel_of = {q: channels[i % len(channels)] for i, q in enumerate(queries)}
    texts = [r.content for r in naive.rows]
    naive.rows.clear()  # free the scan's copy of the history
    print(f"[{size:,}] keyword search", flush=True)
    keyword_result, facts = ranked.keyword_ops(
        db, queries, channel_of, passes=passes, bm25=bm25, timed=timed, op=_op, texts=texts
    )
    del texts
    ops.update(keyword_result)
    correctness.update(facts)
    if vectors and meta.get("embedded"):
        print(f"[{size:,}] hybrid search", flush=True)
        ops.update(ranked.hybrid_ops(db, queries, channel_of, passes=passes, timed=timed, op=_op))
    parts = scale_store.store_parts(db, meta)  # ingest, size, ingest on top, cold open, RSS
    return {
        "dataset": f"synthetic-{size}",
        "size": size,
        "commit": commit(),
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "parameters": {k: v for k, v in meta.items() if k not in ("ingest", "db", "export_path")},
        "ingest": meta["ingest"],
        "ingest_at": parts.get("ingest_at"),
        "storage": parts["storage"],
        "operations": ops,
        "correctness": correctness,
        "naive_load_seconds": round(naive_load, 1),
        "probe": parts["probe"],
        "probe_by_operation": parts["probe_by_operation"],
        "queries": [{"text": q.text, "band": q.band, "kind": q.kind} for q in mix],
    }


# -- report --------------------------------------------------------------------------------


def merge(previous: dict[str, Any], datasets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Datasets of ``previous`` not rerun now, then the new ones, ordered by size. A dataset
    measured in part updates the earlier one of its size: ``--search-memory-only`` (no
    ``ingest``) its operations one by one and its other fields whole; ``--no-search`` (the
    store's parts: ``store_only``) its store fields, the searches kept."""
    fresh = {d["dataset"]: d for d in datasets}
    out = []
    for old in previous.get("datasets", []):
        new = fresh.get(old["dataset"])
        if new is None:
            out.append(old)
        elif new.get("store_only"):
            fresh[old["dataset"]] = {**old, **new, "operations": old.get("operations", {})}
        elif "ingest" not in new and "operations" in old:
            fresh[old["dataset"]] = {
                **old,
                **new,
                "operations": {**old["operations"], **new["operations"]},
            }
    for entry in fresh.values():
        entry.pop("store_only", None)
    return sorted([*out, *fresh.values()], key=lambda d: d.get("size", 0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)))
    parser.add_argument("--workdir", type=Path, default=None, help="cache of built databases")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--passes", type=int, default=TIMED_PASSES)
    parser.add_argument("--no-bm25s", action="store_true", help="skip the bm25s baseline")
    parser.add_argument("--no-vectors", action="store_true", help="skip vectors and hybrid")
    parser.add_argument("--ci", action="store_true", help="10k, ratio regression check")
    parser.add_argument(
        "--naive-every",
        type=int,
        default=1,
        help="global baselines and completeness check on every N-th query only (for 1M)",
    )
    parser.add_argument(
        "--search-memory-only",
        action="store_true",
        help="search_memory, its baselines and the storage only, merged into earlier figures",
    )
    parser.add_argument(
        "--index-only",
        action="store_true",
        help="no baselines or full-history scans; plants checked against the generator",
    )
    parser.add_argument(
        "--no-search",
        action="store_true",
        help="only the build (ingest), size, ingest-on-top and probe (cold open, RSS) parts",
    )
    parser.add_argument(
        "--ranked-only",
        action="store_true",
        help="keyword and hybrid search with their baselines (bm25s, numpy KNN) only",
    )
    args = parser.parse_args()
    sizes = [CI_SIZE] if args.ci else [int(s) for s in args.sizes.split(",") if s]
    workdir = args.workdir or Path(tempfile.gettempdir()) / "recallbox-scale"
    passes = 1 if args.ci else args.passes
    partial = args.index_only or args.ranked_only
    datasets = [] if partial or args.no_search else [literal.run_stress(workdir, passes)]
    for size in sizes:
        load = os.getloadavg()
        if partial:
            db = scale_build.db_path(workdir, size)
            datasets.append(
                index_only(
                    db,
                    scale_build.load_meta(db),
                    passes=passes,
                    with_literal=not args.ranked_only,
                    bm25=args.ranked_only and not args.no_bm25s,
                    vectors=args.ranked_only and not args.no_vectors,
                )
            )
        else:
            db, meta = scale_build.ensure(
                workdir, size, vectors=not (args.no_vectors or args.search_memory_only)
            )
            if args.no_search:
                datasets.append({**scale_store.store_parts(db, meta), "store_only": True})
            else:
                datasets.append(
                    run_dataset(
                        db,
                        meta,
                        passes=passes,
                        bm25=not args.no_bm25s,
                        vectors=not args.no_vectors,
                        naive_every=max(1, args.naive_every),
                        keyword=not args.search_memory_only,
                    )
                )
        datasets[-1]["load_average"] = {
            "start": [round(x, 2) for x in load],
            "end": [round(x, 2) for x in os.getloadavg()],
        }
    previous = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    if args.ci:
        ref = next((d for d in previous.get("datasets", []) if d.get("size") == CI_SIZE), None)
        failures = ci_check(datasets[-1], ref)
        for line in failures:
            print(f"REGRESSION: {line}", file=sys.stderr)
        print(json.dumps({n: o["ratio_cpu_p95"] or o["ratio_p95"]
                          for n, o in datasets[-1]["operations"].items()}))  # fmt: skip
        sys.exit(1 if failures else 0)
    report = {
        "benchmark": "scale",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "sqlite": apsw.sqlite_lib_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "command": "python benchmarks/scale.py " + " ".join(sys.argv[1:]),
        "generator": {
            "seed": data.SEED,
            "data_version": data.DATA_VERSION,
            "length_median_chars": data.LENGTH_MEDIAN_CHARS,
            "length_sigma": round(data.LENGTH_SIGMA, 3),
            "length_max_chars": data.LENGTH_MAX_CHARS,
            "chinese_share": data.CHINESE_SHARE,
            "thread_messages": data.THREAD_MESSAGES,
            "compact_every": data.COMPACT_EVERY,
        },
        "datasets": merge(previous, datasets),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    plot(report, args.out.with_suffix(".png"))
    print(f"wrote {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
