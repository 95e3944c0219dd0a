"""Job kinds: the units of work the concurrency and crash harnesses run in child processes.

A :class:`JobKind` says how to run one job in a child (``run``, through the Python API or the
real CLI), how the parent prepares its inputs (``prepare`` once, ``before_run`` before each
start), how to run it to completion after a crash (``complete``), and what must hold after a
kill and after completion (``check``). Every write a job makes is acknowledged in the fsync'ed
side log (:mod:`reliability.harness.ack`) only after its call returned.

Adding a job kind (knowledge sync, code index, decay, MEMORY.md import, remember, …) is one
entry in :data:`JOB_KINDS`: write its ``run`` (acknowledging what it wrote) and, when it has
inputs or a completion state, its ``prepare`` / ``before_run`` / ``check``.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import recallbox
from reliability.harness import corpus
from reliability.harness.ack import AckLog

INFINITE = 10**9
"""``count`` of a looping job that runs until it is killed."""
EMBEDDER = "hash"
"""The embedder of the embedding jobs: deterministic, offline, fast."""
CLI_TIMEOUT_S = 120
"""A CLI call a CLI-driven job makes is bounded by this watchdog (a hang fails the job)."""
SEED_MESSAGES = 400
"""Messages without a vector the parent adds before each embedding run."""
IMPORT_TURNS = 60
"""Turns (4 messages each) a transcript grows by before each import run."""


@dataclass(slots=True)
class JobContext:
    """What a job sees in its child process."""

    db: Path | str
    work: Path
    ack: AckLog
    writer: str
    params: dict[str, Any]
    ready: Callable[[], None]

    @property
    def count(self) -> int:
        return int(self.params.get("count", INFINITE))


@dataclass(slots=True)
class JobEnv:
    """What the parent knows about one job's database and inputs."""

    db: Path | str  # a SQLite file or a PostgreSQL URL
    work: Path
    seed: int = 0
    runs: int = 0
    state: dict[str, Any] = field(default_factory=dict)

    @property
    def rng(self) -> random.Random:
        return random.Random(f"{self.seed}:{self.runs}")


def _noop(env: JobEnv) -> None:
    return None


def _no_problems(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    return []


@dataclass(frozen=True, slots=True)
class JobKind:
    """One kind of job (see the module docstring)."""

    name: str
    interface: str  # "python" or "cli"
    run: Callable[[JobContext], None]
    prepare: Callable[[JobEnv], None] = _noop
    before_run: Callable[[JobEnv], None] = _noop
    check: Callable[..., list[str]] = _no_problems
    complete_params: dict[str, Any] = field(default_factory=dict)
    """Params of the run that completes the job after the kills (it must exit 0)."""
    loops: bool = False
    """Runs until killed (kill points are drawn over a fixed window, not a calibrated run)."""
    tag: str = "z"
    """Lower-case letters that start this kind's writer names (and so its markers)."""


def cli(*args: str, db: Path | str) -> subprocess.CompletedProcess[str]:
    """Run ``recallbox --db DB ARGS`` (the real CLI) under the watchdog."""
    return subprocess.run(
        [sys.executable, "-m", "recallbox", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )


def _cli_ok(result: subprocess.CompletedProcess[str]) -> str:
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise SystemExit(f"recallbox exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout.strip()


# -- appenders ---------------------------------------------------------------------------------
def _channel(ctx: JobContext) -> str:
    return str(ctx.params.get("channel", f"rel:{ctx.writer}"))


def run_append(ctx: JobContext) -> None:
    channel = _channel(ctx)
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            mark = corpus.marker("w", ctx.writer, n)
            message = box.append(channel, "user", f"{mark} {corpus.sentence(rng)}")
            ctx.ack.record(kind="message", id=message.id, channel=channel, marker=mark, n=n)


APPEND_BATCH = 5


def run_append_many(ctx: JobContext) -> None:
    channel = _channel(ctx)
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for b in range(ctx.count):
            marks = [
                corpus.marker("w", ctx.writer, b * APPEND_BATCH + i) for i in range(APPEND_BATCH)
            ]
            rows = [{"role": "assistant", "content": f"{m} {corpus.sentence(rng)}"} for m in marks]
            for i, message in enumerate(box.append_many(channel, rows)):
                ctx.ack.record(
                    kind="message",
                    id=message.id,
                    channel=channel,
                    marker=marks[i],
                    n=b * APPEND_BATCH + i,
                    batch=b,
                )


def run_append_cli(ctx: JobContext) -> None:
    channel = _channel(ctx)
    rng = random.Random(ctx.writer)
    ctx.ready()
    for n in range(ctx.count):
        mark = corpus.marker("w", ctx.writer, n)
        message_id = _cli_ok(
            cli("append", channel, "user", f"{mark} {corpus.sentence(rng)}", db=ctx.db)
        )
        ctx.ack.record(kind="message", id=message_id, channel=channel, marker=mark, n=n)


def check_batches(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """``append_many`` is all or nothing: every batch is in the store whole, or not at all."""
    problems = []
    with recallbox.open(env.db) as box:
        for thread in box.threads():
            words = {m.content.split(" ", 1)[0] for m in box.messages(thread.channel)}
            batches: dict[tuple[str, int], int] = {}
            for word in words:
                if word.startswith("wb") and "x" in word:
                    writer, n = word[1:].rsplit("x", 1)
                    key = (writer, int(n) // APPEND_BATCH)
                    batches[key] = batches.get(key, 0) + 1
            problems += [
                f"batch {writer}/{b} has {found} of {APPEND_BATCH} messages"
                for (writer, b), found in batches.items()
                if found != APPEND_BATCH
            ]
    return problems


# -- compaction --------------------------------------------------------------------------------
def run_compact(ctx: JobContext) -> None:
    channel = _channel(ctx)
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            for i in range(2):
                mark = corpus.marker("w", ctx.writer, n * 3 + i)
                message = box.append(channel, "assistant", f"{mark} {corpus.sentence(rng)}")
                ctx.ack.record(kind="message", id=message.id, channel=channel, marker=mark)
            mark = corpus.marker("w", ctx.writer, n * 3 + 2)
            generation = box.compact(channel, f"{mark} summary of generation {n}")
            ctx.ack.record(
                kind="generation",
                id=generation.id,
                channel=channel,
                marker=mark,
                number=generation.number,
            )


# -- embedding ---------------------------------------------------------------------------------
def prepare_embed(env: JobEnv) -> None:
    """Messages without vectors, added before each run so every run has work."""
    rng = env.rng
    with recallbox.open(env.db) as box:
        rows = [
            {"role": "user", "content": f"{corpus.marker('e', env.runs, i)} {corpus.sentence(rng)}"}
            for i in range(SEED_MESSAGES)
        ]
        box.append_many(f"embed:{env.runs % 7}", rows)


def run_embed(ctx: JobContext) -> None:
    ctx.ready()
    with recallbox.open(ctx.db, embedder=EMBEDDER) as box:

        def progress(done: int, total: int) -> None:
            ctx.ack.record(kind="embedded", done=done, total=total)

        count = box.embed_all(batch_size=int(ctx.params.get("batch", 32)), progress=progress)
        ctx.ack.record(kind="embed-finished", count=count)


def run_embed_cli(ctx: JobContext) -> None:
    ctx.ready()
    out = _cli_ok(
        cli("embed", "--all", "--embedder", EMBEDDER, "--batch-size", "32", "--json", db=ctx.db)
    )
    ctx.ack.record(kind="embed-finished", output=out)


def check_embedded(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """After completion nothing is left to embed (a second pass embeds nothing)."""
    if not complete:
        return []
    with recallbox.open(env.db, embedder=EMBEDDER) as box:
        left = box.embed_all()
    return [f"a pass after completion still embedded {left}"] if left else []


# -- import ------------------------------------------------------------------------------------
FORMAT_DIRS = {"claude-code": "claude", "codex": "codex", "openai": "openai"}


def _import_dir(env: JobEnv, fmt: str) -> Path:
    return env.work / "transcripts" / FORMAT_DIRS[fmt]


def grow_transcripts(fmt: str) -> Callable[[JobEnv], None]:
    """Before each run: a transcript grows (a live session), every third run a new file."""

    def grow(env: JobEnv) -> None:
        root = _import_dir(env, fmt)
        files = int(env.state.get("files", 0))
        if files == 0 or env.runs % 3 == 0:
            files += 1
            env.state["files"] = files
            env.state[f"turns{files}"] = 0
        name = f"s{files:03d}"
        turns = int(env.state[f"turns{files}"])
        if fmt == "claude-code":
            lines = corpus.claude_records(name, IMPORT_TURNS, start=turns, seed=env.seed)
            corpus.write_lines(root / f"{name}.jsonl", lines, mode="a")
        elif fmt == "codex":
            # a Codex rollout is rewritten as it grows (the header stays first)
            lines = corpus.codex_records(name, turns + IMPORT_TURNS, seed=env.seed)
            corpus.write_lines(root / f"rollout-2026-01-01T00-00-00-{name}.jsonl", lines)
        else:
            lines = corpus.openai_records(1, IMPORT_TURNS // 4, seed=env.runs)
            lines = [line.replace('"conv0"', f'"{name}r{env.runs}"') for line in lines]
            corpus.write_lines(root / f"{name}.jsonl", lines, mode="a")
        env.state[f"turns{files}"] = turns + IMPORT_TURNS

    return grow


HOLD_TIMEOUT_S = 120
"""Watchdog of a held import (``params["hold"]``): released by then, or it fails."""


def _holder(work: Path) -> Callable[[Any], None]:
    """A progress callback that, the first time it is called (inside the first file's write
    transaction), creates ``holding`` and waits for ``released``: readers run meanwhile."""
    held = False

    def progress(state: Any) -> None:
        nonlocal held
        if held or not state.records or state.bytes_done >= state.bytes_total:
            return  # hold only mid-file: inside the file's write transaction
        held = True
        (work / "holding").touch()
        deadline = time.monotonic() + HOLD_TIMEOUT_S
        while not (work / "released").exists():
            if time.monotonic() > deadline:
                raise SystemExit("the held import was never released")
            time.sleep(0.02)

    return progress


def run_import(ctx: JobContext) -> None:
    fmt = str(ctx.params["format"])
    root = ctx.work / "transcripts" / FORMAT_DIRS[fmt]
    progress = _holder(ctx.work) if ctx.params.get("hold") else None
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        report = box.import_transcripts(fmt, [root], progress=progress)
    if report.errors:
        raise SystemExit(f"import failed: {[(f.path, f.error) for f in report.errors]}")
    ctx.ack.record(kind="import", files=len(report.files), added=report.added)


def run_import_cli(ctx: JobContext) -> None:
    fmt = str(ctx.params["format"])
    root = ctx.work / "transcripts" / FORMAT_DIRS[fmt]
    ctx.ready()
    out = _cli_ok(cli("import", fmt, str(root), "--json", db=ctx.db))
    ctx.ack.record(kind="import", output=out[:200])


def channel_contents(db: Path | str, prefix: str) -> dict[str, list[tuple[str, str, bool]]]:
    """Every thread under ``prefix`` as its (role, content, superseded) list, in order."""
    with recallbox.open(db) as box:
        return {
            t.channel: [
                (m.role, m.content, m.superseded_by is not None) for m in box.messages(t.channel)
            ]
            for t in box.threads()
            if t.channel.startswith(prefix)
        }


HOOKED_PREFIX = "claude-code:hook-"
"""Threads the ``hook`` job kind imports (from its own transcripts, checked by that kind)."""


def check_import(fmt: str) -> Callable[..., list[str]]:
    """After each kill no imported message is lost; after completion the store holds exactly
    what a fresh import of the same files holds (resumed, never doubled)."""

    def check(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
        problems = []
        now = channel_contents(env.db, f"{fmt}:")
        now = {c: v for c, v in now.items() if not c.startswith(HOOKED_PREFIX)}
        before: dict[str, int] = env.state.setdefault("sizes", {})
        for channel, size in before.items():
            if len(now.get(channel, [])) < size:
                problems.append(f"{channel} shrank from {size} to {len(now.get(channel, []))}")
        env.state["sizes"] = {c: len(v) for c, v in now.items()}
        if complete:
            fresh = env.work / f"reference-{env.runs}.db"
            with recallbox.open(fresh) as box:
                box.import_transcripts(fmt, [_import_dir(env, fmt)])
            expected = channel_contents(fresh, f"{fmt}:")
            if now != expected:
                diff = sorted(set(now) ^ set(expected)) or [
                    c for c in expected if now.get(c) != expected[c]
                ]
                problems.append(f"after completion the import differs from a fresh one: {diff[:5]}")
            for suffix in ("", "-wal", "-shm"):
                Path(str(fresh) + suffix).unlink(missing_ok=True)
        return problems

    return check


# -- readers -----------------------------------------------------------------------------------
READ_QUERIES = (*corpus.WORDS[:6], "deploy staging", "wx1x0", '"unbalanced', "NEAR(a b)")


def run_reader(ctx: JobContext) -> None:
    """Reads in a loop, each one timed: search_memory (all threads and one), ranked search,
    threads, read_message of a hit. Stops after ``count`` reads or when ``stop`` exists."""
    stop = ctx.work / str(ctx.params.get("stop", "stop"))
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            if stop.exists():
                break
            query = rng.choice(READ_QUERIES)
            verb = ("search_memory", "search", "threads", "read_message")[n % 4]
            started = time.perf_counter()
            if verb == "search_memory":
                box.search_memory(query)
            elif verb == "search":
                hits = box.search(query, allow_embed=False)
                ctx.params["last_hit"] = hits[0].id if hits else ctx.params.get("last_hit")
            elif verb == "threads":
                box.threads()
            elif ctx.params.get("read_id") or ctx.params.get("last_hit"):
                box.read_message(str(ctx.params.get("read_id") or ctx.params["last_hit"]))
            ctx.ack.record(kind="read", verb=verb, seconds=time.perf_counter() - started)


JOB_KINDS: dict[str, JobKind] = {
    kind.name: kind
    for kind in (
        JobKind("append", "python", run_append, complete_params={"count": 20}, loops=True, tag="a"),
        JobKind(
            "append_many",
            "python",
            run_append_many,
            check=check_batches,
            complete_params={"count": 4},
            loops=True,
            tag="b",
        ),
        JobKind(
            "append_cli", "cli", run_append_cli, complete_params={"count": 2}, loops=True, tag="l"
        ),
        JobKind(
            "compact", "python", run_compact, complete_params={"count": 3}, loops=True, tag="c"
        ),
        JobKind(
            "embed", "python", run_embed, before_run=prepare_embed, check=check_embedded, tag="e"
        ),
        JobKind(
            "embed_cli",
            "cli",
            run_embed_cli,
            before_run=prepare_embed,
            check=check_embedded,
            tag="f",
        ),
        *(
            JobKind(
                f"import_{fmt.replace('-', '_')}",
                "python",
                run_import,
                before_run=grow_transcripts(fmt),
                check=check_import(fmt),
                complete_params={"format": fmt},
                tag="i" + fmt[0],
            )
            for fmt in ("claude-code", "codex", "openai")
        ),
        JobKind(
            "import_cli",
            "cli",
            run_import_cli,
            before_run=grow_transcripts("claude-code"),
            check=check_import("claude-code"),
            complete_params={"format": "claude-code"},
            tag="m",
        ),
        JobKind("reader", "python", run_reader, loops=True, complete_params={"count": 8}, tag="r"),
    )
}
"""Every job kind, by name. A later domain adds its entry here (see the module docstring)."""

from reliability.harness.jobs_curated import CURATED_KINDS  # noqa: E402  (it imports this module)

JOB_KINDS.update({kind.name: kind for kind in CURATED_KINDS})
from reliability.harness.jobs_writers import WRITER_KINDS  # noqa: E402  (it imports this module)

JOB_KINDS.update({kind.name: kind for kind in WRITER_KINDS})

DEFAULT_PARAMS: dict[str, dict[str, Any]] = {
    "import_claude_code": {"format": "claude-code"},
    "import_codex": {"format": "codex"},
    "import_openai": {"format": "openai"},
    "import_cli": {"format": "claude-code"},
}
"""Params every run of a kind gets (the completing run adds ``complete_params``)."""

WRITE_KINDS = tuple(k for k in JOB_KINDS if k != "reader")
"""The kinds the crash harness kills (a reader writes nothing but the hit-log)."""


def env_for_children(extra_paths: tuple[Path, ...] = ()) -> dict[str, str]:
    """The environment of a child: ``src`` and ``tests`` importable (and ``extra_paths``)."""
    root = Path(__file__).resolve().parents[3]
    paths = [*map(str, extra_paths), str(root / "src"), str(root / "tests")]
    existing = os.environ.get("PYTHONPATH")
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([*paths, *([existing] if existing else [])]),
    }
