"""The bundled PostgreSQL server of the test session and its per-test databases (issue #16)."""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from postgres_server import REQUIRED_EXTENSIONS, PostgresTestServer

EXTENSIONS = tuple(REQUIRED_EXTENSIONS)


def test_server_offers_the_extensions_recallbox_needs(
    postgres_server: PostgresTestServer,
) -> None:
    assert postgres_server.versions["postgresql"].split(".")[0] == "18"
    assert postgres_server.versions["vector"].startswith("0.8.")
    assert postgres_server.start_seconds > 0


def test_each_test_gets_a_fresh_empty_utf8_database(
    postgres_conn: psycopg.Connection[Any],
) -> None:
    row = postgres_conn.execute(
        "SELECT pg_encoding_to_char(encoding), datlocprovider, datlocale FROM pg_database "
        "WHERE datname = current_database()"
    ).fetchone()
    assert row == ("UTF8", "b", "C.UTF-8")
    assert postgres_conn.execute("SELECT extname FROM pg_extension").fetchall() == [("plpgsql",)]
    tables = postgres_conn.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
    ).fetchone()
    assert tables == (0,)


def test_the_extensions_install_and_work(postgres_conn: psycopg.Connection[Any]) -> None:
    for name in EXTENSIONS:
        postgres_conn.execute(f"CREATE EXTENSION {name}")
    installed = dict(postgres_conn.execute("SELECT extname, extversion FROM pg_extension"))
    assert set(EXTENSIONS) <= set(installed)
    assert installed["vector"].startswith("0.8.")
    row = postgres_conn.execute(
        "SELECT similarity('pg-replica-1', 'pg-replica-2') > 0.5, "
        "'[1,0]'::vector <=> '[0,1]'::vector, "
        "'召回率' ILIKE '%回率%', lower('ÄRGER')"
    ).fetchone()
    assert row == (True, 1.0, True, "ärger")


def test_databases_are_separate(postgres_server: PostgresTestServer) -> None:
    first, second = postgres_server.create_database(), postgres_server.create_database()
    try:
        with psycopg.connect(postgres_server.url(first), autocommit=True) as conn:
            conn.execute("CREATE TABLE only_here (x int)")
        with psycopg.connect(postgres_server.url(second), autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('only_here')").fetchone() == (None,)
    finally:
        postgres_server.drop_database(first)
        postgres_server.drop_database(second)
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname = ANY(%s)", ([first, second],)
        ).fetchone()
    assert left == (0,)


def test_a_connection_pool_works_against_the_server(postgres_url: str) -> None:
    with ConnectionPool(postgres_url, min_size=1, max_size=2, open=True) as pool:
        with pool.connection() as conn:
            conn.execute("CREATE TABLE t (x int)")
            conn.execute("INSERT INTO t VALUES (1), (2)")
        with pool.connection() as conn:
            assert conn.execute("SELECT sum(x) FROM t").fetchone() == (3,)
