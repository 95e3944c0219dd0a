"""kill -9 at random points: a job kind runs in a child, is killed, and the store is checked.

:func:`crash_series` runs one job kind ``kills`` times against one database file, each time
killing the child's process group with SIGKILL at a point drawn uniformly over the job's
duration (a calibrated uninterrupted run for finite jobs, a fixed window for looping ones).
After each kill the generic invariants (:func:`~reliability.harness.invariants.check_store`)
and the kind's own checks must hold; at the end the job is run once more to completion (an
import resumes) and checked again.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path

from reliability.harness.ack import read_acks
from reliability.harness.invariants import WRITTEN_ACKS, check_store, distinct_acks
from reliability.harness.jobs import JOB_KINDS, JobEnv
from reliability.harness.procs import Zygote, spawn

LOOP_WINDOW_S = {"python": 1.0, "cli": 3.0}
"""Kill window of a looping job, measured from its ``ready`` line."""
CALIBRATION_SLACK = 1.2
"""A finite job's kill window is its uninterrupted duration times this."""
MAX_ATTEMPTS_FACTOR = 4
"""A run that ended before its kill does not count; give up after kills × this attempts."""
MAX_PROBLEMS = 20


@dataclass(slots=True)
class CrashResult:
    kind: str
    kills: int = 0
    finished_before_kill: int = 0
    acknowledged: int = 0
    completed: bool = False
    window_s: float = 0.0
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)


def _run_to_end(
    kind: str, env: JobEnv, acks: Path, writer: str, params: dict, zygote: Zygote
) -> tuple[int, float, str]:
    child = spawn(kind, env.db, env.work, writer=writer, params=params, acks=acks, zygote=zygote)
    child.wait_ready()
    started = time.monotonic()
    code = child.wait()
    return code, time.monotonic() - started, child.stderr()


def crash_series(kind: str, root: Path, kills: int, *, seed: int = 0) -> CrashResult:
    """Kill ``kind`` ``kills`` times (see the module docstring); every run is a child forked
    from one zygote (:class:`~reliability.harness.procs.Zygote`): the interpreter's start and
    the imports are paid once per series, not once per run."""
    with Zygote([kind]) as zygote:
        return _series(kind, root, kills, seed, zygote)


def _series(kind: str, root: Path, kills: int, seed: int, zygote: Zygote) -> CrashResult:
    job = JOB_KINDS[kind]
    work = root / kind
    (work / "home").mkdir(parents=True, exist_ok=True)
    env = JobEnv(work / "crash.db", work, seed)
    acks = work / "acks.jsonl"
    rng = random.Random(f"crash:{seed}:{kind}")
    result = CrashResult(kind)
    started = time.monotonic()
    job.prepare(env)
    if job.loops:
        result.window_s = LOOP_WINDOW_S[job.interface]
    else:
        job.before_run(env)
        code, duration, err = _run_to_end(kind, env, acks, "calibrate", {}, zygote)
        if code != 0:
            result.problems.append(f"the calibration run exited {code}: {err[-1000:]}")
            return result
        result.window_s = duration * CALIBRATION_SLACK
    attempt = 0
    while result.kills < kills and attempt < kills * MAX_ATTEMPTS_FACTOR:
        attempt += 1
        env.runs += 1
        job.before_run(env)
        child = spawn(kind, env.db, work, writer=f"{job.tag}{attempt}", acks=acks, zygote=zygote)
        child.wait_ready()
        time.sleep(rng.uniform(0, result.window_s))
        alive = child.proc.poll() is None
        code = child.kill()
        if not alive:
            if code != 0:
                result.problems.append(
                    f"run {attempt} failed by itself ({code}): {child.stderr()[-1000:]}"
                )
                break
            result.finished_before_kill += 1
            continue
        result.kills += 1
        found = read_acks(acks)
        problems = check_store(env.db, found) + job.check(env, found, complete=False)
        result.problems += [f"after kill {result.kills}: {p}" for p in problems]
        if len(result.problems) >= MAX_PROBLEMS:
            break
    env.runs += 1
    job.before_run(env)
    code, _, err = _run_to_end(kind, env, acks, "complete", job.complete_params, zygote)
    if code != 0:
        result.problems.append(f"the completing run exited {code}: {err[-1000:]}")
    else:
        found = read_acks(acks)
        result.acknowledged = sum(1 for a in distinct_acks(found) if a.get("kind") in WRITTEN_ACKS)
        problems = check_store(env.db, found) + job.check(env, found, complete=True)
        result.problems += [f"after completion: {p}" for p in problems]
        result.completed = not problems
    result.seconds = time.monotonic() - started
    return result
