"""Shared fixtures: an isolated RECALLBOX_HOME, and real databases of **both** backends.

Every test that uses ``db_path`` (or ``box``, or ``db_location``) runs once per backend
(issue #16): ``[sqlite]`` on a file in ``tmp_path``, ``[postgres]`` on a migrated database of
the session's PostgreSQL server (``tests/postgres_server.py``). A test about one backend's own
machinery (files, WAL, apsw) is marked ``@pytest.mark.sqlite_only``: it is then generated for
SQLite alone — no PostgreSQL variant exists, none is skipped.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

import recallbox
from backends import BACKENDS, DbLocation
from recallbox.recall import RECALL_TIMEOUT_ENV

if TYPE_CHECKING:  # imported by pytest as the plugin below, never here (assertion rewriting)
    from postgres_server import RecallboxDatabases

#: Each recall domain's time limit in tests (see ``tmp_home``).
TEST_RECALL_DOMAIN_TIMEOUT_S = 60
#: The tests of the SQLite backend's own package (its files, FTS5, sqlite-vec): SQLite only.
SQLITE_PACKAGE_TESTS = Path(__file__).parent / "storage" / "sqlite"

# The session's PostgreSQL server and its databases (tests/postgres_server.py).
pytest_plugins = ("postgres_server",)

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
settings.load_profile("default")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: about the SQLite backend's own machinery; no postgres variant"
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only") is not None
        only |= SQLITE_PACKAGE_TESTS in metafunc.definition.path.parents
        # Module scope: a module's tests run per backend in turn, and a module-wide database
        # (:func:`module_db_location`) exists once per backend.
        metafunc.parametrize("backend", BACKENDS[:1] if only else BACKENDS, scope="module")


@pytest.fixture(autouse=True)
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("RECALLBOX_HOME", str(home))
    monkeypatch.delenv("RECALLBOX_DB", raising=False)
    # Recall's per-domain limit is wall time: on a loaded CI machine a 1 s share can run out
    # in a test that is not about time limits. Tests of the limit pass ``timeout_s`` themselves.
    monkeypatch.setenv(RECALL_TIMEOUT_ENV, str(TEST_RECALL_DOMAIN_TIMEOUT_S))
    return home


@pytest.fixture(scope="session")
def empty_sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty SQLite store (every migration applied), made once: a ``fresh`` SQLite database
    of :func:`db_location` is a copy of it. A build runs the migrations and syncs the file —
    about 60 ms of wall time, mostly waiting for the disk, against 2 ms for a copy — and the
    property tests draw hundreds of examples."""
    root = tmp_path_factory.mktemp("empty-store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RECALLBOX_HOME", str(root / "home"))
        with recallbox.open(root / "empty.db"):
            pass
    assert not Path(f"{root / 'empty.db'}-wal").exists()  # closed whole: the file is the store
    return root / "empty.db"


def _sqlite_locations(root: Path, template: Path) -> DbLocation:
    def path(name: str = "recall", *, fresh: bool = False) -> Path:
        found = root / f"{name}.db"
        if fresh:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{found}{suffix}").unlink(missing_ok=True)
            root.mkdir(parents=True, exist_ok=True)
            shutil.copy2(template, found)
        return found

    return path


@pytest.fixture
def db_location(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[DbLocation]:
    """``db_location(name="recall", fresh=False)``: where this test's database ``name`` lives
    — a file in ``tmp_path/data`` (SQLite) or a ``postgresql://`` URL (PostgreSQL); the same
    for the same name, emptied first with ``fresh`` (a new example of a property test)."""
    if backend == "sqlite":
        yield _sqlite_locations(tmp_path / "data", request.getfixturevalue("empty_sqlite_store"))
        return
    databases = request.getfixturevalue("recallbox_databases")
    yield databases.url


@pytest.fixture(scope="module")
def module_recallbox_databases(request: pytest.FixtureRequest) -> Iterator[RecallboxDatabases]:
    """The PostgreSQL databases of :func:`module_db_location`, emptied after the module."""
    from postgres_server import RecallboxDatabases

    databases = RecallboxDatabases(request.getfixturevalue("postgres_server"))
    try:
        yield databases
    finally:
        databases.release()


@pytest.fixture(scope="module")
def module_db_location(
    backend: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> DbLocation:
    """:func:`db_location` for a database the tests of one module share (a seeded corpus many
    tests read): one per module and backend."""
    if backend == "sqlite":
        template = request.getfixturevalue("empty_sqlite_store")
        return _sqlite_locations(tmp_path_factory.mktemp("module-db"), template)
    databases: RecallboxDatabases = request.getfixturevalue("module_recallbox_databases")
    return databases.url


@pytest.fixture(scope="module")
def module_db_copy(
    backend: str, module_db_location: DbLocation, request: pytest.FixtureRequest
) -> Callable[[str, str], Path | str]:
    """:func:`db_copy` for :func:`module_db_location`'s databases."""

    def copy(source: str, name: str) -> Path | str:
        if backend == "sqlite":
            target = Path(module_db_location(name))
            shutil.copy(module_db_location(source), target)
            return target
        databases: RecallboxDatabases = request.getfixturevalue("module_recallbox_databases")
        return databases.copy(source, name)

    return copy


@pytest.fixture
def db_copy(
    backend: str, db_location: DbLocation, request: pytest.FixtureRequest
) -> Callable[[str, str], Path | str]:
    """``db_copy(source, name)``: this test's database ``name``, made a copy of its closed
    database ``source`` (a file copy, or ``CREATE DATABASE … TEMPLATE``); returns its location."""

    def copy(source: str, name: str) -> Path | str:
        if backend == "sqlite":
            target = Path(db_location(name))
            shutil.copy(db_location(source), target)
            return target
        return str(request.getfixturevalue("recallbox_databases").copy(source, name))

    return copy


#: A PostgreSQL URL where no server listens (port 9, discard): the unusable database of
#: :func:`bad_db`'s postgres case.
UNREACHABLE_URL = "postgresql://recallbox@127.0.0.1:9/recall"


@pytest.fixture
def bad_db(backend: str, tmp_path: Path) -> tuple[str, str]:
    """``(location, words of its error)``: a database this backend cannot use — a text file
    for SQLite, a server that is not there for PostgreSQL."""
    if backend == "sqlite":
        path = tmp_path / "bad.db"
        path.write_text("this is not a database\n", encoding="utf-8")
        return str(path), "not a recallbox database"
    return UNREACHABLE_URL, "cannot reach the PostgreSQL server"


@pytest.fixture
def db_path(db_location: DbLocation) -> Path | str:
    """This test's database: a SQLite path (``Path``) or a PostgreSQL URL (``str``)."""
    return db_location()


@pytest.fixture
def box(db_path: Path | str) -> Iterator[recallbox.Box]:
    with recallbox.open(db_path) as b:
        yield b
