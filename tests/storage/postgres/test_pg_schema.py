"""The PostgreSQL schema follows SQLite's migrations number for number (issue #16, DESIGN §8).

A new SQLite migration fails the first test until the PostgreSQL backend records it too (with
its statements, or as a no-op when it means nothing here), so the newer-schema refusal and
``recallbox migrate`` stay shared. Opening a new database from several processes at once
migrates it once.
"""

from __future__ import annotations

import subprocess
import sys

import psycopg

from recallbox.storage.postgres.schema import LATEST_VERSION, MIGRATIONS
from recallbox.storage.postgres.store import PostgresStore
from recallbox.storage.sqlite import schema as sqlite_schema

OPEN = """
import sys
from recallbox.storage.postgres.store import PostgresStore
sys.stdin.readline()
PostgresStore(sys.argv[1]).close()
"""


def test_the_migrations_are_sqlites_number_for_number_and_name_for_name() -> None:
    ours = [(version, name) for version, name, _ in MIGRATIONS]
    theirs = [(version, name) for version, name, _ in sqlite_schema.MIGRATIONS]
    assert ours == theirs
    assert LATEST_VERSION == sqlite_schema.LATEST_VERSION


def test_a_new_database_gets_every_migration_and_the_extensions(postgres_url: str) -> None:
    store = PostgresStore(postgres_url)
    try:
        assert store.schema_version() == LATEST_VERSION
        store.migrate()  # idempotent
    finally:
        store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        versions = [int(r[0]) for r in conn.execute("SELECT version FROM schema_migrations")]
        extensions = {str(r[0]) for r in conn.execute("SELECT extname FROM pg_extension")}
    assert sorted(versions) == [v for v, _, _ in MIGRATIONS]
    assert {"pg_trgm", "vector"} <= extensions


def test_processes_opening_a_new_database_at_once_migrate_it_once(postgres_url: str) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", OPEN, postgres_url],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=120) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        rows = conn.execute("SELECT version, count(*) FROM schema_migrations GROUP BY version")
        assert {int(v): int(n) for v, n in rows} == {v: 1 for v, _, _ in MIGRATIONS}
