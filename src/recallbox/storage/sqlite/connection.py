"""Opening apsw connections: file mode 0600, WAL, busy timeout, foreign keys, BEGIN IMMEDIATE.

A file database gets one connection per thread (SQLite connections are cheap, and WAL lets
readers and one writer run side by side). ``":memory:"`` has a single shared connection guarded
by a re-entrant lock, since every in-memory connection would be a different database.

Driver errors stop here: every read, write and snapshot runs inside :func:`driver_errors`,
which turns the apsw errors a person can act on (a file that is not a database, a damaged
file — a text that is not UTF-8 included —, an unopenable or read-only location, a full disk,
a lock held too long) into :class:`~recallbox.errors.StoreUnavailable` naming the fix.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from recallbox.errors import StoreUnavailable, TimedOut
from recallbox.storage.deadline import Deadline
from recallbox.storage.snapshots import next_serial, snapshot_ended

BUSY_TIMEOUT_MS = 30_000
#: WAL pages before a commit checkpoints them (SQLite's default: 1 000, 4 MiB). FTS5 rewrites
#: the same index pages at every commit; the default copied and synced them again every 4 MiB.
#: ``append_many`` at 1M messages: 4 262 -> 5 153 messages/s wall (``ingest_checkpoint.py``).
#: A reset WAL is cut back to ``WAL_KEPT_BYTES`` (else the file keeps its largest size).
WAL_AUTOCHECKPOINT_PAGES, WAL_KEPT_BYTES = 16_000, 4 << 20
BUSY_POLL_S = 0.002
"""A connection waiting for a lock tries again this often, for up to :data:`BUSY_TIMEOUT_MS`.
SQLite's own busy timeout backs off to 100 ms between tries, so it starves behind a writer that
commits in short batches and begins the next one at once (an import, DESIGN §4.5)."""
#: SQLite virtual-machine steps between two checks of a snapshot's deadline (a check is one
#: Python call: every 1 000 steps costs well under 1 % of a statement's time).
DEADLINE_CHECK_STEPS = 1_000
DB_FILE_MODE = 0o600
MEMORY_PATH = ":memory:"
REPAIR_HINT = "run `recallbox doctor --repair` (or restore the file from a backup)"
logger = logging.getLogger(__name__)


def _create_private_file(path: Path) -> None:
    """Create ``path`` with mode 0600 (and its parent directories) when it does not exist."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        raise StoreUnavailable(
            f"cannot create the database file {str(path)!r}: a part of its folder path is a "
            "file, not a folder; choose another location (--db PATH or RECALLBOX_DB)"
        ) from exc
    except OSError as exc:
        raise _cannot_create(path, exc) from exc
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, DB_FILE_MODE)
    except FileExistsError:
        return
    except OSError as exc:
        raise _cannot_create(path, exc) from exc
    os.close(fd)


def _cannot_create(path: Path, exc: OSError) -> StoreUnavailable:
    return StoreUnavailable(
        f"cannot create the database file {str(path)!r} ({exc.strerror or exc}); choose "
        "a writable location (--db PATH or RECALLBOX_DB)"
    )


def _translate(path: str, exc: apsw.Error) -> StoreUnavailable | TimedOut | None:
    """The recallbox error an apsw error means, or ``None`` to let it through."""
    where = repr(path)
    if isinstance(exc, apsw.InterruptError):
        return TimedOut("the read ran past its time limit and was stopped")
    if isinstance(exc, apsw.NotADBError):
        return StoreUnavailable(
            "the database file is not a recallbox database (check --db / RECALLBOX_DB): "
            f"{where} is not an SQLite file; pass a recallbox database, or a new path"
        )
    if isinstance(exc, apsw.CorruptError):
        return StoreUnavailable(f"the database {where} is damaged ({exc}); {REPAIR_HINT}")
    if isinstance(exc, apsw.CantOpenError | apsw.PermissionsError):
        return StoreUnavailable(
            f"cannot open the database {where} ({exc}); check that it is a file in a directory "
            "you can write to, or pass another path (--db PATH or RECALLBOX_DB)"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return StoreUnavailable(
            f"the database {where} cannot be written ({exc}); make the file and its directory "
            "writable (SQLite writes its -wal and -shm files next to it), or open a copy"
        )
    if isinstance(exc, apsw.FullError):
        return StoreUnavailable(f"the disk holding {where} is full; free some space and retry")
    if isinstance(exc, apsw.IOError):
        return StoreUnavailable(f"the disk failed reading or writing {where} ({exc}); retry")
    if isinstance(exc, apsw.BusyError | apsw.LockedError):
        return StoreUnavailable(
            f"the database {where} stayed locked by another process for over "
            f"{BUSY_TIMEOUT_MS // 1000} s; retry when it is done"
        )
    return None


class _BusyWait:
    """A connection's busy handler: sleep :data:`BUSY_POLL_S`, retry until the timeout, or
    until ``give_up()`` says the wait is no longer wanted (a background thread being stopped)."""

    def __init__(self, give_up: Callable[[], bool] | None = None) -> None:
        self.deadline = 0.0
        self.give_up = give_up

    def __call__(self, tries: int) -> bool:
        now = time.monotonic()
        if tries == 0:
            self.deadline = now + BUSY_TIMEOUT_MS / 1000
        if now >= self.deadline or (self.give_up is not None and self.give_up()):
            return False
        time.sleep(BUSY_POLL_S)
        return True


def wait_when_busy(conn: apsw.Connection, give_up: Callable[[], bool] | None = None) -> None:
    """Give ``conn`` the usual busy handler (a lock is waited for up to
    :data:`BUSY_TIMEOUT_MS`); a wait ends at once when ``give_up()`` turns true."""
    conn.set_busy_handler(_BusyWait(give_up))


@contextmanager
def never_wait(conn: apsw.Connection) -> Iterator[None]:
    """Inside, ``conn`` finds a busy lock busy at once: for a caller that retries on its own
    schedule (a truncating checkpoint would otherwise wait the whole busy timeout for every
    reader, each attempt)."""
    conn.set_busy_handler(None)
    try:
        yield
    finally:
        wait_when_busy(conn)


def _roll_back(conn: apsw.Connection, depth: int) -> None:
    """Undo a failed write at ``depth`` (0: the transaction, else its savepoint). SQLite may
    have rolled the whole transaction back already (SQLITE_FULL, SQLITE_IOERR): then there is
    nothing left to undo, and the original error must not be hidden by a failed ROLLBACK."""
    if not conn.in_transaction:
        return
    if depth == 0:
        conn.execute("ROLLBACK")
    else:
        conn.execute(f"ROLLBACK TO sp{depth}; RELEASE sp{depth}")


@contextmanager
def driver_errors(path: str) -> Iterator[None]:
    """Raise the apsw errors a person can act on as :class:`StoreUnavailable` (see module)."""
    try:
        yield
    except apsw.Error as exc:
        translated = _translate(path, exc)
        if translated is None:
            raise
        raise translated from exc
    except UnicodeDecodeError as exc:  # recallbox only ever stores valid UTF-8 text
        raise StoreUnavailable(
            f"the database {path!r} is damaged (a text is not UTF-8); {REPAIR_HINT}"
        ) from exc


def _acquire(lock: threading.Lock | threading.RLock, timeout: float) -> bool:
    """Take ``lock`` within ``timeout`` seconds (``0``: only if it is free now)."""
    return lock.acquire(timeout=timeout) if timeout > 0 else lock.acquire(blocking=False)


class ConnectionPool:
    """Hands out the calling thread's connection; runs write transactions and read snapshots."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.is_memory = path == MEMORY_PATH
        if not self.is_memory:
            _create_private_file(Path(path))
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._registry_lock = threading.Lock()
        self._shared: apsw.Connection | None = None
        self._memory_lock = threading.RLock()
        self._depth: dict[int, int] = {}  # connection -> open write transaction depth
        self._snapshots: dict[int, int] = {}  # connection -> read snapshots opened by us
        self._write_gate = threading.Lock()  # this process's writers queue here, not in SQLite
        self._serials: dict[int, int] = {}  # connection -> serial of its open snapshot
        self._waiting = 0  # foreground writers waiting for the write gate
        self._last_write = 0.0  # time.monotonic() of the last foreground commit
        self._deadlines: dict[int, list[Deadline]] = {}  # connection -> deadlines in force
        self._side: apsw.Connection | None = None  # writes that never wait (write_nowait)
        self._side_lock = threading.Lock()
        self._closed = False

    def _open(self) -> apsw.Connection:
        if self._closed:
            raise StoreUnavailable("this recallbox store is closed")
        with driver_errors(self.path):
            conn = apsw.Connection(self.path)
            try:
                wait_when_busy(conn)
                conn.execute("PRAGMA foreign_keys = ON")
                if not self.is_memory:
                    conn.execute("PRAGMA journal_mode = WAL")
                    conn.execute("PRAGMA synchronous = NORMAL")
                    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT_PAGES}")
                    conn.execute(f"PRAGMA journal_size_limit = {WAL_KEPT_BYTES}")
            except apsw.Error:
                conn.close()
                raise
        with self._registry_lock:
            self._all.append(conn)
        return conn

    def connection(self) -> apsw.Connection:
        """The calling thread's connection (the shared one for ``:memory:``)."""
        if self.is_memory:
            if self._shared is None:
                self._shared = self._open()
            return self._shared
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
        return conn

    @contextmanager
    def reading(self) -> Iterator[apsw.Connection]:
        """A connection for reads (holds the lock of a shared in-memory connection)."""
        with driver_errors(self.path):
            if self.is_memory:
                with self._memory_lock:
                    conn = self.connection()
                    self._check_deadlines(conn)
                    yield conn
            else:
                conn = self.connection()
                self._check_deadlines(conn)
                yield conn

    def _check_deadlines(self, conn: apsw.Connection) -> None:
        """Refuse a new read once a deadline in force on ``conn`` has expired (the progress
        handler stops long statements; this stops the short ones that follow)."""
        stack = self._deadlines.get(id(conn))
        if stack and any(d.expired for d in stack):
            raise TimedOut("the read ran past its time limit and was stopped")

    @contextmanager
    def snapshot(self, deadline: Deadline | None = None) -> Iterator[apsw.Connection]:
        """Reads on one snapshot: a deferred transaction on this thread's connection (the lock,
        for ``:memory:``), joined by nested snapshots and by a write transaction already open.
        No write transaction may start inside it.

        With ``deadline``, every statement inside is stopped once it expires (raising
        :class:`~recallbox.errors.TimedOut`); a nested snapshot's deadline adds to the outer's.
        """
        lock = self._memory_lock if self.is_memory else None
        if lock is not None:
            lock.acquire()
        try:
            with driver_errors(self.path):
                conn = self.connection()
                key = id(conn)
                if self._depth.get(key, 0) or self._snapshots.get(key, 0):
                    with self._deadline(conn, deadline):
                        yield conn
                    return
                if not self.is_memory:
                    conn.execute("BEGIN")
                try:
                    with self._marked(conn), self._deadline(conn, deadline):
                        yield conn
                finally:
                    if not self.is_memory and conn.in_transaction:
                        conn.execute("COMMIT")
        finally:
            if lock is not None:
                lock.release()

    def snapshot_id(self) -> int | None:
        """A number unique to the read snapshot open on the calling thread, in this process
        (``None`` outside one): what a per-snapshot cache of read results is keyed by."""
        key = id(self.connection())
        if not self._snapshots.get(key, 0):
            return None
        return self._serials.get(key)

    @contextmanager
    def _deadline(self, conn: apsw.Connection, deadline: Deadline | None) -> Iterator[None]:
        """Install ``deadline`` on ``conn`` for the block: a progress handler that stops the
        running statement once any deadline in force has expired."""
        if deadline is None:
            yield
            return
        key = id(conn)
        stack = self._deadlines.setdefault(key, [])
        stack.append(deadline)
        if len(stack) == 1:
            conn.set_progress_handler(lambda: any(d.expired for d in stack), DEADLINE_CHECK_STEPS)
        try:
            if deadline.expired:
                raise TimedOut("the read ran past its time limit and was stopped")
            yield
        finally:
            stack.remove(deadline)
            if not stack:
                self._deadlines.pop(key, None)
                conn.set_progress_handler(None)

    @contextmanager
    def unstoppable(self, conn: apsw.Connection) -> Iterator[None]:
        """Suspend the deadlines in force on ``conn`` for the block: work whose result is kept
        for later reads (an in-memory copy of vectors) finishes even when the read it serves
        runs late; that read is stopped by its next statement."""
        stack = self._deadlines.get(id(conn))
        if not stack:
            yield
            return
        conn.set_progress_handler(None)
        try:
            yield
        finally:
            conn.set_progress_handler(lambda: any(d.expired for d in stack), DEADLINE_CHECK_STEPS)

    @contextmanager
    def _marked(self, conn: apsw.Connection) -> Iterator[None]:
        key = id(conn)
        if not self._snapshots.get(key, 0):
            self._serials[key] = next_serial()
        self._snapshots[key] = self._snapshots.get(key, 0) + 1
        try:
            yield
        finally:
            self._snapshots[key] -= 1
            if not self._snapshots[key]:
                snapshot_ended(self._serials[key])

    @contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error); nested calls use a savepoint."""
        lock = self._memory_lock if self.is_memory else None
        if lock is not None:
            lock.acquire()
        try:
            with driver_errors(self.path):
                conn = self.connection()
                if self._snapshots.get(id(conn), 0):
                    raise RuntimeError("a write transaction cannot start inside a read snapshot")
                with self._write(conn):
                    yield conn
        finally:
            if lock is not None:
                lock.release()

    def mark_background(self) -> None:
        """The calling thread is a background worker: its writes give way to the others'."""
        self._local.background = True

    def writers_waiting(self) -> int:
        """How many foreground writers of this process wait for the write gate."""
        return self._waiting

    def seconds_since_write(self) -> float:
        """Seconds since this process's last foreground write committed."""
        return time.monotonic() - self._last_write

    def in_transaction(self) -> bool:
        """True inside a write transaction or a read snapshot on the calling thread."""
        key = id(self.connection())
        return bool(self._depth.get(key, 0) or self._snapshots.get(key, 0))

    def in_write(self) -> bool:
        """True inside a write transaction on the calling thread."""
        return bool(self._depth.get(id(self.connection()), 0))

    def release_thread_connection(self) -> None:
        """Close the calling thread's connection (a worker thread that is about to end)."""
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None or self.is_memory:
            return
        self._local.conn = None
        with self._registry_lock:
            if conn in self._all:
                self._all.remove(conn)
        try:
            conn.close()
        except apsw.Error:
            logger.debug("a worker connection did not close cleanly")

    @contextmanager
    def _write(self, conn: apsw.Connection) -> Iterator[None]:
        key = id(conn)
        depth = self._depth.get(key, 0)
        if depth == 0 and not self.is_memory:
            # Trigger: another thread of this process writes. Why: SQLite's busy handler
            # sleeps between retries; a lock wakes the next writer the moment one commits.
            # Outcome: one writer at a time per process.
            foreground = not getattr(self._local, "background", False)
            with self._registry_lock:
                self._waiting += foreground
            try:
                self._write_gate.acquire()
            finally:
                with self._registry_lock:
                    self._waiting -= foreground
            try:
                conn.execute("BEGIN IMMEDIATE")
                yield from self._written(conn, key, depth)
            finally:
                if foreground:
                    self._last_write = time.monotonic()
                self._write_gate.release()
            return
        conn.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
        yield from self._written(conn, key, depth)

    def _written(self, conn: apsw.Connection, key: int, depth: int) -> Iterator[None]:
        self._depth[key] = depth + 1
        try:
            yield
        except BaseException:
            self._depth[key] = depth
            _roll_back(conn, depth)
            raise
        self._depth[key] = depth
        try:
            conn.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
        except BaseException:
            _roll_back(conn, depth)  # a COMMIT that failed (a full disk) leaves it open
            raise

    def write_nowait(self, work: Callable[[apsw.Connection], None], *, wait_s: float = 0.0) -> bool:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction that waits at most ``wait_s``
        seconds for the write lock; ``False`` (nothing ran) when the lock stayed busy.

        A file database uses a side connection of its own (another thread using it counts as
        busy), so the calling thread's snapshot or transaction is not joined; ``:memory:`` has
        one connection, so a thread inside a snapshot or transaction on it gets ``False``.
        """
        timeout = max(0.0, wait_s)
        if self.is_memory:
            if not _acquire(self._memory_lock, timeout):
                return False
            try:
                conn = self.connection()
                key = id(conn)
                if self._snapshots.get(key, 0) or self._depth.get(key, 0):
                    return False
                with driver_errors(self.path), self._write(conn):
                    work(conn)
                return True
            finally:
                self._memory_lock.release()
        if not _acquire(self._side_lock, timeout):
            return False
        try:
            with driver_errors(self.path):
                if self._side is None:
                    self._side = self._open()
                side = self._side
                side.setbusytimeout(int(timeout * 1000))
                try:
                    side.execute("BEGIN IMMEDIATE")
                except (apsw.BusyError, apsw.LockedError):
                    return False
                try:
                    work(side)
                except BaseException:
                    if side.in_transaction:
                        side.execute("ROLLBACK")
                    raise
                side.execute("COMMIT")
                return True
        finally:
            self._side_lock.release()

    def close(self) -> None:
        """Close every connection opened by this pool; no new one opens after this.

        A connection another thread is running a statement on (a late other-memory answer)
        cannot be closed from here: it is left to finish, and closes when that thread drops it.
        """
        self._closed = True
        with self._registry_lock:
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except apsw.ThreadingViolationError:
                logger.debug("a connection in use by another thread is left to finish")
        self._shared = None
        self._side = None
        self._local = threading.local()
