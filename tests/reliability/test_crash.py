"""Crash safety (#15 item 2): every job kind killed with SIGKILL at random points, then the
store must open healthy with every acknowledged write, and the job must complete on re-run
(an import resumes and ends equal to a fresh import). The long run kills each kind ≥ 100 times
(``benchmarks/reliability.py``).

The kinds' series run :data:`~reliability.conftest.CI_CRASH_PARALLEL` at a time, each on its
own file (as the long run's ``--parallel``): a series mostly waits for its random kill
points, so series overlap well even on 2 cores. Each kind keeps its own test and its own
failure. A series forks its children from a zygote (``harness/zygote.py``): each run is a
process in its own session, without an interpreter start of its own."""

from __future__ import annotations

import concurrent.futures
import os
import signal
from pathlib import Path

import pytest

from reliability.conftest import CI_CRASH_PARALLEL, CI_KILLS
from reliability.harness.ack import read_acks
from reliability.harness.crash import CrashResult, crash_series
from reliability.harness.jobs import JOB_KINDS, WRITE_KINDS
from reliability.harness.procs import Zygote, spawn

SLOWEST_FIRST = ("mcp_remember", "import_cli", "embed_cli", "hook", "append_cli")
"""Kinds whose series take longest (a CLI or an MCP server per run), started first so the
pool does not end on one of them alone."""


TEST_NAME = "test_kill_minus_nine_never_loses_an_acknowledged_write"


def _kills(kind: str) -> int:
    return CI_KILLS[JOB_KINDS[kind].interface]


@pytest.fixture(scope="module")
def series(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, CrashResult | BaseException]:
    """The kill series of every kind this run selected (``-k`` picks some), run
    :data:`CI_CRASH_PARALLEL` at a time."""
    chosen = {
        item.callspec.params["kind"]
        for item in request.session.items
        if getattr(item, "originalname", "") == TEST_NAME and hasattr(item, "callspec")
    }
    root = tmp_path_factory.mktemp("crash")
    order = sorted(chosen, key=lambda k: (k not in SLOWEST_FIRST, WRITE_KINDS.index(k)))
    outcomes: dict[str, CrashResult | BaseException] = {}
    with concurrent.futures.ThreadPoolExecutor(CI_CRASH_PARALLEL) as pool:
        futures = {pool.submit(crash_series, k, root, _kills(k), seed=15): k for k in order}
        for future in concurrent.futures.as_completed(futures):
            error = future.exception()
            outcomes[futures[future]] = error if error is not None else future.result()
    return outcomes


@pytest.mark.parametrize("kind", WRITE_KINDS)
def test_kill_minus_nine_never_loses_an_acknowledged_write(
    series: dict[str, CrashResult | BaseException], kind: str
) -> None:
    result = series[kind]
    if isinstance(result, BaseException):
        raise result
    assert result.problems == []
    assert result.kills == _kills(kind) and result.completed


def test_a_forked_child_runs_in_its_own_session_and_dies_by_kill_minus_nine(
    tmp_path: Path,
) -> None:
    """The zygote's children are what the kill series kills: each in a session of its own (the
    group kill reaches it, never the zygote), writing before the kill, ``-9`` after it."""
    (tmp_path / "home").mkdir()
    with Zygote(["append"]) as zygote:
        child = spawn("append", tmp_path / "z.db", tmp_path, writer="a1", zygote=zygote)
        child.wait_ready()
        assert os.getpgid(child.proc.pid) == child.proc.pid != os.getpgid(zygote.proc.pid)
        while not read_acks(child.acks):  # it writes
            assert child.proc.poll() is None, child.stderr()
        assert child.kill() == -signal.SIGKILL
        assert zygote.proc.poll() is None  # the zygote lives on for the next child
    assert zygote.proc.returncode == 0
