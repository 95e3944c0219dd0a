"""Many processes on one SQLite file: writers (Python API and the real CLI), an importer,
compaction, ``embed --all`` and readers, all at once.

:func:`run_concurrently` starts every :class:`Role` (a job kind with its params) on one
database, waits for the writers, stops the readers and checks: every child exited 0, no
"database is locked" (nor any other error) reached a user, every acknowledged write is there
exactly once, each writer's messages keep their order, the store is healthy. It also reports
the longest read (and the longest read while the importer ran).
"""

from __future__ import annotations

import concurrent.futures
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import recallbox
from reliability.harness.ack import read_acks
from reliability.harness.invariants import WRITTEN_ACKS, check_store, order_problems
from reliability.harness.jobs import JOB_KINDS, JobEnv
from reliability.harness.procs import Child, Zygote, spawn

LOCKED_WORDS = ("database is locked", "locked", "BusyError", "Traceback")


@dataclass(frozen=True, slots=True)
class Role:
    """One concurrent process: a job kind, its params, and how many of it."""

    kind: str
    params: dict[str, Any] = field(default_factory=dict)
    processes: int = 1


@dataclass(slots=True)
class ConcurrencyResult:
    processes: int = 0
    writes: int = 0
    reads: int = 0
    longest_read_s: float = 0.0
    read_p95_s: float = 0.0
    longest_read_by_verb: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def run_concurrently(root: Path, roles: list[Role], *, seed: int = 0) -> ConcurrencyResult:
    """Run ``roles`` at once on ``root/concurrent.db`` (see the module docstring)."""
    (root / "home").mkdir(parents=True, exist_ok=True)
    env = JobEnv(root / "concurrent.db", root, seed)
    with recallbox.open(env.db):
        pass  # created (and migrated) once, before the crowd
    for role in roles:  # inputs: transcripts to import, messages to embed
        JOB_KINDS[role.kind].before_run(env)
    children: list[Child] = []
    started = time.monotonic()
    result = ConcurrencyResult()
    with Zygote(role.kind for role in roles) as zygote:  # each process forked: no start-up
        for role in roles:
            for _ in range(role.processes):
                writer = f"{JOB_KINDS[role.kind].tag}{len(children)}"
                children.append(
                    spawn(role.kind, env.db, root, writer=writer, params=role.params, zygote=zygote)
                )
        for child in children:
            child.wait_ready()
        result.processes = len(children)
        writers = [c for c in children if c.kind != "reader"]
        for child in writers:
            code = child.wait()
            if code != 0:
                result.problems.append(f"{child.kind} exited {code}: {child.stderr()[-1500:]}")
        (root / "stop").touch()
        for child in children:
            if child.kind == "reader":
                code = child.wait()
                if code != 0:
                    result.problems.append(f"reader exited {code}: {child.stderr()[-1500:]}")
    result.seconds = time.monotonic() - started
    all_acks: list[dict[str, Any]] = []
    reads: list[float] = []
    for child in children:
        text = child.stderr()
        for word in LOCKED_WORDS:
            if word in text:
                result.problems.append(f"{child.kind} printed {word!r}: {text[-800:]}")
                break
        acks = read_acks(child.acks)
        all_acks += acks
        for a in acks:
            if a.get("kind") == "read":
                reads.append(float(a["seconds"]))
                verb = str(a["verb"])
                longest = result.longest_read_by_verb.get(verb, 0.0)
                result.longest_read_by_verb[verb] = max(longest, float(a["seconds"]))
        if child.kind != "reader":
            with recallbox.open(env.db) as box:
                result.problems += order_problems(box, acks)
    result.writes = sum(1 for a in all_acks if a.get("kind") in WRITTEN_ACKS)
    result.reads = len(reads)
    if reads:
        reads.sort()
        result.longest_read_s = reads[-1]
        result.read_p95_s = reads[int(0.95 * (len(reads) - 1))]
    result.problems += check_store(env.db, all_acks)
    for role in roles:  # an import ends equal to a fresh import; the rest change under it
        complete = role.kind.startswith("import") or role.kind in (
            "knowledge_sync",
            "code_index",
            "hook",
        )
        result.problems += JOB_KINDS[role.kind].check(env, all_acks, complete=complete)
    return result


HELD_IMPORT_TURNS = 1_500
"""Turns of the held import's transcript: over a MiB, so progress is reported mid-file."""
HOLD_WAIT_S = 120
"""Watchdog: the importer reaches its hold point by then."""
READER_WATCHDOG_S = 60
"""Watchdog on a reader while the import holds the write lock (a blocked reader fails it)."""
READER_BUSY_MS = 2_000
"""The held-import reader's busy timeout: a reader that waits for the lock fails after it."""


@dataclass(slots=True)
class HeldImportResult:
    lock_held: bool = False
    reads: int = 0
    longest_read_s: float = 0.0
    cli_reads: int = 0
    problems: list[str] = field(default_factory=list)


def _write_lock_held(db: Path) -> bool:
    """Whether another connection holds the write lock (a BEGIN IMMEDIATE that cannot wait)."""
    import apsw

    conn = apsw.Connection(str(db))
    try:
        conn.execute("BEGIN IMMEDIATE")
    except apsw.BusyError:
        return True
    finally:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
    return False


def reads_during_held_import(root: Path, *, seed: int = 0) -> HeldImportResult:
    """An import stops inside its write transaction; fresh reader processes (the Python API
    and the CLI) must open the store and read, then the import finishes."""
    from reliability.harness import corpus
    from reliability.harness.jobs import cli

    (root / "home").mkdir(parents=True, exist_ok=True)
    db = root / "held.db"
    result = HeldImportResult()
    with recallbox.open(db) as box:
        before = box.append("before:1", "user", "deploy staging before the import")
    lines = corpus.claude_records("held", HELD_IMPORT_TURNS, seed=seed)
    corpus.write_lines(root / "transcripts" / "claude" / "held.jsonl", lines)
    importer = spawn("import_claude_code", db, root, writer="held", params={"hold": True})
    importer.wait_ready()
    deadline = time.monotonic() + HOLD_WAIT_S
    while not (root / "holding").exists():
        if importer.proc.poll() is not None or time.monotonic() > deadline:
            result.problems.append(f"the import never held: {importer.stderr()[-1500:]}")
            importer.kill()
            return result
        time.sleep(0.02)
    try:
        result.lock_held = _write_lock_held(db)
        reader = spawn(
            "reader",
            db,
            root,
            writer="r1",
            params={"count": 8, "busy_ms": READER_BUSY_MS, "read_id": before.id},
        )
        reader.wait_ready()
        code = reader.wait(timeout=READER_WATCHDOG_S)
        reads = [float(a["seconds"]) for a in read_acks(reader.acks) if a.get("kind") == "read"]
        result.reads, result.longest_read_s = len(reads), max(reads, default=0.0)
        if code != 0:
            last = reader.stderr().strip().splitlines()[-1:]
            result.problems.append(f"a reader failed while the import held the lock: {last}")
            return result  # the CLI readers would wait the full busy timeout each
        reads_args = (("search-memory", "deploy"), ("search", "deploy"), ("thread", "list"))
        with concurrent.futures.ThreadPoolExecutor(len(reads_args)) as pool:  # all at once
            outs = list(pool.map(lambda args: cli(*args, db=db), reads_args))
        for args, out in zip(reads_args, outs, strict=True):
            if out.returncode != 0:
                result.problems.append(
                    f"`recallbox {' '.join(args)}` exited {out.returncode}: {out.stderr.strip()[-500:]}"
                )
            else:
                result.cli_reads += 1
    finally:
        (root / "released").touch()
        code = importer.wait()
        if code != 0:
            result.problems.append(f"the held import failed: {importer.stderr()[-1500:]}")
    return result
