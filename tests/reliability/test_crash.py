"""Crash safety (#15 item 2): every job kind killed with SIGKILL at random points, then the
store must open healthy with every acknowledged write, and the job must complete on re-run
(an import resumes and ends equal to a fresh import). The long run kills each kind ≥ 100 times
(``benchmarks/reliability.py``).

The kinds' series run :data:`~reliability.conftest.CI_CRASH_PARALLEL` at a time, each on its
own file (as the long run's ``--parallel``): a series mostly waits — for its child to start,
for its random kill point — so series overlap well even on 2 cores. Each kind keeps its own
test and its own failure."""

from __future__ import annotations

import concurrent.futures

import pytest

from reliability.conftest import CI_CRASH_PARALLEL, CI_KILLS
from reliability.harness.crash import CrashResult, crash_series
from reliability.harness.jobs import JOB_KINDS, WRITE_KINDS

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
