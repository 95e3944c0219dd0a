"""Benchmark: ``box.recall`` latency over all five domains on a realistic store (issue #12).

The store (seeded, built once per run in a temporary folder, or reused with ``--db``):

* **sessions**: ``--messages`` messages (default 10 000) in threads of 100, user and assistant
  turns of 8–40 words from a 400-word ops vocabulary with ids (``staging-07``, ``pg-primary-3``);
* **transcripts**: none are generated (importing transcripts is its own benchmark); the bucket is
  searched and comes back empty, which is what most stores without imports look like;
* **memory**: ``--entries`` memory entries (default 1 000) written with ``remember``, the seven
  types in turn;
* **knowledge**: ``--sections`` knowledge sections (default 1 000): documents of ten ``##``
  sections each, added with ``add_document``;
* **code**: a generated Python repository of ``--files`` files (default 1 000), each two to
  four functions calling each other and one class, indexed with ``index_code``.

Then ``--queries`` queries (default 300; one to three vocabulary words, or an identifier of the
corpus) are each timed as one whole ``box.recall(query)`` call (validation, the concurrent
fan-out over the five domains, rendering within the 12 000-character budget, the hit-log rows),
after ``WARMUP`` calls: once with ``allow_embed=False``, once with ``allow_embed=True`` (the
store's vectors written first by ``embed_all`` with the dependency-free ``hash`` embedder, so
each recall embeds its query once and every domain runs its vector leg; ``--compare-exact``
times it once more with the in-memory vector copies off, every vector leg in sqlite-vec, as a
same-run baseline). Goals (the issue):
p95 ≤ 150 ms without embedding, ≤ 250 ms with it. Then each domain is recalled alone (keyword
only, ``--domain-queries`` queries) to show where the time goes; a bucket past its time limit
(``RECALL_DOMAIN_TIMEOUT_S``) is counted in ``bucket_errors``. The machine's load average is recorded: on a
shared machine, compare the figures of one run with each other; the CPU time of each call
(``time.process_time``: this process, every thread) is recorded beside its wall time.

Writes JSON (commit, dataset, parameters, p50/p95/max, per-bucket hit rates) to
``benchmarks/results/recall.json``. Usage: ``nice -n 10 python benchmarks/recall.py``.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import recallbox  # noqa: E402
from recallbox.domains.registry import DOMAINS  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "recall.json"
DEFAULT_MESSAGES = 10_000
DEFAULT_ENTRIES = 1_000
DEFAULT_SECTIONS = 1_000
DEFAULT_FILES = 1_000
DEFAULT_QUERIES = 300
DEFAULT_DOMAIN_QUERIES = 100
WARMUP = 20
SEED = 20_261_201
THREAD_SIZE = 100
SECTIONS_PER_DOCUMENT = 10
VOCABULARY_SIZE = 400
GOAL_P95_MS = {"keyword": 150.0, "embed": 250.0}
MEMORY_TYPES = ("principle", "correction", "decision", "guideline", "pitfall", "process", "model")
STEMS = [
    "deploy",
    "billing",
    "staging",
    "invoice",
    "payment",
    "refund",
    "ledger",
    "queue",
    "worker",
    "retry",
    "timeout",
    "backup",
    "restore",
    "replica",
    "primary",
    "failover",
    "migration",
    "schema",
    "index",
    "cache",
    "eviction",
    "token",
    "session",
    "cookie",
    "login",
    "oauth",
    "webhook",
    "cron",
    "batch",
    "export",
    "import",
    "parser",
    "lexer",
    "render",
    "template",
    "layout",
    "metric",
    "alert",
    "pager",
    "incident",
    "rollback",
    "canary",
    "release",
    "build",
    "artifact",
    "docker",
    "kubernetes",
    "ingress",
    "proxy",
    "tls",
    "certificate",
    "dns",
    "resolver",
    "latency",
    "throughput",
    "quota",
    "limit",
    "shard",
    "partition",
    "compaction",
    "snapshot",
    "vacuum",
    "checkpoint",
    "journal",
    "audit",
    "policy",
    "privacy",
    "consent",
]
SUFFIXES = ("", "s", "er", "ing", "ed")


def vocabulary(rng: random.Random) -> list[str]:
    words = [stem + suffix for stem in STEMS for suffix in SUFFIXES]
    rng.shuffle(words)
    return words[:VOCABULARY_SIZE]


def sentence(rng: random.Random, words: list[str], low: int, high: int) -> str:
    picked = [rng.choice(words) for _ in range(rng.randint(low, high))]
    if rng.random() < 0.3:
        picked.append(f"{rng.choice(('staging', 'pg-primary', 'worker'))}-{rng.randint(1, 40)}")
    return " ".join(picked)


def write_repository(root: Path, files: int, rng: random.Random, words: list[str]) -> list[str]:
    """``files`` Python modules; returns the function names (identifier queries)."""
    names: list[str] = []
    for i in range(files):
        package = root / f"pkg{i % 20}"
        package.mkdir(parents=True, exist_ok=True)
        funcs = [
            f"{rng.choice(words)}_{rng.choice(words)}_{i}_{j}" for j in range(rng.randint(2, 4))
        ]
        names.extend(funcs)
        lines = [f'"""Module {i}: {sentence(rng, words, 4, 10)}."""', ""]
        for j, name in enumerate(funcs):
            callee = funcs[(j + 1) % len(funcs)]
            lines += [
                f"def {name}(value):",
                f'    """{sentence(rng, words, 5, 12)}."""',
                f"    return {callee}(value) if value else value",
                "",
            ]
        lines += [
            f"class {rng.choice(words).title()}Handler{i}:",
            f'    """{sentence(rng, words, 5, 12)}."""',
            "",
            "    def handle(self, value):",
            f"        return {funcs[0]}(value)",
            "",
        ]
        (package / f"mod_{i}.py").write_text("\n".join(lines), encoding="utf-8")
    return names


def build(box: recallbox.Box, args: argparse.Namespace, root: Path) -> list[str]:
    rng = random.Random(SEED)
    words = vocabulary(rng)
    for start in range(0, args.messages, THREAD_SIZE):
        count = min(THREAD_SIZE, args.messages - start)
        rows = [
            {
                "role": "user" if k % 2 == 0 else "assistant",
                "content": sentence(rng, words, 8, 40),
            }
            for k in range(count)
        ]
        box.append_many(f"thread-{start // THREAD_SIZE}", rows)
    for i in range(args.entries):
        box.remember(
            f"{sentence(rng, words, 8, 30)} (entry {i})",
            type=MEMORY_TYPES[i % len(MEMORY_TYPES)],
            title=sentence(rng, words, 2, 5),
        )
    documents = (args.sections + SECTIONS_PER_DOCUMENT - 1) // SECTIONS_PER_DOCUMENT
    for d in range(documents):
        parts = [f"# Runbook {d}"]
        for s in range(SECTIONS_PER_DOCUMENT):
            body = "\n\n".join(sentence(rng, words, 10, 40) for _ in range(rng.randint(1, 3)))
            parts.append(f"## {sentence(rng, words, 2, 5)} {s}\n\n{body}")
        box.add_document("\n\n".join(parts) + "\n", f"docs/runbook-{d}.md")
    repo = root / "repo"
    names = write_repository(repo, args.files, rng, words)
    box.index_code(repo, scope="repo")
    return [*words, *rng.sample(names, min(len(names), 100))]


def queries(vocab: list[str], count: int) -> list[str]:
    rng = random.Random(SEED + 1)
    words = [w for w in vocab if "_" not in w]
    identifiers = [w for w in vocab if "_" in w]
    out = []
    for _ in range(count):
        if identifiers and rng.random() < 0.2:
            out.append(rng.choice(identifiers))
        else:
            out.append(" ".join(rng.sample(words, rng.randint(1, 3))))
    return out


def measure(box: recallbox.Box, items: list[str], allow_embed: bool) -> dict[str, Any]:
    for query in items[:WARMUP]:
        box.recall(query, allow_embed=allow_embed)
    times: list[float] = []
    cpu: list[float] = []
    hits = dict.fromkeys(DOMAINS, 0)
    errors = dict.fromkeys(DOMAINS, 0)
    longest = 0
    for query in items:
        start, start_cpu = time.perf_counter(), time.process_time()
        result = box.recall(query, allow_embed=allow_embed)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
        longest = max(longest, len(result.render()))
        for name, bucket in result.buckets.items():
            hits[name] += bool(bucket.hits)
            errors[name] += bucket.error is not None
    times.sort()
    cpu.sort()
    return {
        "allow_embed": allow_embed,
        "queries": len(items),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
        "cpu_p50_ms": round(statistics.median(cpu), 1),
        "cpu_p95_ms": round(cpu[int(0.95 * (len(cpu) - 1))], 1),
        "max_ms": round(times[-1], 1),
        "goal_p95_ms": GOAL_P95_MS["embed" if allow_embed else "keyword"],
        "bucket_hit_rate": {k: round(v / len(items), 3) for k, v in hits.items()},
        "bucket_errors": errors,
        "longest_render_chars": longest,
    }


def measure_exact(box: recallbox.Box, items: list[str]) -> dict[str, Any]:
    """``allow_embed=True`` again with the in-memory vector copies off (every vector leg in
    sqlite-vec, as before #12's fix): the same-run baseline of the copies."""
    from recallbox.storage.sqlite.vector_cache import VectorCache

    store = box.store
    kept = store.vector_copies  # type: ignore[attr-defined]
    store.vector_copies = VectorCache(enabled=False)  # type: ignore[attr-defined]
    try:
        return {**measure(box, items, True), "vector_copies": False}
    finally:
        store.vector_copies = kept  # type: ignore[attr-defined]


def per_domain(box: recallbox.Box, items: list[str]) -> dict[str, Any]:
    """Each domain recalled alone (keyword only): where the time of a whole recall goes."""
    out: dict[str, Any] = {}
    for name in DOMAINS:
        times: list[float] = []
        cpu: list[float] = []
        errors = 0
        for query in items:
            start, start_cpu = time.perf_counter(), time.process_time()
            result = box.recall(query, domains=[name])
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - start_cpu) * 1000)
            errors += result.buckets[name].error is not None
        times.sort()
        cpu.sort()
        out[name] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
            "cpu_p50_ms": round(statistics.median(cpu), 1),
            "cpu_p95_ms": round(cpu[int(0.95 * (len(cpu) - 1))], 1),
            "errors": errors,
        }
    return out


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--entries", type=int, default=DEFAULT_ENTRIES)
    parser.add_argument("--sections", type=int, default=DEFAULT_SECTIONS)
    parser.add_argument("--files", type=int, default=DEFAULT_FILES)
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES)
    parser.add_argument("--domain-queries", type=int, default=DEFAULT_DOMAIN_QUERIES)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--compare-exact",
        action="store_true",
        help="Also time allow_embed=True with the in-memory vector copies off (sqlite-vec only).",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recallbox-bench-recall-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        with recallbox.open(root / "recall.db", embedder="hash") as box:
            vocab = build(box, args, root)
            built_s = time.perf_counter() - started
            started = time.perf_counter()
            embedded = box.embed_all()
            embed_s = time.perf_counter() - started
            items = queries(vocab, args.queries)
            results = [measure(box, items, False), measure(box, items, True)]
            if args.compare_exact:
                results.append(measure_exact(box, items))
            alone = per_domain(box, items[: args.domain_queries])
    report = {
        "benchmark": "recall",
        "commit": commit(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "dataset": {
            "messages": args.messages,
            "memory_entries": args.entries,
            "knowledge_sections": args.sections,
            "code_files": args.files,
            "transcript_chunks": 0,
            "vectors_embedded": embedded,
            "embedder": "hash (feature hashing, no model)",
            "seed": SEED,
        },
        "build_s": round(built_s, 1),
        "embed_s": round(embed_s, 1),
        "warmup": WARMUP,
        "budget_chars": 12_000,
        "results": results,
        "per_domain_keyword": alone,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
