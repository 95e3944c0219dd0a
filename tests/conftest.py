"""Shared fixtures: an isolated RECALLBOX_HOME and real SQLite databases in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import recallbox
from recallbox.recall import RECALL_TIMEOUT_ENV

#: Each recall domain's time limit in tests (see ``tmp_home``).
TEST_RECALL_DOMAIN_TIMEOUT_S = 60

# The session's PostgreSQL server and a fresh database per test (tests/postgres_server.py).
pytest_plugins = ("postgres_server",)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("default")


@pytest.fixture(autouse=True)
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("RECALLBOX_HOME", str(home))
    monkeypatch.delenv("RECALLBOX_DB", raising=False)
    # Recall's per-domain limit is wall time: on a loaded CI machine a 1 s share can run out
    # in a test that is not about time limits. Tests of the limit pass ``timeout_s`` themselves.
    monkeypatch.setenv(RECALL_TIMEOUT_ENV, str(TEST_RECALL_DOMAIN_TIMEOUT_S))
    return home


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "recall.db"


@pytest.fixture
def box(db_path: Path) -> Iterator[recallbox.Box]:
    with recallbox.open(db_path) as b:
        yield b
