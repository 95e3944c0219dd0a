"""Fault injection: an apsw VFS shim that fails the Nth write or sync, a page cap that makes
SQLite report a full disk, and ways to damage a store (a desynced FTS index, a dropped vector
table, a truncated WAL, a newer schema, a read-only file or folder)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw

SHIM_VFS = "recallbox-fault"


class FaultPlan:
    """Counts writes and syncs on main-database and WAL files; fails the ``fail_at``-th."""

    def __init__(
        self, *, fail_write_at: int | None = None, fail_sync_at: int | None = None
    ) -> None:
        self.fail_write_at = fail_write_at
        self.fail_sync_at = fail_sync_at
        self.writes = 0
        self.syncs = 0
        self.failed = 0

    def on_write(self) -> None:
        self.writes += 1
        if self.fail_write_at is not None and self.writes >= self.fail_write_at:
            self.failed += 1
            raise apsw.IOError("injected write failure")

    def on_sync(self) -> None:
        self.syncs += 1
        if self.fail_sync_at is not None and self.syncs >= self.fail_sync_at:
            self.failed += 1
            raise apsw.IOError("injected sync failure")


class _ShimFile(apsw.VFSFile):  # type: ignore[misc]
    def __init__(self, vfs: str, name: Any, flags: list[int], plan: FaultPlan) -> None:
        super().__init__(vfs, name, flags)
        self.plan = plan

    def xWrite(self, data: bytes, offset: int) -> None:
        self.plan.on_write()
        super().xWrite(data, offset)

    def xSync(self, flags: int) -> None:
        self.plan.on_sync()
        super().xSync(flags)


class _ShimVFS(apsw.VFS):  # type: ignore[misc]
    def __init__(self, plan: FaultPlan) -> None:
        self.plan = plan
        self.base = apsw.vfs_names()[0]  # the real default VFS ("unix")
        super().__init__(SHIM_VFS, self.base, makedefault=True)

    def xOpen(self, name: Any, flags: list[int]) -> apsw.VFSFile:
        return _ShimFile(self.base, name, flags, self.plan)


@contextmanager
def failing_io(plan: FaultPlan) -> Iterator[FaultPlan]:
    """Every connection opened inside uses the shim (it is the default VFS meanwhile)."""
    vfs = _ShimVFS(plan)
    try:
        yield plan
    finally:
        plan.fail_write_at = plan.fail_sync_at = None
        vfs.unregister()


@contextmanager
def page_cap(pages: int) -> Iterator[None]:
    """Each new connection gets ``PRAGMA max_page_count = pages``: past it, SQLITE_FULL."""

    def hook(conn: apsw.Connection) -> None:
        conn.execute(f"PRAGMA max_page_count = {pages}")

    apsw.connection_hooks.append(hook)
    try:
        yield
    finally:
        apsw.connection_hooks.remove(hook)


def page_count(db: Path) -> int:
    conn = apsw.Connection(str(db))
    try:
        return int(conn.execute("PRAGMA page_count").fetchone()[0])
    finally:
        conn.close()


def raw(db: Path, *statements: str) -> None:
    """Run statements on a plain connection (the damage a test inflicts)."""
    conn = apsw.Connection(str(db))
    try:
        for statement in statements:
            conn.execute(statement)
    finally:
        conn.close()


def desync_fts(db: Path, table: str = "messages_fts") -> None:
    """Empty an external-content index behind its content table's back."""
    raw(db, f"INSERT INTO {table}({table}) VALUES ('delete-all')")


def drop_vector_tables(db: Path) -> list[str]:
    conn = apsw.Connection(str(db))
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        names = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'vec_space_%' "
                "AND sql LIKE '%USING vec0%'"
            )
        ]
        for name in names:
            conn.execute(f"DROP TABLE {name}")
        return names
    finally:
        conn.close()


def newer_schema(db: Path, version: int = 10_000) -> None:
    raw(
        db,
        "INSERT INTO schema_migrations (version, name, applied_at) "
        f"VALUES ({version}, 'from the future', '2099-01-01')",
    )


def copy_with_truncated_wal(live: Path, dest: Path, keep: Callable[[int], int]) -> int:
    """Copy ``live`` and its WAL to ``dest``, the WAL cut to ``keep(size)`` bytes (a torn
    final frame, as a power cut leaves it). Returns the WAL size before the cut."""
    wal = Path(str(live) + "-wal")
    size = wal.stat().st_size
    shutil.copyfile(live, dest)
    with wal.open("rb") as src, open(str(dest) + "-wal", "wb") as out:
        out.write(src.read(keep(size)))
    return size


@contextmanager
def immutable(*paths: Path) -> Iterator[None]:
    """``chattr +i``: not even root may write (or create files in a folder)."""
    subprocess.run(["chattr", "+i", *map(str, paths)], check=True)
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
