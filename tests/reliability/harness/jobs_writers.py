"""Job kinds of the remaining writers (#15 items 1 and 2): ``decay`` (the mechanical decay of
memory entries), ``hook`` (``recallbox hook claude-code``, the SessionStart/Stop import hook,
through the real CLI) and ``mcp_remember`` (a real MCP SDK client calling ``remember`` on a
``recallbox mcp`` stdio server).

Imported at the end of :mod:`reliability.harness.jobs`, which adds :data:`WRITER_KINDS` to its
``JOB_KINDS`` (import that module, not this one).

``decay`` is checked exactly: before each run the parent backs the store up (the online backup
API); after a kill the memory entries and the decay watermark must equal the backup's (the run
never committed) or the backup's after the parent ran the same ``decay(day)`` on it (the run
committed whole); an acknowledged run must have committed. Run concurrently with other writers
(no backup), each entry's state must be the one the last acknowledged decay gave it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import recallbox
from backends import is_postgres
from recallbox.transfer import migrate_store
from reliability.harness import corpus
from reliability.harness.jobs import (
    CLI_TIMEOUT_S,
    HOOKED_PREFIX,
    JobContext,
    JobEnv,
    JobKind,
    channel_contents,
)

DECAY_ENTRIES = 400
"""Memory entries the store holds before the first decay run (one MEMORY.md import)."""
DECAY_NEW_PER_RUN = 20
"""Entries added before each decay run: each run has entries to move (they were created
today, and the run's day is months later)."""
DECAY_DRILLS_PER_RUN = 3
"""``recall_context`` drills made before each run (the run folds them from the hit-log)."""
DECAY_FIRST_DAY = 31
"""Days after today of the first run (past the grace)."""
DECAY_STEP_DAYS = 47
"""Days between two runs: a dormant entry is archived a few runs later."""
DAY_FILE = "decay-day"
PRE_DB = "decay-pre.db"


def _bullets(prefix: str, count: int, rng: random.Random) -> str:
    return "".join(
        f"- {corpus.marker(prefix, i)} {corpus.sentence(rng, 6)}\n" for i in range(count)
    )


def _day(env: JobEnv) -> date:
    return date.today() + timedelta(days=DECAY_FIRST_DAY + DECAY_STEP_DAYS * env.runs)


def _remove_db(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


def before_decay(env: JobEnv) -> None:
    """Seed entries once; before each run add entries and drills, write the run's day, and
    (in a crash series) back the store up as the run's starting point."""
    rng = env.rng
    with recallbox.open(env.db) as box:
        if not env.state.get("seeded"):
            box.import_memory(
                box.export_memory().rstrip() + "\n" + _bullets("yx", DECAY_ENTRIES, rng)
            )
            env.state["seeded"] = True
        box.import_memory(
            box.export_memory().rstrip() + "\n" + _bullets(f"yx{env.runs}x", DECAY_NEW_PER_RUN, rng)
        )
        keys = [e.body.split(" ", 1)[0] for e in box.memories()]
        for mark in rng.sample(keys, min(DECAY_DRILLS_PER_RUN, len(keys))):
            box.recall_context(mark)
    day = _day(env)
    env.state["day"] = day.isoformat()
    (env.work / DAY_FILE).write_text(day.isoformat(), encoding="utf-8")
    if env.state.get("crash"):
        pre = env.work / PRE_DB
        _remove_db(pre)
        if is_postgres(env.db):  # no online backup on a server: a copy into a SQLite file
            migrate_store(str(env.db), str(pre))
        else:
            with recallbox.open(env.db) as box:
                box.backup(pre)


def prepare_decay(env: JobEnv) -> None:
    """A crash series checks each run against a backup (see the module docstring)."""
    env.state["crash"] = True


def run_decay(ctx: JobContext) -> None:
    """``count`` decay runs (default 1), ``DECAY_STEP_DAYS`` apart from the day the parent
    wrote; each acknowledged with its transitions once it returned."""
    first = date.fromisoformat((ctx.work / DAY_FILE).read_text(encoding="utf-8").strip())
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(int(ctx.params.get("count", 1))):
            day = first + timedelta(days=DECAY_STEP_DAYS * n)
            report = box.decay(today=day)
            ctx.ack.record(
                kind="decay",
                id=f"{ctx.writer}:{n}",
                day=day.isoformat(),
                transitions=[[t.key, t.to_state] for t in report.transitions],
                folded=report.references_folded,
            )


def memory_state(db: Path | str) -> tuple[Any, ...]:
    """Every memory entry (all fields) and the decay watermark of ``db``."""
    with recallbox.open(db) as box:
        entries = sorted(dataclasses.astuple(e) for e in box.memories())
        return (tuple(entries), box.store.decay_watermark())


def _decayed(pre: Path, day: date) -> tuple[Any, ...]:
    with recallbox.open(pre) as box:
        box.decay(today=day)
    return memory_state(pre)


def check_decay(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """See the module docstring."""
    if not env.state.get("crash"):
        return _last_transitions_hold(env.db, acks)
    day = date.fromisoformat(str(env.state["day"]))
    acked = any(a.get("kind") == "decay" and a.get("day") == day.isoformat() for a in acks)
    now, pre = memory_state(env.db), env.work / PRE_DB
    if not (acked or complete) and now == memory_state(pre):
        return []
    if now != _decayed(pre, day):
        before = "acknowledged " if acked else ""
        return [
            f"after the {before}decay of {day} the entries are neither as before it nor as after it"
        ]
    if complete:
        with recallbox.open(env.db) as box:
            again = box.decay(today=day, dry_run=True)
        if again.transitions or again.references_folded:
            return [f"a second decay of {day} would still change {len(again.transitions)} entries"]
    return []


def _last_transitions_hold(db: Path | str, acks: list[dict[str, Any]]) -> list[str]:
    """Concurrently: nobody else moves an entry, so each holds its last acknowledged state."""
    last: dict[str, str] = {}
    for ack in acks:
        if ack.get("kind") == "decay":
            last.update(dict(ack["transitions"]))
    with recallbox.open(db) as box:
        states = {e.key: e.state for e in box.memories()}
    return [
        f"memory entry {key} is {states.get(key)} after an acknowledged decay made it {state}"
        for key, state in last.items()
        if states.get(key) != state
    ]


# -- the import hook -----------------------------------------------------------------------------
HOOK_TURNS = 6
"""Turns a hook job's own transcript grows by before each hook call."""
HOOK_EVENTS = ("SessionStart", "Stop", "PreCompact")


def _hooks(work: Path) -> Path:
    return work / "hooks"


SESSION_FILE = "hook-session"
"""Written by a crash series: every run hooks this one session (a live session the killed
hooks left half imported); concurrent hook processes each hook a session of their own."""


def prepare_hook(env: JobEnv) -> None:
    (env.work / SESSION_FILE).write_text("hook-crash", encoding="utf-8")


def _turns_so_far(path: Path) -> int:
    """Turns already in the transcript (a line torn by a kill of the writing job is cut: the
    agent that writes a transcript ends its lines)."""
    if not path.exists():
        return 0
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    return sum(1 for line in data.splitlines() if b'-u", "timestamp"' in line)


def run_hook(ctx: JobContext) -> None:
    """``count`` hook calls (the real CLI), each after its session's transcript grew; a call
    must exit 0 with nothing on stderr (a hook reports its failures there, and exits 0)."""
    named = ctx.work / SESSION_FILE
    session = named.read_text(encoding="utf-8") if named.exists() else f"hook-{ctx.writer}"
    path = _hooks(ctx.work) / f"{session}.jsonl"
    ctx.ready()
    for n in range(ctx.count):
        start = _turns_so_far(path)
        corpus.write_lines(path, corpus.claude_records(session, HOOK_TURNS, start=start), mode="a")
        payload = {
            "hook_event_name": HOOK_EVENTS[n % len(HOOK_EVENTS)],
            "source": "resume",
            "session_id": session,
            "transcript_path": str(path),
        }
        done = _hook_call(ctx.db, payload)
        if done.returncode != 0 or _hook_complaints(done.stderr):
            sys.stderr.write(done.stderr)
            raise SystemExit(f"the hook exited {done.returncode}: {done.stderr.strip()[-500:]}")
        ctx.ack.record(
            kind="hooked",
            id=session,
            channel=f"claude-code:{session}",
            turns=start + HOOK_TURNS,
            printed=len(done.stdout),
        )


CREATED_NOTICE = "recallbox: created database "
"""What a writer says on stderr when it creates the missing database (the first hook call of a
series that was killed before anything was written): a notice, not a failure."""


def _hook_complaints(stderr: str) -> list[str]:
    """The hook's stderr lines other than the database-created notice."""
    return [
        line for line in stderr.splitlines() if line.strip() and not line.startswith(CREATED_NOTICE)
    ]


def _hook_call(db: Path | str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recallbox", "--db", str(db), "hook", "claude-code"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def check_hooks(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """After completion the hooked threads hold exactly what a fresh import of the same files
    holds (each hook imported incrementally, never twice)."""
    if not complete or not _hooks(env.work).exists():
        return []
    fresh = env.work / f"hooks-reference-{env.runs}.db"
    with recallbox.open(fresh) as box:
        box.import_transcripts("claude-code", [_hooks(env.work)])
    expected = channel_contents(fresh, HOOKED_PREFIX)
    now = channel_contents(env.db, HOOKED_PREFIX)
    _remove_db(fresh)
    if now != expected:
        differ = sorted(c for c in set(now) | set(expected) if now.get(c) != expected.get(c))
        return [f"hooked threads differ from a fresh import: {differ[:5]}"]
    return []


# -- an MCP client -------------------------------------------------------------------------------
MCP_READ_EVERY = 4
"""Every this many ``remember`` calls the client also calls ``search_memory`` and ``recall``."""


def run_mcp_remember(ctx: JobContext) -> None:
    """A real MCP SDK client on a ``recallbox mcp`` stdio server: ``count`` ``remember`` calls
    (each acknowledged with the key the tool returned), with reads between them."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from reliability.harness.procs import children_of, record_pid  # procs imports jobs

    rng = random.Random(ctx.writer)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "recallbox", "--db", str(ctx.db), "mcp"]
    )

    async def go() -> None:
        with (ctx.work / f"mcp-{ctx.writer}.stderr").open("a") as err:
            async with Client(stdio_client(params, errlog=err)) as client:
                for pid in children_of(os.getpid()):  # the server: killed with this job
                    record_pid(ctx.work, ctx.writer, pid)
                ctx.ready()
                for n in range(ctx.count):
                    mark = corpus.marker("p", ctx.writer, n)
                    text = f"{mark} {corpus.sentence(rng)}"
                    result = await client.call_tool("remember", {"text": text})
                    said = "\n".join(getattr(c, "text", "") for c in result.content)
                    if result.is_error or "remembered" not in said:
                        raise SystemExit(f"remember failed: {said[:500]}")
                    ctx.ack.record(kind="memory", id=said.split(" ", 1)[0], marker=mark, n=n)
                    if n % MCP_READ_EVERY == 0:
                        await client.call_tool("search_memory", {"query": mark})
                        await client.call_tool("recall", {"query": corpus.sentence(rng, 3)})

    anyio.run(go)
    # the server's log is scanned with this job's stderr ("database is locked", a traceback)
    sys.stderr.write((ctx.work / f"mcp-{ctx.writer}.stderr").read_text(errors="replace"))


WRITER_KINDS: tuple[JobKind, ...] = (
    JobKind(
        "decay",
        "python",
        run_decay,
        prepare=prepare_decay,
        before_run=before_decay,
        check=check_decay,
        tag="y",
    ),
    JobKind(
        "hook",
        "cli",
        run_hook,
        prepare=prepare_hook,
        check=check_hooks,
        complete_params={"count": 2},
        loops=True,
        tag="h",
    ),
    JobKind(
        "mcp_remember",
        "python",
        run_mcp_remember,
        complete_params={"count": 4},
        loops=True,
        tag="p",
    ),
)
"""The decay, import-hook and MCP-client job kinds."""
