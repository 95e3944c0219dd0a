"""Connections to a PostgreSQL server: a ``psycopg_pool`` pool, write transactions and read
snapshots bound to the calling thread, deadlines with teeth, and errors a person can act on.

* Every connection is in autocommit mode with ``TimeZone`` UTC. A read outside a transaction
  borrows one for the statement (its own snapshot); :meth:`PgPool.transaction` and
  :meth:`PgPool.snapshot` bind one to the calling thread until the outermost block ends, so the
  store's methods called inside join them (a nested transaction is a savepoint).
* A write transaction is ``READ COMMITTED``: writers of different threads never wait for each
  other; what must be serialised takes a row lock (the thread's counter row, ``messages.py``) or
  an advisory lock on the resource it plans against (:func:`lock_resource`).
* A read snapshot is ``REPEATABLE READ, READ ONLY``. With a :class:`~recallbox.storage.deadline.
  Deadline`, a statement still running when it expires (or is cancelled) is cancelled on the
  server by a watcher thread, and every later read of the snapshot refuses to start; both raise
  :class:`~recallbox.errors.TimedOut`. A nested snapshot with a deadline is a savepoint, so a
  cancelled statement leaves the outer snapshot usable.
* :meth:`PgPool.write_nowait` writes on a connection of its own and waits at most its
  ``wait_s`` for a lock (``lock_timeout``).

Driver errors stop here (:func:`driver_errors`): a lost server, a timed-out pool, a cancelled
statement become :class:`~recallbox.errors.StoreUnavailable` or ``TimedOut`` naming the fix;
:mod:`recallbox.storage.postgres.errors` words the connection errors.
"""

from __future__ import annotations

import contextlib
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg
import psycopg_pool
from psycopg import errors as pg_errors

from recallbox.errors import StoreUnavailable, TimedOut
from recallbox.storage.deadline import Deadline
from recallbox.storage.postgres.errors import connect_error, display_url
from recallbox.storage.snapshots import next_serial, snapshot_ended

Connection = psycopg.Connection[Any]

#: Connections one store may hold at once (recall runs its domains on parallel threads).
POOL_MAX_CONNECTIONS = 16
#: Connections kept open once the store is open (opened in the background after the first):
#: a recall's domains start on parallel threads, each on a connection of its own, and a
#: connection opened on demand costs a time limit like first-message recall's 150 ms.
POOL_WARM_CONNECTIONS = 2
#: Threads of the pool that open connections (in parallel when several are wanted at once).
POOL_OPENERS = 2
#: How long a thread waits for a free connection before the store reports it unavailable.
POOL_WAIT_S = 30.0
#: How long opening a connection may take (``connect_timeout``).
CONNECT_TIMEOUT_S = 10
#: How often the deadline watcher looks at the statements running under a deadline.
DEADLINE_POLL_S = 0.01
#: How long the watcher waits for the server to acknowledge a cancel request.
CANCEL_TIMEOUT_S = 5.0
TIMED_OUT = "the read ran past its time limit and was stopped"


def _configure(conn: Connection) -> None:
    conn.execute("SET TIME ZONE 'UTC'")


def advisory_key(*parts: object) -> int:
    """A 63-bit advisory-lock key for ``parts`` (stable across processes and machines)."""
    text = "\x1f".join(str(p) for p in parts).encode("utf-8", "surrogatepass")
    return (zlib.crc32(text) << 31) ^ zlib.adler32(text)


def lock_resource(conn: Connection, *parts: object) -> None:
    """Hold an advisory lock on ``parts`` until the calling write transaction ends.

    A transaction that reads a resource to plan its writes to it (a document, the memory
    keys, an imported file, a code scope) takes it first: two writers of the same resource then
    take turns, as SQLite's single writer makes them, while writers of others never wait.
    """
    conn.execute("SELECT pg_advisory_xact_lock(%s)", (advisory_key(*parts),))


@dataclass
class _Bound:
    """The connection a thread's transaction or snapshot holds, and what is in force on it."""

    conn: Connection
    write: bool
    serial: int = 0
    deadlines: list[Deadline] = field(default_factory=list)
    busy: bool = False
    cancelled: bool = False
    savepoints: int = 0


class _Watcher:
    """One daemon thread per pool: cancels the statements whose deadline has expired."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watched: dict[int, _Bound] = {}
        self._thread: threading.Thread | None = None

    def add(self, bound: _Bound) -> None:
        with self._lock:
            self._watched[id(bound)] = bound
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="recallbox-pg-deadlines", daemon=True
                )
                self._thread.start()

    def remove(self, bound: _Bound) -> None:
        with self._lock:
            self._watched.pop(id(bound), None)

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._watched:
                    self._thread = None
                    return
                due = [
                    b
                    for b in self._watched.values()
                    if b.busy and not b.cancelled and any(d.expired for d in b.deadlines)
                ]
            for bound in due:
                bound.cancelled = True
                # A failed cancel: the statement ends anyway; the next read refuses to start.
                with contextlib.suppress(psycopg.Error, OSError):
                    bound.conn.cancel_safe(timeout=CANCEL_TIMEOUT_S)
            time.sleep(DEADLINE_POLL_S)


@contextmanager
def driver_errors(url: str, bound: _Bound | None = None) -> Iterator[None]:
    """Raise the driver errors a person can act on as recallbox errors (see the module)."""
    try:
        yield
    except pg_errors.QueryCanceled as exc:
        if bound is not None and any(d.expired for d in bound.deadlines):
            raise TimedOut(TIMED_OUT) from exc
        raise
    except psycopg_pool.PoolTimeout as exc:
        raise StoreUnavailable(
            f"no connection to the PostgreSQL server at {display_url(url)} became free within "
            f"{POOL_WAIT_S:.0f} s; retry, or raise the server's max_connections"
        ) from exc
    except psycopg.OperationalError as exc:
        if isinstance(exc, pg_errors.LockNotAvailable | pg_errors.DeadlockDetected):
            raise
        raise connect_error(url, exc) from exc
    except psycopg.InterfaceError as exc:
        raise StoreUnavailable(
            f"the connection to the PostgreSQL server at {display_url(url)} was lost ({exc}); "
            "check that the server is running and retry"
        ) from exc


def _probe(url: str) -> None:
    """Connect once, directly: a server that is down, a refused login or a missing database
    fails here at once with the server's own reason (a pool would retry until its timeout)."""
    try:
        psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S).close()
    except psycopg.ProgrammingError as exc:  # not a connection string at all
        raise StoreUnavailable(
            f"{display_url(url)} is not a valid PostgreSQL URL ({exc}); write it as "
            "postgresql://USER:PASSWORD@HOST:PORT/DATABASE (--db / RECALLBOX_DB)"
        ) from exc
    except psycopg.Error as exc:
        raise connect_error(url, exc) from exc


class PgPool:
    """The store's connections (see the module docs)."""

    def __init__(self, url: str, *, max_size: int = POOL_MAX_CONNECTIONS) -> None:
        self.url = url
        self._local = threading.local()
        self._watcher = _Watcher()
        self._closed = False
        _probe(url)
        self._pool = psycopg_pool.ConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            open=False,
            configure=_configure,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            timeout=POOL_WAIT_S,
            num_workers=POOL_OPENERS,
            name="recallbox",
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except psycopg_pool.PoolTimeout as exc:
            self._pool.close()
            raise StoreUnavailable(
                f"cannot connect to the PostgreSQL server at {display_url(url)} "
                f"within {CONNECT_TIMEOUT_S} s; check that it is running and retry"
            ) from exc
        self._pool.resize(min_size=min(POOL_WARM_CONNECTIONS, max_size), max_size=max_size)

    # -- the calling thread's binding ------------------------------------------------------
    def _bound(self) -> _Bound | None:
        bound: _Bound | None = getattr(self._local, "bound", None)
        return bound

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailable("this recallbox store is closed")

    @contextmanager
    def _borrow(self) -> Iterator[Connection]:
        self._check_open()
        with driver_errors(self.url), self._pool.connection() as conn:
            yield conn

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads: the thread's transaction or snapshot, else a borrowed one."""
        bound = self._bound()
        if bound is None:
            with self._borrow() as conn:
                yield conn
            return
        self._check_open()
        if bound.deadlines and any(d.expired for d in bound.deadlines):
            raise TimedOut(TIMED_OUT)
        bound.busy, bound.cancelled = True, False
        try:
            with driver_errors(self.url, bound):
                yield bound.conn
        finally:
            bound.busy = False

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One write transaction (``READ COMMITTED``); nested calls are savepoints."""
        bound = self._bound()
        if bound is not None:
            if not bound.write:
                raise RuntimeError("a write transaction cannot start inside a read snapshot")
            with driver_errors(self.url), bound.conn.transaction():
                yield bound.conn
            return
        with self._borrow() as conn:
            self._local.bound = _Bound(conn, write=True)
            try:
                with driver_errors(self.url), conn.transaction():
                    yield conn
            finally:
                self._local.bound = None

    @contextmanager
    def snapshot(self, deadline: Deadline | None = None) -> Iterator[Connection]:
        """Reads on one snapshot (``REPEATABLE READ, READ ONLY``), joined by nested snapshots and
        by a write transaction already open; ``deadline`` stops its statements (module docs)."""
        bound = self._bound()
        if bound is not None:
            with self._nested(bound, deadline):
                yield bound.conn
            return
        with self._borrow() as conn:
            bound = _Bound(conn, write=False, serial=next_serial())
            self._local.bound = bound
            try:
                with driver_errors(self.url, bound):
                    conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try:
                    with self._deadline(bound, deadline):
                        yield conn
                finally:
                    with driver_errors(self.url):
                        conn.execute("ROLLBACK")  # read only: nothing to keep
            finally:
                self._local.bound = None
                snapshot_ended(bound.serial)

    @contextmanager
    def _nested(self, bound: _Bound, deadline: Deadline | None) -> Iterator[None]:
        if deadline is None:
            yield
            return
        bound.savepoints += 1
        name = f"rb_read_{bound.savepoints}"
        with driver_errors(self.url):
            bound.conn.execute(f"SAVEPOINT {name}")
        try:
            with self._deadline(bound, deadline):
                yield
        except BaseException:
            with driver_errors(self.url):
                bound.conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
            raise
        finally:
            bound.savepoints -= 1
        with driver_errors(self.url):
            bound.conn.execute(f"RELEASE SAVEPOINT {name}")

    @contextmanager
    def _deadline(self, bound: _Bound, deadline: Deadline | None) -> Iterator[None]:
        if deadline is None:
            yield
            return
        bound.deadlines.append(deadline)
        self._watcher.add(bound)
        try:
            if deadline.expired:
                raise TimedOut(TIMED_OUT)
            yield
        finally:
            bound.deadlines.remove(deadline)
            if not bound.deadlines:
                self._watcher.remove(bound)

    def snapshot_id(self) -> int | None:
        """A number unique to the read snapshot open on the calling thread, in this process
        (``None`` outside one): what a per-snapshot cache of read results is keyed by."""
        bound = self._bound()
        return bound.serial if bound is not None and not bound.write else None

    def in_transaction(self) -> bool:
        """True inside a write transaction or a read snapshot on the calling thread."""
        return self._bound() is not None

    def in_write(self) -> bool:
        """True inside a write transaction on the calling thread."""
        bound = self._bound()
        return bound is not None and bound.write

    def write_nowait(self, work: Callable[[Connection], None], *, wait_s: float = 0.0) -> bool:
        """Run ``work`` in one transaction on a connection of its own that waits at most
        ``wait_s`` seconds for any lock (``lock_timeout``); ``False`` (nothing written) when a
        lock or a connection stayed busy that long."""
        self._check_open()
        timeout_ms = max(1, round(max(0.0, wait_s) * 1000))
        with driver_errors(self.url):
            try:
                conn = self._pool.getconn(timeout=max(wait_s, 0.001))
            except psycopg_pool.PoolTimeout:
                return False
            try:
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = {timeout_ms}")
                    work(conn)
            except (pg_errors.LockNotAvailable, pg_errors.DeadlockDetected):
                return False
            finally:
                self._pool.putconn(conn)
        return True

    def close(self) -> None:
        """Close every connection; no new one opens after this."""
        self._closed = True
        self._pool.close()


__all__ = ["Connection", "PgPool", "advisory_key", "driver_errors", "lock_resource"]
