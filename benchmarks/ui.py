"""Benchmark: page loads of the web inspector on a 100 000-message store.

The store: ``--threads`` threads (default 90) of ``--per-thread`` messages (default 1 000), each
compacted once halfway, plus one big thread that brings the total to ``--messages`` (default
100 000), all written through ``append_many``. Messages are user/assistant/tool turns of a few
hundred to a few thousand characters, every fifth assistant turn a tool call with nested
arguments, every thread one 50 000-character tool output. One thread is quarantined. Beside the
history: ``--memory`` memory entries (default 1 000) of every type, created over the last two
years so that decay leaves them active, dormant and archived; a knowledge directory of
``KNOWLEDGE_FILES`` documents; a code index of ``CODE_FILES`` Python files (one edited after
indexing, so the stale check reads it); ``HIT_QUERIES`` recalls in the hit-log.

The real server (``recallbox ui --port 0``) serves it; a client on loopback
loads each page ``--repeat`` times over one keep-alive connection (after ``WARMUP`` loads) and
records the wall time from request to the last byte. Writes JSON (commit, dataset, parameters,
metric, p50/p95 per page) to ``benchmarks/results/ui.json``.

Usage: ``nice -n 5 python benchmarks/ui.py [--db PATH --keep] [--repeat N]``. Beside each
page's client wall time it records the server's CPU time per load and the load average.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import recallbox  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "ui.json"
DEFAULT_MESSAGES = 100_000
DEFAULT_THREADS = 90
DEFAULT_PER_THREAD = 1_000
DEFAULT_REPEAT = 40
DEFAULT_MEMORY = 1_000
KNOWLEDGE_FILES = 40
CODE_FILES = 60
HIT_QUERIES = 200
MEMORY_SPREAD_DAYS = 730
MEMORY_TYPES = ("principle", "correction", "decision", "guideline", "pitfall", "process", "model")
WARMUP = 3
BATCH = 500
LONG_OUTPUT_CHARS = 50_000
SEED = 20_261_201
GOAL_P95_MS = 200.0
WORDS = ["deploy", "rollout", "billing", "staging", "replica", "migration", "kubectl", "pod", "service", "cluster", "database", "index", "cache", "queue", "worker", "retry", "timeout", "latency", "error", "warning", "config", "secret", "token", "branch", "commit", "review", "test", "build", "release", "canary", "metric", "alert", "dashboard", "incident", "runbook"]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def request_id(channel: str, n: int) -> str:
    """A unique identifier in one tool output (what a person pastes into the search box)."""
    return f"req-{zlib.crc32(channel.encode()) % 10_000:04d}-{n:05d}"


def _turn(rng: random.Random, n: int, channel: str) -> dict[str, Any]:
    kind = n % 5
    if kind == 0:
        return {"role": "user", "content": _text(rng, rng.randint(8, 60))}
    if kind == 1:
        return {
            "role": "assistant",
            "content": _text(rng, rng.randint(5, 30)),
            "tool_calls": [
                {
                    "id": f"call_{n}",
                    "name": "bash",
                    "arguments": {
                        "command": f"kubectl get pods -n ns{n % 7}",
                        "options": {"watch": n % 2 == 0, "labels": [channel, {"tier": "web"}]},
                    },
                }
            ],
        }
    if kind == 2:
        content = f"request {request_id(channel, n)}: " + _text(rng, rng.randint(50, 400))
        return {"role": "tool", "tool_call_id": f"call_{n}", "content": content}
    return {"role": "assistant", "content": _text(rng, rng.randint(20, 200))}


def _curated(box: recallbox.Box, rng: random.Random, folder: Path, memory: int) -> None:
    """Memory entries in every state, a knowledge directory, a code index, hit-log rows."""
    from datetime import date, timedelta

    from recallbox.domains.memory_ops import remember

    today = date.today()
    for n in range(memory):
        created = today - timedelta(days=rng.randint(0, MEMORY_SPREAD_DAYS))
        kind = MEMORY_TYPES[n % len(MEMORY_TYPES)]
        remember(box.store, f"lesson {n}: {_text(rng, rng.randint(8, 40))}", kind, f"lesson {n}", today=created)
    box.decay(today - timedelta(days=120))
    box.decay(today)
    docs = folder / "kb"
    docs.mkdir(parents=True, exist_ok=True)
    for n in range(KNOWLEDGE_FILES):
        body = "\n\n".join(f"## {_text(rng, 3)} {s}\n\n{_text(rng, 80)}" for s in range(6))
        (docs / f"doc-{n:02d}.md").write_text(f"# Document {n}\n\n{body}\n", encoding="utf-8")
    box.sync_directory(docs)
    code = folder / "svc"
    code.mkdir(parents=True, exist_ok=True)
    for n in range(CODE_FILES):
        funcs = "\n\n".join(f"def f{n}_{k}(x):\n    return f{n}_{k - 1}(x) + 1" if k else f"def f{n}_0(x):\n    return x" for k in range(8))
        (code / f"mod_{n:02d}.py").write_text(funcs + "\n", encoding="utf-8")
    box.index_code(code)
    (code / "mod_00.py").write_text("def changed():\n    return 1\n", encoding="utf-8")
    for _ in range(HIT_QUERIES):
        box.recall(_text(rng, 2))


def build(path: Path, *, messages: int, threads: int, per_thread: int, memory: int = DEFAULT_MEMORY) -> dict[str, Any]:
    """Write the store; returns what the pages are loaded with."""
    rng = random.Random(SEED)
    started = time.perf_counter()
    channels = [f"bench/thread {t:03d}" for t in range(threads)]
    big = "bench/big thread"
    sizes = [(c, per_thread) for c in channels] + [(big, messages - threads * per_thread)]
    long_ids: list[str] = []
    with recallbox.open(path) as box:
        for channel, size in sizes:
            half = size // 2
            for start, end in ((0, half), (half, size)):
                for at in range(start, end, BATCH):
                    rows = [_turn(rng, n, channel) for n in range(at, min(at + BATCH, end))]
                    if at == 0:
                        rows[2] = {"role": "tool", "content": "x" * LONG_OUTPUT_CHARS}
                    written = box.append_many(channel, rows)
                    if at == 0:
                        long_ids.append(written[2].id)
                if start == 0:
                    box.compact(channel, f"First half of {channel}: {_text(rng, 40)}")
        box.quarantine(channels[-1])
        _curated(box, rng, path.parent, memory)
        total = sum(t.message_count for t in box.threads())
        entries = len(box.memories())
    return {
        "channels": channels,
        "big": big,
        "big_messages": sizes[-1][1],
        "per_thread": per_thread,
        "long_id": long_ids[0],
        "total_messages": total,
        "memory_entries": entries,
        "build_seconds": round(time.perf_counter() - started, 1),
    }


def _first_message(db: Path, channel: str) -> str:
    with recallbox.open(db) as box:
        return box.messages(channel, generation=1)[5].id


def pages(db: Path, data: dict[str, Any]) -> dict[str, str]:
    """Name → path of every page measured."""
    thread = data["channels"][len(data["channels"]) // 2]
    encoded = quote(thread, safe="")
    return {
        "healthz": "/healthz",
        "index": "/",
        f"thread ({data['per_thread']:,} messages)": f"/threads/{encoded}",
        "thread, generation 1 page 5": f"/threads/{encoded}?generation=1&page=5",
        f"thread ({data['big_messages']:,} messages)": "/threads/" + quote(data["big"], safe=""),
        "quarantined thread": "/threads/" + quote(data["channels"][-1], safe=""),
        "message": f"/messages/{_first_message(db, thread)}",
        "message, 50 000 chars, offset 12 000": f"/messages/{data['long_id']}?offset=12000",
        "search an identifier (global)": f"/search?q={request_id(thread, 502)}",
        "search an identifier (one thread)": f"/search?q={request_id(thread, 502)}&channel={encoded}",
        "search two common words (global)": "/search?q=rollout+canary",
        "search two common words (one thread)": f"/search?q=rollout+canary&channel={encoded}",
        "policy": "/policy",
        "policy confirm": "/policy/confirm?action=quarantine&target=x",
        f"memory ({data.get('memory_entries', 0):,} entries)": "/memory",
        "memory, dormant only": "/memory?state=dormant",
        "memory, last page": f"/memory?page={max(1, -(-data.get('memory_entries', 0) // 100))}",
        f"knowledge ({KNOWLEDGE_FILES} documents)": "/knowledge",
        f"code ({CODE_FILES} files)": "/code",
        "hit-log": "/hits",
    }


def server_cpu_seconds(pid: int) -> float:
    """User + system CPU time the server process has used so far (``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(url: str, paths: dict[str, str], repeat: int, pid: int = 0) -> dict[str, Any]:
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port))
    results: dict[str, Any] = {}
    for name, path in paths.items():
        samples = []
        size = 0
        cpu_started = 0.0
        for n in range(WARMUP + repeat):
            if n == WARMUP:
                cpu_started = server_cpu_seconds(pid)
            started = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status == 200, (name, response.status)
            size = len(body)
            if n >= WARMUP:
                samples.append(elapsed)
        cpu_ms = (server_cpu_seconds(pid) - cpu_started) * 1000 / repeat
        samples.sort()
        results[name] = {
            "path": path,
            "p50_ms": round(statistics.median(samples), 2),
            "p95_ms": round(samples[int(0.95 * (len(samples) - 1))], 2),
            "max_ms": round(samples[-1], 2),
            "server_cpu_ms_mean": round(cpu_ms, 2),
            "samples": len(samples),
            "bytes": size,
        }
        print(f"{name:45s} p50 {results[name]['p50_ms']:8.2f} ms   p95 {results[name]['p95_ms']:8.2f} ms   server CPU {cpu_ms:7.2f} ms/load")
    connection.close()
    return results


def search_calls(data: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    """The search pages whose two verbs are also timed alone: name -> (query, channel)."""
    thread = data["channels"][len(data["channels"]) // 2]
    return {
        "search an identifier (global)": (request_id(thread, 502), None),
        "search two common words (global)": ("rollout canary", None),
        "search two common words (one thread)": ("rollout canary", thread),
    }


def search_split(db: Path, data: dict[str, Any], repeat: int, home: Path) -> dict[str, Any]:
    """The search page's two verbs timed alone, in-process on the same store (wall and CPU
    time, ``time.process_time``): what the page costs beyond ``search_memory`` + ``recall``."""
    from recallbox.web.search import RECALL_BUDGET_CHARS

    os.environ["RECALLBOX_HOME"] = str(home)
    out: dict[str, Any] = {}
    with recallbox.open(db) as box:
        for name, (query, channel) in search_calls(data).items():
            calls = {
                "search_memory": partial(box.search_memory, query, channel),
                "recall": partial(box.recall, query, budget_chars=RECALL_BUDGET_CHARS, allow_embed=False),
            }
            out[name] = {}
            for verb, call in calls.items():
                wall, cpu = [], []
                for n in range(WARMUP + repeat):
                    started, cpu_started = time.perf_counter(), time.process_time()
                    call()
                    if n >= WARMUP:
                        wall.append((time.perf_counter() - started) * 1000)
                        cpu.append((time.process_time() - cpu_started) * 1000)
                wall.sort()
                out[name][verb] = {
                    "p50_ms": round(statistics.median(wall), 2),
                    "p95_ms": round(wall[int(0.95 * (len(wall) - 1))], 2),
                    "cpu_ms_mean": round(statistics.fmean(cpu), 2),
                }
                print(f"  {name:43s} {verb:14s} p50 {out[name][verb]['p50_ms']:8.2f} ms   p95 {out[name][verb]['p95_ms']:8.2f} ms   CPU {out[name][verb]['cpu_ms_mean']:7.2f} ms")
    return out


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=None, help="reuse or keep the store here")
    parser.add_argument("--keep", action="store_true", help="keep the store after the run")
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    parser.add_argument("--per-thread", type=int, default=DEFAULT_PER_THREAD)
    parser.add_argument("--memory", type=int, default=DEFAULT_MEMORY)
    parser.add_argument("--repeat", type=int, default=DEFAULT_REPEAT)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="recallbox-ui-bench-"))
    db = args.db or folder / "ui.db"
    meta = db.with_suffix(".json")
    if db.exists() and meta.exists():
        data = json.loads(meta.read_text(encoding="utf-8"))
    else:
        data = build(db, messages=args.messages, threads=args.threads, per_thread=args.per_thread, memory=args.memory)
        meta.write_text(json.dumps(data), encoding="utf-8")
    print(f"store: {data['total_messages']} messages, built in {data['build_seconds']} s")
    paths = pages(db, data)
    server = subprocess.Popen(
        [sys.executable, "-m", "recallbox", "ui", "--db", str(db), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "RECALLBOX_HOME": str(folder / "home"), "PATH": ""},
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        load_before = os.getloadavg()
        results = measure(url, paths, args.repeat, server.pid)
        load_after = os.getloadavg()
    finally:
        server.terminate()
        server.wait()
    print("search verbs alone:")
    split = search_split(db, data, args.repeat, folder / "home")
    report = {
        "benchmark": "ui",
        "commit": _commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"python": platform.python_version(), "cpus": 2, "platform": platform.platform()},
        "command": "nice -n 5 python benchmarks/ui.py " + " ".join(sys.argv[1:]),
        "dataset": {
            "messages": data["total_messages"],
            "threads": len(data["channels"]) + 1,
            "per_thread": args.per_thread,
            "big_thread_messages": data["big_messages"],
            "memory_entries": data.get("memory_entries"),
            "knowledge_documents": KNOWLEDGE_FILES,
            "code_files": CODE_FILES,
            "hit_log_recalls": HIT_QUERIES,
            "seed": SEED,
            "build_seconds": data["build_seconds"],
        },
        "metric": "page load, client wall time from request to last byte over HTTP keep-alive on loopback, milliseconds; server_cpu_ms_mean: the server process's user+system CPU time per load (/proc, clock-tick resolution, averaged over the samples)",
        "load_average": {"before": [round(v, 2) for v in load_before], "after": [round(v, 2) for v in load_after]},
        "parameters": {"repeat": args.repeat, "warmup": WARMUP, "goal_p95_ms": GOAL_P95_MS},
        "pages": results,
        "search_verbs_alone": split,
        "over_goal": sorted(n for n, r in results.items() if r["p95_ms"] > GOAL_P95_MS),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    if not args.keep and args.db is None:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
