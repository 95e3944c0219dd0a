"""Crash safety (#15 item 2): every job kind killed with SIGKILL at random points, then the
store must open healthy with every acknowledged write, and the job must complete on re-run
(an import resumes and ends equal to a fresh import), on each backend. The long run kills each
kind ≥ 100 times (``benchmarks/reliability.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from backends import DbLocation
from reliability.conftest import CI_KILLS
from reliability.harness.crash import crash_series
from reliability.harness.jobs import JOB_KINDS, WRITE_KINDS


@pytest.mark.parametrize("kind", WRITE_KINDS)
def test_kill_minus_nine_never_loses_an_acknowledged_write(
    tmp_path: Path, db_location: DbLocation, kind: str
) -> None:
    kills = CI_KILLS[JOB_KINDS[kind].interface]
    result = crash_series(kind, tmp_path, kills, seed=15, db=db_location("crash"))
    assert result.problems == []
    assert result.kills == kills and result.completed
