"""Reliability long runs (#15): concurrent writers, kill -9 per job kind, faults, hostile input,
privacy canaries, purge/redact byte scans. Writes ``benchmarks/results/reliability.json``.

The harnesses are the CI subset's (``tests/reliability/harness/``) with larger numbers:

    nice -n 10 python benchmarks/reliability.py                     # everything
    nice -n 10 python benchmarks/reliability.py --only crash --kills 100
    python benchmarks/reliability.py --only concurrency --writers 8 --writes 500

Every figure is counted from the run itself (nothing is hard-coded); a section that found a
problem lists it under ``problems`` and the script exits 1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import multiprocessing
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]

import recallbox  # noqa: E402
from reliability.harness import corpus  # noqa: E402
from reliability.harness.canaries import plant, same_as_nothing, scan  # noqa: E402
from reliability.harness.canary_surfaces import SURFACES  # noqa: E402
from reliability.harness.concurrency import (  # noqa: E402
    Role,
    reads_during_held_import,
    run_concurrently,
)
from reliability.harness.crash import crash_series  # noqa: E402
from reliability.harness.erasure import (  # noqa: E402
    bystander_problems,
    purge_everything,
    redact_everything,
)
from reliability.harness.erasure import plant as plant_secrets  # noqa: E402
from reliability.harness.jobs import WRITE_KINDS  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "reliability.json"
SECTIONS = (
    "concurrency",
    "held_import",
    "crash",
    "faults",
    "hostile",
    "fuzz",
    "canaries",
    "erasure",
)


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def _percentiles(samples: list[float]) -> dict[str, float]:
    if not samples:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    ordered = sorted(samples)
    return {
        "p50": statistics.median(ordered),
        "p95": ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)],  # nearest rank
        "max": ordered[-1],
    }


def concurrency(root: Path, writers: int, writes: int, import_turns: int) -> dict[str, Any]:
    big = corpus.claude_records("big", import_turns)  # a large import runs under the crowd
    corpus.write_lines(root / "transcripts" / "claude" / "big.jsonl", big)
    roles = [
        Role("append", {"channel": "shared", "count": writes}, processes=writers // 2),
        Role("append", {"count": writes}, processes=writers - writers // 2),
        Role("append_many", {"channel": "shared", "count": writes // 5}),
        Role("append_cli", {"channel": "shared", "count": 10}, processes=2),
        Role("compact", {"channel": "shared", "count": writes // 20}),
        Role("import_claude_code"),
        Role("embed"),
        Role("remember", {"count": writes // 5}),
        Role("tool_output", {"channel": "shared", "count": writes // 10}),
        Role("knowledge_sync"),
        Role("code_index"),
        Role("memory_import", {"count": writes // 50}),
        Role("decay", {"count": 6}),
        Role("mcp_remember", {"count": writes // 10}),
        Role("hook", {"count": 10}, processes=2),
        Role("reader", processes=2),
    ]
    result = run_concurrently(root, roles)
    return {
        "processes": result.processes,
        "python_writers": writers,
        "imported_messages": 4 * import_turns,
        "writes_per_python_writer": writes,
        "acknowledged_writes": result.writes,
        "reads": result.reads,
        "read_seconds": {
            "p95": result.read_p95_s,
            "max": result.longest_read_s,
            "max_by_verb": result.longest_read_by_verb,
        },
        "seconds": result.seconds,
        "problems": result.problems,
    }


def held_import(root: Path) -> dict[str, Any]:
    result = reads_during_held_import(root)
    return {
        "write_lock_held_by_import": result.lock_held,
        "python_reads_completed": result.reads,
        "cli_reads_completed": result.cli_reads,
        "longest_read_s": result.longest_read_s,
        "problems": result.problems,
    }


def _crash_kind(root: Path, kills: int, kind: str) -> dict[str, Any]:
    started, cpu = time.monotonic(), time.process_time()
    result = crash_series(kind, root, kills, seed=15)
    return {
        "commit": _commit(),
        "kills": result.kills,
        "runs_that_finished_before_their_kill": result.finished_before_kill,
        "acknowledged_writes": result.acknowledged,
        "completed_cleanly": result.completed,
        "kill_window_s": round(result.window_s, 3),
        "seconds": round(time.monotonic() - started, 1),
        "parent_cpu_seconds": round(time.process_time() - cpu, 1),
        "load_average_at_end": os.getloadavg(),
        "problems": result.problems,
    }


def crash(
    root: Path,
    kills: int,
    kinds: list[str],
    *,
    parallel: int = 1,
    save: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """``kills`` kill -9 per kind; ``parallel`` kinds at once (each on its own file), each
    kind's figures handed to ``save`` as soon as it ends (a long run keeps what it finished)."""
    out: dict[str, Any] = {}

    def done(kind: str, figures: dict[str, Any]) -> None:
        out[kind] = figures
        print(
            f"crash {kind}: {figures['kills']} kills, {len(figures['problems'])} problems "
            f"in {figures['seconds']} s",
            flush=True,
        )
        if save is not None:
            save(kind, figures)

    if parallel <= 1:
        for kind in kinds:
            done(kind, _crash_kind(root, kills, kind))
        return out
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(parallel, mp_context=context) as pool:
        futures = {pool.submit(_crash_kind, root, kills, kind): kind for kind in kinds}
        for future in concurrent.futures.as_completed(futures):
            done(futures[future], future.result())
    return out


def _pytest(path: str, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run one CI test module with a JSON-free outcome count (passed / xfailed / failed)."""
    report = Path(tempfile.mkdtemp()) / "report.txt"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", path, "-q", "-p", "no:cacheprovider", "-rA", *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    report.write_text(done.stdout)
    outcomes: dict[str, list[str]] = {"PASSED": [], "XFAIL": [], "FAILED": [], "ERROR": []}
    for line in done.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in outcomes:
            outcomes[word].append(rest.split(" - ")[0])
    return {k.lower(): v for k, v in outcomes.items()} | {"exit_code": done.returncode}


def faults() -> dict[str, Any]:
    outcomes = _pytest("tests/reliability/test_faults.py")
    return {
        "scenarios": len(outcomes["passed"]) + len(outcomes["xfail"]) + len(outcomes["failed"]),
        "recovered": outcomes["passed"],
        "known_open": outcomes["xfail"],
        "problems": outcomes["failed"] + outcomes["error"],
    }


HOSTILE_MODULES = ("test_hostile.py", "test_hostile_documents.py")
"""The hostile-input modules: each writes its call count to ``$RECALLBOX_HOSTILE_COUNT``
(the documents module to that path + ``.documents``)."""


def hostile(examples: int, modules: tuple[str, ...] = HOSTILE_MODULES) -> dict[str, Any]:
    count = Path(tempfile.mkdtemp()) / "count"
    outcomes: dict[str, Any] = {"passed": [], "xfail": [], "failed": [], "error": []}
    cpu = _children_cpu()
    for module in modules:
        found = _pytest(
            f"tests/reliability/{module}",
            env={
                "RECALLBOX_HOSTILE_EXAMPLES": str(examples),
                "RECALLBOX_HOSTILE_COUNT": str(count),
            },
        )
        for outcome in outcomes:
            outcomes[outcome] += found[outcome]
    calls = {
        name: int(path.read_text()) if path.exists() else 0
        for name, path in (("text", count), ("documents", Path(f"{count}.documents")))
    }
    return {
        "examples_per_property": examples,
        "modules": list(modules),
        "hostile_calls": sum(calls.values()),
        "hostile_calls_by_module": calls,
        "children_cpu_seconds": round(_children_cpu() - cpu, 1),
        "passed": len(outcomes["passed"]),
        "known_open": outcomes["xfail"],
        "problems": outcomes["failed"] + outcomes["error"],
    }


def _children_cpu() -> float:
    """CPU seconds of this process's ended children (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def fuzz(root: Path, runs: int) -> dict[str, Any]:
    """atheris over the text entry points (``benchmarks/reliability_fuzz.py``), when installed."""
    try:
        import atheris  # noqa: F401
    except ImportError:
        return {"skipped": "atheris is not installed (pip install atheris)", "problems": []}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "reliability_fuzz.py"),
            f"-runs={runs}",
            "-timeout=60",
            "-print_final_stats=1",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    executed = [
        line
        for line in done.stderr.splitlines()
        if line.startswith("stat::number_of_executed_units")
    ]
    return {
        "runs": int(executed[-1].split(":")[-1]) if executed else 0,
        "exit_code": done.returncode,
        "problems": [] if done.returncode == 0 else [done.stderr[-3000:]],
    }


def canaries(root: Path, threads: int, per_thread: int, queries: int) -> dict[str, Any]:
    planted = plant(root, threads=threads, per_thread=per_thread, seed=15)
    out: dict[str, Any] = {
        "messages": planted.messages,
        "canaries": len(planted.canaries),
        "denied_messages": len(planted.denied_ids),
        "surfaces": {},
    }
    problems: list[str] = []
    for surface in SURFACES:
        n = max(2, queries // 4) if surface.name.startswith("cli") else queries
        chosen = planted.queries(random.Random(surface.name), n)
        result = scan(planted, surface.outputs(planted, chosen), tier=surface.tier, queries=chosen)
        compared = same_as_nothing(planted, surface, chosen[:3]) if surface.compare else []
        out["surfaces"][surface.name] = {
            "outputs_scanned": result.outputs,
            "leaks": len(result.leaks),
            "differs_from_no_match": len(compared),
        }
        problems += result.leaks + compared
    out["outputs_scanned"] = sum(s["outputs_scanned"] for s in out["surfaces"].values())
    out["problems"] = problems
    return out


def erasure(root: Path, rounds: int, bystanders: int) -> dict[str, Any]:
    """Plant secrets everywhere among ``bystanders`` messages, purge (even rounds) or redact
    (odd rounds) them all, and byte-scan the file, its WAL and shm after each round."""
    problems: list[str] = []
    timings: dict[str, list[float]] = {"purge": [], "redact": []}  # mean ms per call, a round
    scans = traces = planted = 0
    for n in range(rounds):
        p = plant_secrets(root / f"round{n}", bystanders)
        expected = set(p.canaries) | {f"vector:{k}" for k in p.vectors}
        if set(p.scan()) != expected:
            problems.append(f"round {n}: the scan does not see every canary before erasing")
        planted += len(expected)
        verb = "purge" if n % 2 == 0 else "redact"
        with recallbox.open(p.db, embedder="hash") as box:
            started = time.monotonic()
            if verb == "purge":
                reports = purge_everything(p, box)
                calls = len(reports)
                if not all(r.wal_truncated for r in reports):
                    problems.append(f"round {n}: a purge left WAL frames")
            else:
                calls = len(redact_everything(p, box))
            timings[verb].append((time.monotonic() - started) * 1000 / calls)
        found = p.scan()
        scans += 1
        traces += len(found)
        problems += [
            f"round {n} ({verb}): {name} still in {where}" for name, where in found.items()
        ]
        problems += [f"round {n} ({verb}): {x}" for x in bystander_problems(p)]
    return {
        "rounds": rounds,
        "bystander_messages": bystanders,
        "secrets_planted": planted,
        "byte_scans": scans,
        "traces_found": traces,
        "ms_per_purge_call": _percentiles(timings["purge"]),
        "ms_per_redact_call": _percentiles(timings["redact"]),
        "problems": problems,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", choices=SECTIONS, action="append")
    parser.add_argument("--kills", type=int, default=100, help="kills per job kind")
    parser.add_argument("--kinds", default=",".join(WRITE_KINDS), help="comma-separated")
    parser.add_argument(
        "--parallel", type=int, default=1, help="job kinds killed at once (crash section)"
    )
    parser.add_argument("--writers", type=int, default=8, help="concurrent Python appenders")
    parser.add_argument("--writes", type=int, default=500, help="messages per appender")
    parser.add_argument(
        "--import-turns",
        type=int,
        default=3000,
        help="turns (4 messages each) of the transcript imported meanwhile",
    )
    parser.add_argument("--examples", type=int, default=600, help="hypothesis examples")
    parser.add_argument(
        "--hostile-modules", default=",".join(HOSTILE_MODULES), help="comma-separated"
    )
    parser.add_argument("--fuzz-runs", type=int, default=20_000, help="atheris inputs")
    parser.add_argument("--canary-threads", type=int, default=400)
    parser.add_argument("--canary-per-thread", type=int, default=100)
    parser.add_argument("--canary-queries", type=int, default=24)
    parser.add_argument("--erasure-rounds", type=int, default=20)
    parser.add_argument("--erasure-bystanders", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sections = args.only or list(SECTIONS)
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    results: dict[str, Any] = previous.get("results", {})
    with tempfile.TemporaryDirectory(prefix="recallbox-reliability-") as tmp:
        root = Path(tmp)
        for section in sections:
            started = time.monotonic()
            work = root / section
            work.mkdir()
            if section == "concurrency":
                results[section] = concurrency(work, args.writers, args.writes, args.import_turns)
            elif section == "held_import":
                results[section] = held_import(work)
            elif section == "crash":  # kinds run apart keep the figures of the others
                kept = {k: v for k, v in results.get(section, {}).items() if k != "run"}
                results[section] = kept

                def save(kind: str, figures: dict[str, Any]) -> None:
                    results["crash"][kind] = figures
                    _write(args.out, results)

                results[section] = kept | crash(
                    work, args.kills, args.kinds.split(","), parallel=args.parallel, save=save
                )
            elif section == "faults":
                results[section] = faults()
            elif section == "hostile":
                modules = tuple(args.hostile_modules.split(","))
                results[section] = hostile(args.examples, modules)
            elif section == "fuzz":
                results[section] = fuzz(work, args.fuzz_runs)
            elif section == "erasure":
                results[section] = erasure(work, args.erasure_rounds, args.erasure_bystanders)
            else:
                results[section] = canaries(
                    work, args.canary_threads, args.canary_per_thread, args.canary_queries
                )
            results[section]["run"] = {
                "commit": _commit(),
                "seconds": round(time.monotonic() - started, 1),
                "parameters": vars(args) | {"out": str(args.out)},
            }
            print(f"{section}: done in {results[section]['run']['seconds']} s", flush=True)
    _write(args.out, results)
    failed = [s for s in sections if _problems(results[s])]
    print(f"wrote {args.out}; sections with problems: {failed or 'none'}")
    return 1 if failed else 0


def _write(out: Path, results: dict[str, Any]) -> None:
    document = {
        "benchmark": "reliability (#15)",
        "dataset": "synthetic: generated transcripts and messages (tests/reliability/harness)",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "results": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2, default=str) + "\n")


def _problems(section: dict[str, Any]) -> bool:
    if "problems" in section:
        return bool(section["problems"])
    return any(_problems(v) for v in section.values() if isinstance(v, dict) and "problems" in v)


if __name__ == "__main__":
    sys.exit(main())
