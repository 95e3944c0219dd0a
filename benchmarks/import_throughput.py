"""Import throughput and peak memory of `recallbox import claude-code` on a synthetic session.

    .venv/bin/python benchmarks/import_throughput.py            # 25k, 50k, 100k records
    .venv/bin/python benchmarks/import_throughput.py --sizes 5000 --repeats 5   # a quick run

The dataset is a deterministic synthetic Claude Code session file (seeded): user prompts,
assistant API messages written as several records each (thinking, text, tool_use) as Claude
Code does, tool results with long outputs (logs, source files, test runs), hook progress
records, file-history snapshots, a retried answer now and then (an abandoned branch), and a
compaction (boundary + summary) every ``COMPACTION_EVERY`` records.

Each size is imported into a fresh SQLite file in its own subprocess twice: once plain (wall
time, records/s, max RSS) and once under ``tracemalloc`` (peak Python heap). Streaming means
the peak heap should not grow with the file. At the largest size, the incremental paths are
timed too: re-syncing the unchanged file (a stat and a hash) and syncing after 100 appended
records, ``--repeats`` times each (p50/p95).

Results go to ``benchmarks/results/import_throughput.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "import_throughput.json"
DEFAULT_SIZES = (25_000, 50_000, 100_000)
SEED = 20250901
SESSION_ID = "0b5e55ed-0000-4000-8000-00000000bench"
COMPACTION_EVERY = 30_000
RETRY_EVERY_TURNS = 2_000
APPEND_RECORDS = 100
MIB = 1024 * 1024

WORDS = [
    "deploy",
    "billing",
    "staging",
    "service",
    "config",
    "retry",
    "timeout",
    "cache",
    "index",
    "query",
    "migration",
    "schema",
    "worker",
    "queue",
    "handler",
    "request",
    "response",
    "token",
    "session",
    "thread",
    "message",
    "search",
    "recall",
    "vector",
    "keyword",
    "fusion",
    "budget",
    "window",
    "excerpt",
    "parser",
    "import",
    "cursor",
    "branch",
    "compaction",
]
TOOLS = ("Bash", "Read", "Grep", "Edit", "Write", "Glob")


class SyntheticSession:
    """Writes a realistic Claude Code session, record by record (deterministic)."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = random.Random(seed)
        self.records = 0
        self.turn = 0
        self.parent: str | None = None
        self.clock = 1_756_720_800.0  # 2025-09-01T10:00:00Z

    def _uuid(self) -> str:
        return f"{self.rng.getrandbits(128):032x}"

    def _stamp(self) -> str:
        self.clock += self.rng.uniform(0.2, 4.0)
        seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock))
        return f"{seconds}.{int(self.clock * 1000) % 1000:03d}Z"

    def _words(self, low: int, high: int) -> str:
        return " ".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(low, high)))

    def _envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        uuid = self._uuid()
        record = {
            "parentUuid": fields.pop("parentUuid", self.parent),
            "isSidechain": False,
            "userType": "external",
            "cwd": "/home/dev/app",
            "sessionId": SESSION_ID,
            "version": "1.0.98",
            "gitBranch": "main",
            "type": kind,
            **fields,
            "uuid": uuid,
            "timestamp": self._stamp(),
        }
        return record

    def _tool_output(self) -> str:
        kind = self.rng.random()
        if kind < 0.4:  # a log
            lines = [
                f"2025-09-01 10:{i % 60:02d}:{(i * 7) % 60:02d} INFO {self._words(4, 12)}"
                for i in range(self.rng.randint(20, 120))
            ]
        elif kind < 0.8:  # a source file
            lines = [
                f"    def {self.rng.choice(WORDS)}_{i}(self, {self.rng.choice(WORDS)}):"
                if i % 6 == 0
                else f"        return {self._words(2, 8).replace(' ', '_')}({i})"
                for i in range(self.rng.randint(30, 200))
            ]
        else:  # a test run
            lines = [f"tests/test_{self.rng.choice(WORDS)}.py::test_{i} PASSED" for i in range(60)]
            lines.append(f"{self.rng.randint(50, 400)} passed in {self.rng.uniform(1, 30):.2f}s")
        return "\n".join(lines)

    def _assistant(self, message_id: str, block: dict[str, Any], **extra: Any) -> dict[str, Any]:
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-20250514",
            "content": [block],
            "stop_reason": None,
            "usage": {"input_tokens": self.rng.randint(10, 5000), "output_tokens": 120},
        }
        return self._envelope("assistant", message=message, requestId=f"req_{self.turn}", **extra)

    def turn_records(self) -> list[dict[str, Any]]:
        """One user turn: prompt, a tool-using API message, the result, an answer."""
        self.turn += 1
        out: list[dict[str, Any]] = []

        def add(record: dict[str, Any], *, advance: bool = True) -> None:
            out.append(record)
            if advance:
                self.parent = record["uuid"]

        prompt = f"Please {self._words(8, 40)}"
        add(self._envelope("user", message={"role": "user", "content": prompt}))
        message_id = f"msg_{self.turn:06d}a"
        add(self._assistant(message_id, {"type": "thinking", "thinking": self._words(10, 60)}))
        add(self._assistant(message_id, {"type": "text", "text": self._words(5, 30)}))
        tool = self.rng.choice(TOOLS)
        call_id = f"toolu_{self.turn:06d}"
        arguments = (
            {"command": f"pytest -q tests/{self.rng.choice(WORDS)}", "description": "Run tests"}
            if tool == "Bash"
            else {"file_path": f"/home/dev/app/{self.rng.choice(WORDS)}.py"}
        )
        add(self._assistant(message_id, {"type": "tool_use", "id": call_id, "name": tool,
                                         "input": arguments}))  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": call_id, "content": self._tool_output()}
        add(self._envelope("user", message={"role": "user", "content": [result]}))
        if self.rng.random() < 0.5:
            add(
                self._envelope(
                    "progress",
                    data={"type": "hook_progress", "hookEvent": "PostToolUse"},
                    toolUseID=call_id,
                ),
                advance=False,
            )
        answer_parent = self.parent
        answer = {"type": "text", "text": self._words(20, 120)}
        add(self._assistant(f"msg_{self.turn:06d}b", answer))
        if self.turn % RETRY_EVERY_TURNS == 0:  # the user retried: a new answer, same parent
            add(self._assistant(f"msg_{self.turn:06d}c", answer, parentUuid=answer_parent))
        if self.rng.random() < 0.1:
            out.append(
                {
                    "type": "file-history-snapshot",
                    "messageId": self.parent,
                    "snapshot": {"trackedFileBackups": {}, "timestamp": self._stamp()},
                    "isSnapshotUpdate": False,
                }
            )
        return out

    def compaction_records(self) -> list[dict[str, Any]]:
        boundary = self._envelope(
            "system",
            parentUuid=None,
            subtype="compact_boundary",
            content="Conversation compacted",
            logicalParentUuid=self.parent,
            compactMetadata={"trigger": "auto", "preTokens": 155_000},
        )
        self.parent = boundary["uuid"]
        summary = self._envelope(
            "user",
            message={"role": "user", "content": f"Summary: {self._words(200, 400)}"},
            isCompactSummary=True,
        )
        self.parent = summary["uuid"]
        return [boundary, summary]

    def write(self, path: Path, records: int, *, mode: str = "w") -> int:
        """Append ``records`` records to ``path``; returns how many were written."""
        written = 0
        next_compaction = (self.records // COMPACTION_EVERY + 1) * COMPACTION_EVERY
        with path.open(mode, encoding="utf-8") as stream:
            while written < records:
                batch = self.turn_records()
                if self.records + len(batch) >= next_compaction:
                    batch += self.compaction_records()
                    next_compaction += COMPACTION_EVERY
                for record in batch[: records - written]:
                    stream.write(json.dumps(record, separators=(",", ":")) + "\n")
                    written += 1
                    self.records += 1
        return written


# --- measurement (runs in a subprocess per size) -------------------------------------------


def _measure(path: Path, db: Path, heap: bool, repeats: int) -> dict[str, Any]:
    import recallbox

    if heap:
        tracemalloc.start()
    started, started_cpu = time.perf_counter(), time.process_time()
    with recallbox.open(db) as box:
        report = box.import_transcripts("claude-code", path)
        seconds = time.perf_counter() - started
        box.store.indexer.drain()  # the literal index caught up: every index written
        result: dict[str, Any] = {
            "seconds": seconds,
            "cpu_seconds_all_indexed": time.process_time() - started_cpu,
            "records": report.records,
            "messages_added": report.added,
            "errors": len(report.errors),
        }
        if heap:
            result["peak_python_heap_bytes"] = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        elif repeats:
            result["resync_unchanged_ms"] = _timings(box, path, repeats, append=False)
            result["append_100_records_ms"] = _timings(box, path, repeats, append=True)
    result["max_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return result


def _timings(box: Any, path: Path, repeats: int, *, append: bool) -> dict[str, float]:
    generator = SyntheticSession()  # replay the file's generator, then continue the session
    generator.write(Path(os.devnull), generator_records(path), mode="a")
    samples = []
    for _ in range(repeats):
        if append:
            generator.write(path, APPEND_RECORDS, mode="a")
        started = time.perf_counter()
        report = box.import_transcripts("claude-code", path)
        samples.append((time.perf_counter() - started) * 1000)
        assert report.errors == (), report.errors
    return _percentiles(samples)


def generator_records(path: Path) -> int:
    """How many records the file holds (one per line)."""
    with path.open("rb") as stream:
        return sum(1 for _ in stream)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 2), "p95": round(p95, 2), "n": len(ordered)}


def _run_child(path: Path, heap: bool, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="recallbox-bench-db-") as directory:
        command = [
            sys.executable,
            __file__,
            "--child",
            str(path),
            str(Path(directory) / "bench.db"),
            "--repeats",
            str(repeats),
        ]
        if heap:
            command.append("--heap")
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return dict(json.loads(output))


def _commit() -> str:
    if os.environ.get("BENCH_COMMIT"):  # a run from an exported snapshot of a commit
        return os.environ["BENCH_COMMIT"]
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument("--child", nargs=2, type=Path, metavar=("FILE", "DB"))
    parser.add_argument("--heap", action="store_true")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_measure(args.child[0], args.child[1], args.heap, args.repeats)))
        return
    runs = []
    with tempfile.TemporaryDirectory(prefix="recallbox-bench-") as directory:
        for index, size in enumerate(sorted(args.sizes)):
            path = Path(directory) / f"{size}" / f"{SESSION_ID}.jsonl"
            path.parent.mkdir()
            SyntheticSession().write(path, size)
            largest = index == len(args.sizes) - 1
            timed = _run_child(path, heap=False, repeats=args.repeats if largest else 0)
            if largest:  # the timed run appended records: measure the heap on a fresh copy
                path.unlink()
                SyntheticSession().write(path, size)
            heap = _run_child(path, heap=True, repeats=0)
            run = {
                "records": size,
                "file_bytes": path.stat().st_size,
                "seconds": round(timed["seconds"], 2),
                "records_per_s": round(size / timed["seconds"]),
                # every thread of the process, until the literal index caught up: what a
                # shared, loaded machine distorts least
                "cpu_seconds_all_indexed": round(timed["cpu_seconds_all_indexed"], 2),
                "records_per_cpu_s": round(size / timed["cpu_seconds_all_indexed"]),
                "messages_per_cpu_s": round(
                    timed["messages_added"] / timed["cpu_seconds_all_indexed"]
                ),
                "load_average": [round(x, 2) for x in os.getloadavg()],
                "mib_per_s": round(path.stat().st_size / MIB / timed["seconds"], 2),
                "messages_added": timed["messages_added"],
                "errors": timed["errors"],
                "max_rss_mib": round(timed["max_rss_bytes"] / MIB, 1),
                "peak_python_heap_mib": round(heap["peak_python_heap_bytes"] / MIB, 2),
            }
            for key in ("resync_unchanged_ms", "append_100_records_ms"):
                if key in timed:
                    run[key] = timed[key]
            runs.append(run)
            print(json.dumps(run), file=sys.stderr)
    result = {
        "benchmark": "import_throughput",
        "commit": _commit(),
        "dataset": {
            "kind": "synthetic Claude Code session (benchmarks/import_throughput.py)",
            "seed": SEED,
            "compaction_every_records": COMPACTION_EVERY,
            "retry_every_turns": RETRY_EVERY_TURNS,
        },
        "parameters": {"sizes": sorted(args.sizes), "repeats": args.repeats, "db": "SQLite file"},
        "metric": "records/s (wall), peak Python heap (tracemalloc), max RSS; incremental "
        "re-sync latency p50/p95 at the largest size",
        "runs": runs,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}",
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
