"""Benchmark: ``search_memory`` latency against a same-run naive baseline.

Two datasets:

* ``stress``: the acceptance stress thread, 120 tool results of ~60 000 characters (~7.2 M).
* ``synthetic``: ``--messages`` messages (default 1 000 000) in threads of 200-1 800 messages,
  compacted every ~400, with log-normal lengths (median ~300, mean ~1 500, ~1 % over 20 000
  characters), tool calls with nested arguments, ~5 % Chinese text, a Zipf-like vocabulary of
  40 000 words, and unique identifiers (request ids, paths, hosts) sprinkled in.

The naive baseline loads every searchable message once into a Python list (already in search
order, with lower-cased copies) and answers each query by ``str.find``-style scans feeding the
very same result assembly, so both sides return the same text; the run checks that they do.
Latency is measured on the global view (``search_memory(query)``, the literal search alone);
the channel view with the default other-memory answerer is reported too.

Usage: ``python benchmarks/thread_search.py [--messages N] [--out PATH] [--db PATH --keep]``.
Writes JSON (commit, datasets, parameters, metric, p50/p95 per side) to
``benchmarks/results/thread_search.json`` unless ``--out`` says otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import apsw  # noqa: E402

import recallbox  # noqa: E402
from recallbox.domains.threads import search_literal  # noqa: E402
from recallbox.storage.base import (  # noqa: E402
    CandidateStream,
    LiteralQuery,
    SearchableMessage,
    SearchFilter,
)

DEFAULT_MESSAGES = 1_000_000
CAP_NOTES = ("in this order were checked", "candidate messages only")  # the index hit its cap
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "thread_search.json"
SEED = 20_260_301
LENGTH_MEDIAN_CHARS = 300
LENGTH_SIGMA = math.sqrt(2 * math.log(5))  # mean = median * 5 = 1 500
LENGTH_MAX_CHARS = 200_000
VOCABULARY_WORDS = 40_000
ZIPF_EXPONENT = 1.07
POOL_WORDS = 3_000_000
CHINESE_SHARE = 0.05
THREAD_MESSAGES = (200, 1_800)
COMPACT_EVERY = 400
IDENTIFIER_EVERY_CHARS = 2_000
TIMED_PASSES = 3
STRESS_RESULTS = 120
STRESS_RESULT_CHARS = 60_000
CJK_BASE = 0x4E00
CJK_CHARS = 1_500


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(percentile(values, 50) * 1000, 3),
        "p95_ms": round(percentile(values, 95) * 1000, 3),
        "mean_ms": round(statistics.fmean(values) * 1000, 3),
        "samples": len(values),
    }


def commit() -> str:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    return head + ("-dirty" if git("status", "--porcelain", "--", "src") else "")


# -- synthetic data ---------------------------------------------------------------------------


class Corpus:
    """Zipf-distributed English-like and Chinese text pools, sliced into messages."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        syllables = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "or")]
        tech = ["error", "warning", "deploy", "config", "timeout", "retry", "connection"]
        tech += ["database", "cache", "request"]
        words = list(dict.fromkeys(tech))
        while len(words) < VOCABULARY_WORDS:
            word = "".join(rng.choices(syllables, k=rng.choice((1, 2, 2, 3, 3, 4))))
            if word not in words:
                words.append(word)
        self.words = words
        weights = [1 / (rank**ZIPF_EXPONENT) for rank in range(1, len(words) + 1)]
        drawn = rng.choices(words, weights=weights, k=POOL_WORDS)
        for i in range(0, len(drawn), 13):
            drawn[i] += rng.choice((".", ",", "\n", ":", ""))
        self.pool = " ".join(drawn)
        hanzi = [chr(CJK_BASE + i) for i in range(CJK_CHARS)]
        zh_words = ["".join(rng.choices(hanzi, k=rng.choice((2, 2, 3, 4)))) for _ in range(5_000)]
        self.zh_words = zh_words
        zh_weights = [1 / (rank**ZIPF_EXPONENT) for rank in range(1, len(zh_words) + 1)]
        self.zh_pool = "".join(rng.choices(zh_words, weights=zh_weights, k=400_000))
        self.counter = 0

    def identifier(self) -> str:
        self.counter += 1
        n = self.counter
        kind = n % 3
        if kind == 0:
            return f"req-{n:08x}"
        if kind == 1:
            return f"/srv/app/mod{n % 977}/file_{n}.py"
        return f"host-{n}.prod.internal"

    def text(self, length: int) -> str:
        chinese = self.rng.random() < CHINESE_SHARE
        pool = self.zh_pool if chinese else self.pool
        length = min(length, len(pool) - 1)
        start = self.rng.randrange(0, len(pool) - length)
        body = pool[start : start + length]
        return " ".join(
            self.identifier() + " " + body[at : at + IDENTIFIER_EVERY_CHARS]
            for at in range(0, len(body), IDENTIFIER_EVERY_CHARS)
        )

    def length(self) -> int:
        value = self.rng.lognormvariate(math.log(LENGTH_MEDIAN_CHARS), LENGTH_SIGMA)
        return max(8, min(LENGTH_MAX_CHARS, int(value)))

    def tool_call(self, call_id: str) -> dict[str, Any]:
        rng = self.rng
        path = (
            self.identifier()
            if self.counter % 3 == 0
            else f"/srv/app/lib/{rng.choice(self.words[:500])}.py"
        )
        return {
            "id": call_id,
            "name": rng.choice(("bash", "read_file", "edit_file", "grep", "web_fetch")),
            "arguments": {
                "command": f"{rng.choice(('cat', 'grep -n', 'ssh', 'make', 'curl -s'))} {path}",
                "cwd": f"/srv/app/{rng.choice(self.words[:200])}",
                "env": {"RUN_ID": self.identifier()},
                "files": [{"path": path}, {"path": self.identifier(), "mode": 420}],
                "options": {"timeout": rng.choice((30, 60, 120)), "flags": ["-v", "--json"]},
            },
        }


def thread_messages(corpus: Corpus, count: int) -> Iterator[dict[str, Any]]:
    rng = corpus.rng
    for i in range(count):
        if i and i % COMPACT_EVERY == 0:
            yield {"role": "system", "kind": "compaction_summary", "content": corpus.text(400)}
            continue
        step = i % 4
        item: dict[str, Any] = {"content": corpus.text(corpus.length())}
        if step == 0:
            item["role"] = "user"
        elif step == 1:
            item["role"] = "assistant"
            item["tool_calls"] = [corpus.tool_call(f"c{i}")]
        elif step == 2:
            item["role"] = "tool"
            item["tool_call_id"] = f"c{i - 1}"
        else:
            item["role"] = "assistant"
        roll = rng.random()
        if roll < 0.02:
            item.update(role="system", kind="machine_event")
            item.pop("tool_calls", None)
        elif roll < 0.03:
            item["model_visible"] = False
        yield item


def build_synthetic(path: Path, messages: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    corpus = Corpus(rng)
    started = time.perf_counter()
    total = threads = 0
    with recallbox.open(path) as box:
        while total < messages:
            size = min(rng.randint(*THREAD_MESSAGES), messages - total)
            box.append_many(f"bench-{threads:05d}", thread_messages(corpus, size))
            total += size
            threads += 1
            if threads % 50 == 0:
                print(
                    f"  built {total:,} messages in {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
    return {
        "messages": total,
        "threads": threads,
        "build_seconds": round(time.perf_counter() - started, 1),
        "identifiers": corpus.counter,
    }


def synthetic_queries(messages: int, identifiers: int) -> list[str]:
    """Realistic agent queries: ids, paths, hosts, words of each frequency, phrases, CJK, misses."""
    rng = random.Random(SEED)  # the same corpus again, to pick words from its vocabulary
    corpus = Corpus(rng)
    pick = random.Random(SEED + 1)
    queries: list[str] = []
    for _ in range(15):
        corpus.counter = pick.randrange(1, identifiers)
        queries.append(corpus.identifier())
    queries += [f"host-{pick.randrange(1, identifiers)}" for _ in range(5)]
    queries += [corpus.words[pick.randrange(2_000, 20_000)] for _ in range(10)]
    queries += [corpus.words[pick.randrange(100, 1_000)] for _ in range(5)]
    queries += [corpus.words[pick.randrange(10, 100)] for _ in range(3)]
    for _ in range(10):
        at = pick.randrange(0, len(corpus.pool) - 200)
        words = corpus.pool[at : at + 200].split()[1:4]
        queries.append(" ".join(words))
    queries += [corpus.zh_words[pick.randrange(50, 2_000)] for _ in range(8)]
    queries += [f"zqxv-missing-{i} traceback" for i in range(5)]
    queries += ["connection timeout /srv/app/lib", "error: retry", "ssh /srv/app/mod12/file_"]
    return queries


# -- the naive baseline -----------------------------------------------------------------------


@dataclass
class NaiveRow:
    message: SearchableMessage
    content: str
    args: str
    lower_content: str
    lower_args: str


class NaiveStore:
    """Every searchable message in one Python list, in search order; scans per query."""

    def __init__(self, db: Path) -> None:
        from recallbox.storage.sqlite.literal import ROW_COLUMNS, SEARCH_FROM, SEARCH_ORDER
        from recallbox.storage.sqlite.visibility import MESSAGE_SEARCHABLE_SQL

        conn = apsw.Connection(str(db))
        sql = (
            f"SELECT {ROW_COLUMNS}, m.args_text FROM {SEARCH_FROM} "
            f"WHERE {MESSAGE_SEARCHABLE_SQL} ORDER BY {SEARCH_ORDER}"
        )
        self.rows: list[NaiveRow] = []
        for r in conn.execute(sql):
            message = SearchableMessage(
                id=r[1],
                channel=r[2],
                generation=r[3],
                seq=r[4],
                role=r[5],
                content=r[6],
                tool_calls=json.loads(r[7]) if r[7] is not None else None,
            )
            self.rows.append(NaiveRow(message, r[6], r[8], r[6].lower(), r[8].lower()))
        conn.close()

    def literal_candidates(
        self,
        query: LiteralQuery,
        *,
        where: SearchFilter,
        limit: int | None = None,
        recent: int = 0,
    ) -> CandidateStream:
        """Every message holding ``term``, in order: no cap (the complete naive answer), unless
        the caller passes a ``limit`` (then ``truncated`` says more were left, as the store does)."""
        stream = CandidateStream()
        rows = self._scan(query.term, where.channel, query.case_sensitive)
        if limit is None:
            stream.rows = rows
            return stream
        taken = list(itertools.islice(rows, limit + 1))
        stream.truncated = len(taken) > limit
        stream.rows = iter(taken[:limit])
        return stream

    def read_snapshot(self) -> contextlib.AbstractContextManager[None]:
        """The list never changes: nothing to hold."""
        return contextlib.nullcontext()

    def _scan(
        self, term: str, channel: str | None, case_sensitive: bool
    ) -> Iterator[SearchableMessage]:
        needle = term if case_sensitive else term.lower()
        for row in self.rows:
            if channel is not None and row.message.channel != channel:
                continue
            if case_sensitive:
                hit = row.content.find(needle) >= 0 or row.args.find(needle) >= 0
            else:
                hit = row.lower_content.find(needle) >= 0 or row.lower_args.find(needle) >= 0
            if hit:
                yield row.message


# -- running ------------------------------------------------------------------------------------


def time_queries(
    box: recallbox.Box, queries: list[str], channel: str | None
) -> tuple[list[float], list[str]]:
    for query in queries:  # warm-up: page cache and statement cache
        box.search_memory(query, channel)
    timings: list[float] = []
    outputs: list[str] = []
    for _ in range(TIMED_PASSES):
        outputs = []
        for query in queries:
            started = time.perf_counter()
            outputs.append(box.search_memory(query, channel))
            timings.append(time.perf_counter() - started)
    return timings, outputs


def time_naive(naive: NaiveStore, queries: list[str]) -> tuple[list[float], list[str]]:
    timings, outputs = [], []
    for query in queries:
        started = time.perf_counter()
        outputs.append(search_literal(naive, query, None))
        timings.append(time.perf_counter() - started)
    return timings, outputs


def run_dataset(
    name: str, db: Path, queries: list[str], channel: str, parameters: dict[str, Any]
) -> dict[str, Any]:
    print(f"[{name}] timing {len(queries)} queries x {TIMED_PASSES} passes", flush=True)
    with recallbox.open(db) as box:
        index_times, index_out = time_queries(box, queries, None)
        channel_times, _ = time_queries(box, queries, channel)
    print(f"[{name}] loading the naive baseline", flush=True)
    started = time.perf_counter()
    naive = NaiveStore(db)
    load_seconds = time.perf_counter() - started
    print(
        f"[{name}] naive: {len(naive.rows):,} messages loaded in {load_seconds:.1f} s", flush=True
    )
    naive_times, naive_out = time_naive(naive, queries)
    index = summary(index_times)
    baseline = summary(naive_times)
    result = {
        "dataset": name,
        "parameters": parameters,
        "metric": "latency of search_memory(query) (global view, literal part), milliseconds",
        "queries": len(queries),
        "index": index,
        "naive": {**baseline, "load_seconds": round(load_seconds, 1)},
        "speedup_p50": round(baseline["p50_ms"] / index["p50_ms"], 1),
        "speedup_p95": round(baseline["p95_ms"] / index["p95_ms"], 1),
        "same_output": sum(a == b for a, b in zip(index_out, naive_out, strict=True)),
        "index_results_with_candidate_cap_note": sum(
            any(note in r for note in CAP_NOTES) for r in index_out
        ),
        "channel_view_with_default_answerer": summary(channel_times),
        "db_bytes": db.stat().st_size,
    }
    print(json.dumps(result, indent=2), flush=True)
    return result


def build_stress(path: Path) -> None:
    half = STRESS_RESULT_CHARS // 2
    with recallbox.open(path) as box:
        box.append_many(
            "stress",
            (
                {
                    "role": "tool",
                    "content": "x" * half + f" keyword-{i % 7} " + "x" * half,
                    "tool_call_id": f"c{i}",
                }
                for i in range(STRESS_RESULTS)
            ),
        )


STRESS_QUERIES = ["keyword", "keyword-3", "keyword-6 x", "KEYWORD", "missing-term", "xxxx keyword"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--messages", type=int, default=DEFAULT_MESSAGES, help="synthetic history size"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the JSON")
    parser.add_argument(
        "--db", type=Path, default=None, help="synthetic database (reused when it exists)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary databases")
    parser.add_argument("--build-only", action="store_true", help="build --db and stop")
    args = parser.parse_args()
    if args.build_only:
        if args.db is None:
            parser.error("--build-only needs --db")
        built = build_synthetic(args.db, args.messages)
        args.db.with_suffix(".meta.json").write_text(json.dumps(built), encoding="utf-8")
        print(json.dumps(built))
        return

    workdir = Path(tempfile.mkdtemp(prefix="recallbox-bench-"))
    datasets = []
    try:
        stress_db = workdir / "stress.db"
        build_stress(stress_db)
        datasets.append(
            run_dataset(
                "stress-120x60k",
                stress_db,
                STRESS_QUERIES,
                "stress",
                {"results": STRESS_RESULTS, "result_chars": STRESS_RESULT_CHARS},
            )
        )
        db = args.db or workdir / "synthetic.db"
        meta_path = db.with_suffix(".meta.json")
        if db.exists() and meta_path.exists():
            built = json.loads(meta_path.read_text(encoding="utf-8"))
            print(f"[synthetic] reusing {db} ({built['messages']:,} messages)", flush=True)
        else:
            print(f"[synthetic] building {args.messages:,} messages in {db}", flush=True)
            built = build_synthetic(db, args.messages)
            meta_path.write_text(json.dumps(built), encoding="utf-8")
        queries = synthetic_queries(built["messages"], built["identifiers"])
        parameters = {
            **built,
            "seed": SEED,
            "length_median_chars": LENGTH_MEDIAN_CHARS,
            "length_sigma": round(LENGTH_SIGMA, 3),
            "length_max_chars": LENGTH_MAX_CHARS,
            "vocabulary_words": VOCABULARY_WORDS,
            "zipf_exponent": ZIPF_EXPONENT,
            "chinese_share": CHINESE_SHARE,
            "query_list": queries,
        }
        datasets.append(
            run_dataset(f"synthetic-{built['messages']}", db, queries, "bench-00000", parameters)
        )
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    report = {
        "benchmark": "thread_search",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {
            "python": platform.python_version(),
            "sqlite": apsw.sqlite_lib_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "command": "python benchmarks/thread_search.py " + " ".join(sys.argv[1:]),
        "datasets": datasets,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
