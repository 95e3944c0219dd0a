"""Benchmark: knowledge sync throughput and ``recall_context`` latency (issue #10).

* **Sync.** A generated library of ``--files`` markdown files (default 1 000; seeded): each a
  ``#`` title and 4–12 ``##``/``###`` sections of list items, paragraphs and the odd fenced
  block. Timed: the first ``sync_directory`` into a fresh database (sections/s), a second sync
  with nothing changed (files/s; it must write nothing), and a sync after ``EDIT_FRACTION`` of
  the files had one sentence edited.
* **recall_context.** ``--entries`` memory entries (default 5 000; the seven types, titled, one
  to three sentences, written with ``remember``) in two vocabularies: ``dense`` (56 ops words:
  a query word is in about a quarter of all entries, the worst case for BM25, which scores
  every match) and ``zipf`` (2 000 synthetic words with Zipf frequencies, exponent 1.07: closer
  to real notes). ``--queries`` queries (default 300; seeded) are one to three words of a random
  entry. Each is timed as one whole ``box.recall_context`` call (gate, BM25 candidates, slice,
  hit-log rows), after ``WARMUP`` calls, for several numbers of memory candidates handed to the
  slice (``CANDIDATE_COUNTS``, the default first), with the share of queries whose result is
  the same as with the most candidates. The same for a knowledge source (the largest document
  of the library). Goal: p95 ≤ 50 ms. The machine's load average is recorded: on a shared
  machine, compare the figures of one run with each other.

Writes JSON (commit, dataset, parameters, metric, p50/p95) to
``benchmarks/results/knowledge.json``. Usage: ``nice -n 10 python benchmarks/knowledge.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import recallbox  # noqa: E402
from recallbox.domains import context  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "knowledge.json"
DEFAULT_FILES = 1_000
DEFAULT_ENTRIES = 5_000
DEFAULT_QUERIES = 300
WARMUP = 20
EDIT_FRACTION = 0.1
SEED = 20_261_210
GOAL_P95_MS = 50.0
#: Memory candidates handed to the slice, measured side by side (the default first).
CANDIDATE_COUNTS = (context.RECALL_CONTEXT_CANDIDATE_ENTRIES, 300, 150, 100)
ZIPF_WORDS = 2_000
ZIPF_EXPONENT = 1.07
SYLLABLES = ["ka", "ro", "mi", "te", "su", "na", "lo", "pe", "vi", "da", "gu", "sho", "ren", "tal", "mor", "bix", "quen", "zor"]
# fmt: off
WORDS = [
    "deploy", "rollout", "billing", "staging", "replica", "migration", "kubectl", "pod",
    "service", "cluster", "database", "index", "cache", "queue", "worker", "retry", "timeout",
    "latency", "error", "warning", "config", "secret", "token", "branch", "commit", "review",
    "test", "build", "release", "canary", "metric", "alert", "dashboard", "incident", "runbook",
    "backup", "restore", "failover", "shard", "partition", "vacuum", "schema", "ingest", "export",
    "import", "webhook", "cron", "lease", "quota", "throttle", "sandbox", "tenant", "invoice",
    "ledger", "refund", "payout",
]
# fmt: on
TYPES = recallbox.MEMORY_TYPES
Words = Callable[[random.Random, int], list[str]]


def dense_words(rng: random.Random, count: int) -> list[str]:
    return [rng.choice(WORDS) for _ in range(count)]


def zipf_vocabulary(rng: random.Random) -> Words:
    vocabulary: list[str] = []
    seen: set[str] = set()
    while len(vocabulary) < ZIPF_WORDS:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            vocabulary.append(word)
    weights = [1.0 / (rank + 1) ** ZIPF_EXPONENT for rank in range(ZIPF_WORDS)]
    return lambda r, count: r.choices(vocabulary, weights, k=count)


def sentence(rng: random.Random, words: Words = dense_words, low: int = 6, high: int = 18) -> str:
    return " ".join(words(rng, rng.randint(low, high))).capitalize() + "."


def section(rng: random.Random, level: int, n: int) -> str:
    lines = [f"{'#' * level} {sentence(rng, low=2, high=4)[:-1]} {n}"]
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        if kind < 0.5:
            lines += [f"- {sentence(rng)}" for _ in range(rng.randint(2, 8))]
        elif kind < 0.9:
            lines.append(" ".join(sentence(rng) for _ in range(rng.randint(1, 4))))
        else:
            lines += ["```bash", f"kubectl rollout restart deploy/{rng.choice(WORDS)}", "```"]
        lines.append("")
    return "\n".join(lines)


def document(rng: random.Random, n: int) -> str:
    parts = [f"# Notes {n}", ""]
    parts += [section(rng, rng.choice((2, 2, 3)), i) for i in range(rng.randint(4, 12))]
    return "\n".join(parts)


def write_library(root: Path, files: int, rng: random.Random) -> None:
    for n in range(files):
        path = root / f"area{n % 20:02d}" / f"note{n:04d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document(rng, n), encoding="utf-8")


def edit_library(root: Path, rng: random.Random) -> int:
    paths = sorted(root.rglob("*.md"))
    chosen = rng.sample(paths, max(1, int(len(paths) * EDIT_FRACTION)))
    for path in chosen:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(". ", f". {rng.choice(WORDS)} ", 1), encoding="utf-8")
    return len(chosen)


def timed(call: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = call()
    return time.perf_counter() - start, result


def cpu_timed(call: Callable[[], Any]) -> tuple[float, float, Any]:
    """Wall and CPU seconds of ``call()`` (CPU time: this process only, so what other
    processes on a shared machine take is not counted)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def percentiles(samples: list[float], prefix: str = "") -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        f"{prefix}p50_ms": round(statistics.median(ordered) * 1000, 2),
        f"{prefix}p95_ms": round(p95 * 1000, 2),
        f"{prefix}max_ms": round(ordered[-1] * 1000, 2),
    }


def recall_latency(
    box: recallbox.Box, source: str, queries: list[str]
) -> tuple[dict[str, Any], list[str]]:
    for query in queries[:WARMUP]:
        box.recall_context(query, source=source)
    samples, cpu, sizes, contents = [], [], [], []
    for query in queries:
        seconds, used, result = cpu_timed(lambda q=query: box.recall_context(q, source=source))
        samples.append(seconds)
        cpu.append(used)
        sizes.append(recallbox.estimate_tokens(result.content))
        contents.append(result.content)
    stats = {
        **percentiles(samples),
        **percentiles(cpu, "cpu_"),
        "samples": len(samples),
        "mean_tokens": round(statistics.mean(sizes), 1),
        "empty_results": sum(1 for text in contents if not text),
    }
    return stats, contents


def memory_run(db: Path, words: Words, args: argparse.Namespace, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    with recallbox.open(db) as box:
        bodies = [
            " ".join(sentence(rng, words) for _ in range(rng.randint(1, 3)))
            for _ in range(args.entries)
        ]
        seconds, _ = timed(
            lambda: [
                box.remember(body, type=TYPES[i % len(TYPES)], title=sentence(rng, words, 2, 5))
                for i, body in enumerate(bodies)
            ]
        )
        queries = []
        for _ in range(args.queries):
            picked = rng.choice(bodies).rstrip(".").split()
            queries.append(" ".join(rng.sample(picked, min(len(picked), rng.randint(1, 3)))))
        default = context.RECALL_CONTEXT_CANDIDATE_ENTRIES
        runs: dict[int, tuple[dict[str, Any], list[str]]] = {}
        for count in dict.fromkeys(CANDIDATE_COUNTS):
            context.RECALL_CONTEXT_CANDIDATE_ENTRIES = count
            runs[count] = recall_latency(box, "MEMORY.md", queries)
        context.RECALL_CONTEXT_CANDIDATE_ENTRIES = default
    reference = runs[max(runs)][1]
    return {
        "remember_seconds": round(seconds, 2),
        "default_candidates": default,
        **{
            f"candidates={count}": {
                **stats,
                "same_result_as_most": round(
                    sum(a == b for a, b in zip(texts, reference, strict=True)) / len(texts), 3
                ),
            }
            for count, (stats, texts) in runs.items()
        },
    }


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    )
    return done.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--entries", type=int, default=DEFAULT_ENTRIES)
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="recallbox-knowledge-") as tmp:
        work = Path(tmp)
        library = work / "library"
        write_library(library, args.files, rng)
        size = sum(p.stat().st_size for p in library.rglob("*.md"))
        with recallbox.open(work / "k.db") as box:
            first_s, first = timed(lambda: box.sync_directory(library))
            again_s, again = timed(lambda: box.sync_directory(library))
            edited = edit_library(library, rng)
            edit_s, after = timed(lambda: box.sync_directory(library))
            assert again.files_unchanged == args.files and again.sections_added == 0
            largest = max(library.rglob("*.md"), key=lambda p: p.stat().st_size)
            source = largest.relative_to(library).as_posix()
            picked = [s.rstrip(".,").split() for s in largest.read_text("utf-8").split("\n")]
            words = [w for line in picked for w in line if w.isalpha()]
            doc_queries = [
                " ".join(rng.sample(words, rng.randint(1, 3))) for _ in range(args.queries)
            ]
            knowledge, _ = recall_latency(box, source, doc_queries)
            healthy = box.doctor().healthy
        dense = memory_run(work / "dense.db", dense_words, args, SEED + 1)
        zipf = memory_run(work / "zipf.db", zipf_vocabulary(random.Random(SEED)), args, SEED + 2)
        load = os.getloadavg()[0]
    report = {
        "benchmark": "knowledge",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count() or 0,
            "platform": platform.platform(),
            "load_average_1m_at_end": round(load, 2),
        },
        "command": "nice -n 10 python benchmarks/knowledge.py",
        "dataset": {
            "files": args.files,
            "bytes": size,
            "sections": first.sections_added,
            "memory_entries": args.entries,
            "queries": args.queries,
            "seed": SEED,
            "knowledge_source": source,
            "zipf_words": ZIPF_WORDS,
            "zipf_exponent": ZIPF_EXPONENT,
        },
        "metric": "wall time (and this process's CPU time, cpu_*) of one Box call on a SQLite "
        "file (WAL), single process",
        "parameters": {
            "warmup": WARMUP,
            "edit_fraction": EDIT_FRACTION,
            "goal_p95_ms": GOAL_P95_MS,
            "candidate_counts": list(dict.fromkeys(CANDIDATE_COUNTS)),
        },
        "sync": {
            "first_seconds": round(first_s, 2),
            "sections_per_second": round(first.sections_added / first_s, 1),
            "files_per_second": round(args.files / first_s, 1),
            "unchanged_seconds": round(again_s, 2),
            "unchanged_files_per_second": round(args.files / again_s, 1),
            "edited_files": edited,
            "edited_seconds": round(edit_s, 2),
            "edited_sections_updated": after.sections_updated,
        },
        "recall_context": {"memory_dense": dense, "memory_zipf": zipf, "knowledge": knowledge},
        "indexes_healthy": healthy,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
