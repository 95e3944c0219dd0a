"""Test helpers for code that must run the same on both backends (``tests/conftest.py``).

The SQLite backend indexes literal search behind the writes (a background indexer); a test that
compares table dumps before and after a verb lets it catch up first (:func:`settle`). The
PostgreSQL backend indexes in the write transaction: nothing to wait for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psycopg

import recallbox

#: The storage backends the suite runs on (``tests/conftest.py`` parametrises ``backend``).
BACKENDS = ("sqlite", "postgres")
#: ``db_location(name="recall", *, fresh=False)`` (``tests/conftest.py``): where this test's
#: database ``name`` lives, a SQLite ``Path`` or a PostgreSQL URL.
DbLocation = Callable[..., "Path | str"]


def is_postgres(location: Path | str) -> bool:
    """Whether ``location`` is a PostgreSQL URL (else a SQLite path)."""
    return isinstance(location, str) and "://" in location


def settle(box: recallbox.Box) -> None:
    """Let the store finish its work behind the writes (SQLite's literal-index backlog) and
    flush the buffered hit-log rows."""
    indexer = getattr(box.store, "indexer", None)
    if indexer is not None:
        indexer.drain()
    box.hits.flush()


def changes(box: recallbox.Box) -> object:
    """A value that differs once anything but the hit-log was written: SQLite's count of the
    rows the calling thread's connection changed; on PostgreSQL every row's version (``xmin``,
    ``ctid``: an update writes a new version even of the same values), read on a connection of
    its own."""
    location = box.location
    if not is_postgres(location):
        return int(box.store.pool.connection().total_changes())  # type: ignore[attr-defined]
    with psycopg.connect(location, autocommit=True) as conn:
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "ORDER BY tablename"
            ).fetchall()
            if not str(r[0]).startswith("hit_log")
        ]
        return [
            (
                table,
                conn.execute(
                    f"SELECT string_agg(xmin::text || ctid::text, ',' ORDER BY ctid) FROM \"{table}\""
                ).fetchone(),
            )
            for table in tables
        ]


def execute(box: recallbox.Box, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """Run ``sql`` (``?`` placeholders) on the box's database and return its rows: on the
    calling thread's SQLite connection, or on a PostgreSQL connection of its own (committed)."""
    location = box.location
    if not is_postgres(location):
        conn = box.store.pool.connection()  # type: ignore[attr-defined]
        return [tuple(r) for r in conn.execute(sql, tuple(params)).fetchall()]
    with psycopg.connect(location, autocommit=True) as pg:
        cursor = pg.execute(sql.replace("?", "%s"), tuple(params))
        return [tuple(r) for r in cursor.fetchall()] if cursor.description else []


def home_for(location: Path | str) -> Path:
    """A recallbox home next to the database: a SQLite file's folder, else this test's
    ``RECALLBOX_HOME`` (``tests/conftest.py``'s ``tmp_home``)."""
    if is_postgres(location):
        return Path(os.environ["RECALLBOX_HOME"])
    return Path(location).parent
