"""Applying the numbered migrations of ``schema.py``, the long ones in resumable batches.

Each migration's statements run in one ``BEGIN IMMEDIATE`` transaction that also records it
in ``schema_migrations`` (so an older recallbox refuses the file from then on). A migration
with a batched part (``upgrades.py``) also gets a row in ``migration_progress`` in that
transaction; its batches then run one transaction each, the cursor saved with each, and the
row is deleted with the last. Opening the database again resumes an interrupted migration
where it stopped, before any later migration runs. Two processes opening the same file at once
take turns batch by batch (each batch reads the cursor inside its own transaction).

Progress is reported through :data:`logger` (``recallbox.storage.sqlite.migrations``), at most
every :data:`PROGRESS_EVERY_S` and at the end of each migration; each record carries
``migration``, ``done`` and ``total`` attributes (the CLI draws them as a bar).
"""

from __future__ import annotations

import logging
import time

import apsw

from recallbox.errors import SchemaMismatch
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.rows import now
from recallbox.storage.sqlite.schema import LATEST_VERSION, MIGRATION_TABLE_SQL, MIGRATIONS
from recallbox.storage.sqlite.upgrades import BATCHED, Batched, Progress

logger = logging.getLogger(__name__)
PROGRESS_EVERY_S = 0.5
PROGRESS_TABLE_SQL = (
    "CREATE TABLE IF NOT EXISTS migration_progress (name TEXT PRIMARY KEY, "
    "phase INTEGER NOT NULL, cursor INTEGER NOT NULL, done INTEGER NOT NULL, "
    "total INTEGER NOT NULL)"
)


def _is_applied(conn: apsw.Connection, version: int) -> bool:
    row = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
    return row is not None


def _load(conn: apsw.Connection, name: str) -> Progress | None:
    row = conn.execute(
        "SELECT phase, cursor, done, total FROM migration_progress WHERE name = ?", (name,)
    ).fetchone()
    return Progress(*(int(v) for v in row)) if row else None


def _save(conn: apsw.Connection, name: str, progress: Progress) -> None:
    conn.execute(
        "INSERT INTO migration_progress (name, phase, cursor, done, total) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET phase = excluded.phase, cursor = excluded.cursor, "
        "done = excluded.done, total = excluded.total",
        (name, progress.phase, progress.cursor, progress.done, progress.total),
    )


def _report(name: str, progress: Progress) -> None:
    logger.info(
        "migrating: %s (%d/%d)",
        name,
        progress.done,
        progress.total,
        extra={"migration": name, "done": progress.done, "total": progress.total},
    )


def _run_batches(pool: ConnectionPool, name: str, batched: Batched) -> None:
    """Run the batches of migration ``name`` until its progress row is gone."""
    reported = 0.0
    while True:
        with pool.transaction() as conn:
            progress = _load(conn, name)
            if progress is None:
                return
            finished = batched.step(conn, progress)
            if finished:
                batched.finish(conn)
                conn.execute("DELETE FROM migration_progress WHERE name = ?", (name,))
            else:
                _save(conn, name, progress)
        if finished or time.monotonic() - reported >= PROGRESS_EVERY_S:
            _report(name, progress)
            reported = time.monotonic()
        if finished:
            return


def _state(pool: ConnectionPool) -> tuple[set[int], set[str]] | None:
    """The applied versions and the unfinished batched migrations (a read: no write lock),
    or ``None`` when the bookkeeping tables are still to be created."""
    with pool.reading() as conn:
        try:
            versions = {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}
            pending = {str(r[0]) for r in conn.execute("SELECT name FROM migration_progress")}
        except apsw.SQLError:
            return None
    return versions, pending


def migrate(pool: ConnectionPool, path: str) -> None:
    """Apply every missing migration (and finish an interrupted one); opening an up-to-date
    file takes no write lock.

    Raises:
        SchemaMismatch: the file was written by a newer recallbox.
    """
    state = _state(pool)
    if state is None:
        with pool.transaction() as conn:
            conn.execute(MIGRATION_TABLE_SQL)
            conn.execute(PROGRESS_TABLE_SQL)
        state = _state(pool) or (set(), set())
    versions, pending = state
    current = max(versions, default=0)
    if current > LATEST_VERSION:
        raise SchemaMismatch(
            f"database {path!r} has schema version {current}, written by a newer "
            f"recallbox (this one knows up to {LATEST_VERSION}); upgrade recallbox "
            "(pip install -U recallbox) to open it"
        )
    for version, name, statements in MIGRATIONS:
        if version in versions and name not in pending:
            continue
        if callable(statements):
            statements(pool)  # a data step: commits its own batches, resumes when run again
            with pool.transaction() as conn:
                if not _is_applied(conn, version):
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) "
                        "VALUES (?, ?, ?)",
                        (version, name, now()),
                    )
            continue
        batched = BATCHED.get(name)
        with pool.transaction() as conn:
            if not _is_applied(conn, version):
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, now()),
                )
                if batched is not None:
                    _save(conn, name, Progress(total=batched.total(conn)))
        if batched is not None:
            _run_batches(pool, name, batched)
