"""Shared fixtures: an isolated RECALLBOX_HOME and real SQLite databases in tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import recallbox

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
    return home


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "recall.db"


@pytest.fixture
def box(db_path: Path) -> Iterator[recallbox.Box]:
    with recallbox.open(db_path) as b:
        yield b
