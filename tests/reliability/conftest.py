"""The reliability CI subset: sizes small enough for < 5 minutes on 2 cores (the long runs are
``benchmarks/reliability.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import recallbox

CI_KILLS = {"python": 3, "cli": 2}
"""kill -9 per job kind in CI, by interface (a CLI start costs about a second)."""
CI_WRITES = 60
"""Messages per concurrent Python appender in CI."""
CI_CRASH_PARALLEL = 3
"""Kill series (one per job kind, each on its own file) run at once in CI: a series mostly
waits for its kill points, so three overlap on 2 cores."""


@pytest.fixture(scope="session")
def empty_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty store (every migration applied), made once: a property test copies it for
    each example (:func:`copy_store`) instead of building one. A build runs the migrations and
    syncs the file — about 60 ms of wall time, mostly waiting for the disk, against 2 ms for a
    copy — and the properties draw hundreds of examples."""
    root = tmp_path_factory.mktemp("empty-store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RECALLBOX_HOME", str(root / "home"))
        with recallbox.open(root / "empty.db"):
            pass
    assert not Path(f"{root / 'empty.db'}-wal").exists()  # closed whole: the file is the store
    return root / "empty.db"


def copy_store(template: Path, directory: Path, name: str) -> Path:
    """A copy of ``template`` (:func:`empty_store`) at ``directory / name``, its mode kept."""
    path = directory / name
    shutil.copy2(template, path)
    return path
