"""Applying the numbered migrations of ``schema.py`` on a PostgreSQL database.

Opening an up-to-date database reads one row and writes nothing. Otherwise each missing
migration runs in one transaction under a database-wide advisory lock (two processes opening a
new database take turns; the second finds the work done) and is recorded in
``schema_migrations`` with SQLite's number and name. Migration 1 first creates the extensions
recallbox needs; one the server cannot create is a clear error naming the fix. A database whose
highest migration is above :data:`~recallbox.storage.postgres.schema.LATEST_VERSION` was
written by a newer recallbox and is refused.
"""

from __future__ import annotations

from psycopg import errors as pg_errors

from recallbox.errors import SchemaMismatch
from recallbox.storage.postgres.connection import Connection, PgPool, advisory_key
from recallbox.storage.postgres.errors import display_url, extension_error
from recallbox.storage.postgres.schema import (
    EXTENSIONS,
    LATEST_VERSION,
    MIGRATION_TABLE_SQL,
    MIGRATIONS,
)

#: The advisory lock every migration transaction takes (one recallbox schema per database).
MIGRATION_LOCK = advisory_key("recallbox", "schema migrations")


def applied_versions(conn: Connection) -> set[int] | None:
    """The recorded migration numbers, or ``None`` before the bookkeeping table exists."""
    row = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
    if not row or not row[0]:
        return None
    return {int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")}


def _create_extensions(conn: Connection, url: str) -> None:
    for name in EXTENSIONS:
        try:
            with conn.transaction():  # a savepoint: the error is ours to word
                conn.execute(f"CREATE EXTENSION IF NOT EXISTS {name}")
        except (
            pg_errors.FeatureNotSupported,
            pg_errors.InsufficientPrivilege,
            pg_errors.UndefinedFile,
            pg_errors.UndefinedObject,
        ) as exc:
            raise extension_error(name, exc, url) from exc


def check_version(versions: set[int], url: str) -> None:
    """Refuse a database written by a newer recallbox."""
    current = max(versions, default=0)
    if current > LATEST_VERSION:
        raise SchemaMismatch(
            f"database {display_url(url)} has schema version {current}, written by a newer "
            f"recallbox (this one knows up to {LATEST_VERSION}); upgrade recallbox "
            "(pip install -U recallbox) to open it"
        )


def migrate(pool: PgPool) -> None:
    """Apply every missing migration (see the module docs).

    Raises:
        SchemaMismatch: the database was written by a newer recallbox.
        StoreUnavailable: an extension recallbox needs cannot be created.
    """
    with pool.reading() as conn:
        versions = applied_versions(conn)
    if versions is not None:
        check_version(versions, pool.url)
        if all(version in versions for version, _, _ in MIGRATIONS):
            return
    for version, name, statements in MIGRATIONS:
        with pool.transaction() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            if version == 1:
                _create_extensions(conn, pool.url)
                conn.execute(MIGRATION_TABLE_SQL)
            done = applied_versions(conn) or set()
            check_version(done, pool.url)
            if version in done:
                continue
            for statement in statements:
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (version, name)
            )
