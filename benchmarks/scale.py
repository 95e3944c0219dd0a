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
import contextlib
import json
import math
import os
import platform
import re
import resource
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

import recallbox  # noqa: E402
from recallbox.domains.threads import search_literal  # noqa: E402

RESULTS = HERE / "results" / "scale.json"
PLOT = HERE / "results" / "scale.png"
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
CI_SIZE = 10_000
CI_REGRESSION_FACTOR = 3.0
TIMED_PASSES = 2
CAP_NOTES = literal.CAP_NOTES
MIB = 1024 * 1024

# dbstat table name -> the index it belongs to (bytes per message per index)
STORAGE_GROUPS = (
    ("messages_fts", "fts"),
    ("messages_trgm", "trigram"),
    ("messages_literal", "literal"),
    ("messages_words", "words"),
    ("literal_backlog", "literal"),
    ("vec_", "vectors"),
    ("embeddings", "vectors"),
    ("transcript_chunks", "transcripts"),
    ("messages", "content"),
    ("sqlite_autoindex_messages", "content"),
)


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


# -- storage -------------------------------------------------------------------------------


def storage(db: Path, messages: int) -> dict[str, Any]:
    """File size and bytes per message per index, from ``dbstat``."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    tables: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        tables[str(name)] = int(size)
    conn.close()
    groups: dict[str, int] = {}
    for name, size in tables.items():
        group = next((g for prefix, g in STORAGE_GROUPS if name.startswith(prefix)), "other")
        groups[group] = groups.get(group, 0) + size
    file_bytes = db.stat().st_size
    return {
        "file_bytes": file_bytes,
        "bytes_per_message": round(file_bytes / messages, 1),
        "bytes_per_message_by_index": {
            g: round(s / messages, 1) for g, s in sorted(groups.items())
        },
        "tables_bytes": dict(sorted(tables.items(), key=lambda kv: -kv[1])),
    }


# -- the probe: a fresh process (cold open, peak RSS) ----------------------------------------


def _status_kib(field: str) -> int:
    """A ``/proc/self/status`` field in KiB (``VmRSS``, ``VmHWM``); 0 where there is none."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def probe(db: Path, queries: list[str]) -> dict[str, Any]:
    """Open ``db`` in this fresh process, answer every query, report times and peak RSS.

    The peak is reset after the imports (``/proc/self/clear_refs``), so it measures opening
    and searching, not the interpreter and its libraries.
    """
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")
    rss_before = _status_kib("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    box = recallbox.open(db)
    opened = time.perf_counter()
    box.search_memory(queries[0])
    first = time.perf_counter()
    for query in queries:
        box.search_memory(query)
        box.search(query, allow_embed=False)
    box.close()
    return {
        "open_ms": round((opened - started) * 1000, 1),
        "open_and_first_search_ms": round((first - started) * 1000, 1),
        "rss_before_open_mib": round(rss_before / 1024, 1),
        "peak_rss_mib": round(
            (_status_kib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024, 1
        ),
    }


def run_probe(db: Path, queries: list[str]) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(queries, fh)
    try:
        out = subprocess.run(
            [sys.executable, __file__, "--probe", str(db), "--probe-queries", fh.name],
            capture_output=True,
            text=True,
            check=True,
        )
    finally:
        os.unlink(fh.name)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


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
    literal: bool = True,
    bm25: bool = False,
    vectors: bool = False,
) -> dict[str, Any]:
    """The index side of :func:`run_dataset` alone, for a history too big to scan on a busy
    machine: latencies, the plants checked against what the generator planted (plant (a):
    the one planted message is the only hit; plant (b): the newest generation first and a
    "more hits" count that is at most the planted count left), cold open and peak RSS.
    ``literal=False`` skips ``search_memory``; ``bm25``/``vectors`` add the ranked
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
    if literal:
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
    print(f"[{size:,}] probe: cold open and peak RSS", flush=True)
    probe_result = run_probe(db, queries)
    return {
        "dataset": f"synthetic-{size}",
        "size": size,
        "commit": commit(),
        "load_average_after": [round(v, 2) for v in os.getloadavg()],
        "parameters": {k: v for k, v in meta.items() if k not in ("ingest", "db", "export_path")},
        "ingest": meta["ingest"],
        "storage": storage(db, int(meta["messages"])),
        "operations": ops,
        "correctness": correctness,
        "naive_load_seconds": round(naive_load, 1),
        "probe": probe_result,
        "queries": [{"text": q.text, "band": q.band, "kind": q.kind} for q in mix],
    }


# -- report --------------------------------------------------------------------------------


def merge(previous: dict[str, Any], datasets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Datasets of ``previous`` not rerun now, then the new ones, ordered by size. A dataset
    measured in part (``--search-memory-only``: no ``ingest``) updates the earlier one of its
    size: its operations one by one, its other fields whole."""
    fresh = {d["dataset"]: d for d in datasets}
    out = []
    for old in previous.get("datasets", []):
        new = fresh.get(old["dataset"])
        if new is None:
            out.append(old)
        elif "ingest" not in new and "operations" in old:
            fresh[old["dataset"]] = {
                **old,
                **new,
                "operations": {**old["operations"], **new["operations"]},
            }
    return sorted([*out, *fresh.values()], key=lambda d: d.get("size", 0))


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = [d for d in report["datasets"] if "size" in d and d.get("plot", True)]
    if not sets:
        return
    names = [
        "search_memory_global",
        "search_memory_thread",
        "keyword_search",
        "keyword_search_thread",
        "hybrid_search",
        "hybrid_search_thread",
    ]
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 4), sharey=True)
    for ax, name in zip(axes, names, strict=True):
        have = [d for d in sets if name in d["operations"]]
        sizes = [d["size"] for d in have]
        ax.plot(sizes, [d["operations"][name]["index"]["p95_ms"] for d in have], "o-",
                label="recallbox p95")  # fmt: skip
        ax.plot(sizes, [d["operations"][name]["index"]["p50_ms"] for d in have], "o:",
                label="recallbox p50")  # fmt: skip
        baselines = sorted({b for d in have for b in d["operations"][name]["baselines"]})
        for b in baselines:
            pts = [(d["size"], d["operations"][name]["baselines"][b]["p95_ms"]) for d in have
                   if b in d["operations"][name]["baselines"]]  # fmt: skip
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "s--", alpha=0.7, label=f"{b} p95")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("messages in history")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("latency, ms (log)")
    fig.suptitle(f"recallbox latency vs history size ({report['commit']})", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def ci_check(current: dict[str, Any], reference: dict[str, Any] | None) -> list[str]:
    """Operations whose index/baseline p95 ratio grew more than 3x over the reference's
    (CPU-time ratios where both runs have them: a busy machine distorts them least)."""
    failures = []
    for label, plant in current["correctness"]["plants"].items():
        if not plant["same_as_naive"]:
            failures.append(f"plant {label}: the answer differs from the complete naive scan")
    if reference is None:
        return failures
    for name, op in current["operations"].items():
        ref_op = reference["operations"].get(name)
        if ref_op is None:
            continue
        kind = (
            "ratio_cpu_p95"
            if op.get("ratio_cpu_p95") and ref_op.get("ratio_cpu_p95")
            else "ratio_p95"
        )
        for baseline, ratio in op[kind].items():
            ref = ref_op[kind].get(baseline)
            if ratio is not None and ref and ratio > CI_REGRESSION_FACTOR * ref:
                failures.append(
                    f"{name}: p95 ratio to {baseline} {ratio:.2f} > {CI_REGRESSION_FACTOR}x "
                    f"the reference {ref:.2f}"
                )
    return failures


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
        "--ranked-only",
        action="store_true",
        help="keyword and hybrid search with their baselines (bm25s, numpy KNN) only",
    )
    parser.add_argument("--probe", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--probe-queries", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        queries = json.loads(args.probe_queries.read_text(encoding="utf-8"))
        print(json.dumps(probe(args.probe, queries)))
        return
    sizes = [CI_SIZE] if args.ci else [int(s) for s in args.sizes.split(",") if s]
    workdir = args.workdir or Path(tempfile.gettempdir()) / "recallbox-scale"
    passes = 1 if args.ci else args.passes
    partial = args.index_only or args.ranked_only
    datasets = [] if partial else [literal.run_stress(workdir, passes)]
    for size in sizes:
        if partial:
            db = scale_build.db_path(workdir, size)
            datasets.append(
                index_only(
                    db,
                    scale_build.load_meta(db),
                    passes=passes,
                    literal=not args.ranked_only,
                    bm25=args.ranked_only and not args.no_bm25s,
                    vectors=args.ranked_only and not args.no_vectors,
                )
            )
            continue
        db, meta = scale_build.ensure(
            workdir, size, vectors=not (args.no_vectors or args.search_memory_only)
        )
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
