"""Opening apsw connections: file mode 0600, WAL, busy timeout, foreign keys, BEGIN IMMEDIATE.

A file database gets one connection per thread (SQLite connections are cheap, and WAL lets
readers and one writer run side by side). ``":memory:"`` has a single shared connection guarded
by a re-entrant lock, since every in-memory connection would be a different database.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from recallbox.errors import StoreUnavailable

BUSY_TIMEOUT_MS = 30_000
DB_FILE_MODE = 0o600
MEMORY_PATH = ":memory:"


def _create_private_file(path: Path) -> None:
    """Create ``path`` with mode 0600 (and its parent directories) when it does not exist."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, DB_FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


class ConnectionPool:
    """Hands out the calling thread's connection and runs write transactions on it."""

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
        self._depth: dict[int, int] = {}
        self._closed = False

    def _open(self) -> apsw.Connection:
        if self._closed:
            raise StoreUnavailable("this recallbox store is closed")
        try:
            conn = apsw.Connection(self.path)
        except apsw.Error as exc:
            raise StoreUnavailable(f"cannot open database {self.path!r}: {exc}") from exc
        conn.setbusytimeout(BUSY_TIMEOUT_MS)
        conn.execute("PRAGMA foreign_keys = ON")
        if not self.is_memory:
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
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
        if self.is_memory:
            with self._memory_lock:
                yield self.connection()
        else:
            yield self.connection()

    @contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT`` (rollback on error); nested calls use a savepoint."""
        lock = self._memory_lock if self.is_memory else None
        if lock is not None:
            lock.acquire()
        try:
            conn = self.connection()
            key = id(conn)
            depth = self._depth.get(key, 0)
            if depth == 0:
                conn.execute("BEGIN IMMEDIATE")
            else:
                conn.execute(f"SAVEPOINT sp{depth}")
            self._depth[key] = depth + 1
            try:
                yield conn
            except BaseException:
                self._depth[key] = depth
                if depth == 0:
                    conn.execute("ROLLBACK")
                else:
                    conn.execute(f"ROLLBACK TO sp{depth}; RELEASE sp{depth}")
                raise
            self._depth[key] = depth
            if depth == 0:
                conn.execute("COMMIT")
            else:
                conn.execute(f"RELEASE sp{depth}")
        finally:
            if lock is not None:
                lock.release()

    def close(self) -> None:
        """Close every connection opened by this pool."""
        self._closed = True
        with self._registry_lock:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._shared = None
        self._local = threading.local()
