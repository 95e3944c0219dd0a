"""#16 item 6: bad PostgreSQL input is one line naming the fix, never a traceback.

An unreachable server, refused credentials, a missing database, an extension the server cannot
create and a schema written by a newer recallbox: through the real CLI each gives one
``Error: …`` line with the fix, exit code 1 (DESIGN §8), and under ``--json`` the error object;
the Python API raises the same error. A URL's password never appears in an error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

import recallbox
from postgres_server import PostgresTestServer
from recallbox.storage.postgres import schema

TRACEBACK = "Traceback (most recent call last)"
LOCKED_ROLE = "rb_locked"
RIGHT_PASSWORD = "right-horse-battery"
WRONG_PASSWORD = "s3cret-wrong-pass"


def one_error_line(result: Any) -> str:
    assert TRACEBACK not in result.out + result.err
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.err
    return lines[0].removeprefix("Error: ")


def assert_one_line(run: Any, url: str, fix: str, *args: str) -> None:
    for command in (args or ("search-memory", "deploy"),):
        result = run("--db", url, *command)
        assert result.code == 1, result
        line = one_error_line(result)
        assert fix in line and WRONG_PASSWORD not in line, line
        as_json = run("--db", url, *command, "--json")
        document = as_json.json()
        assert as_json.code == 1 and document == {"error": line, "code": 1}


@pytest.fixture
def locked_url(postgres_server: PostgresTestServer) -> Iterator[str]:
    """A URL whose role must log in with a password, given the wrong one."""
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        hba = str(conn.execute("SHOW hba_file").fetchone()[0])  # type: ignore[index]
        conn.execute(f"DROP ROLE IF EXISTS {LOCKED_ROLE}")
        conn.execute(f"CREATE ROLE {LOCKED_ROLE} LOGIN PASSWORD '{RIGHT_PASSWORD}'")
        with open(hba, encoding="utf-8") as f:
            original = f.read()
        with open(hba, "w", encoding="utf-8") as f:
            f.write(f"local all {LOCKED_ROLE} scram-sha-256\n" + original)
        conn.execute("SELECT pg_reload_conf()")
    host = postgres_server.url("postgres").split("host=", 1)[1]
    try:
        yield f"postgresql://{LOCKED_ROLE}:{WRONG_PASSWORD}@/postgres?host={host}"
    finally:
        with open(hba, "w", encoding="utf-8") as f:
            f.write(original)
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
            conn.execute("SELECT pg_reload_conf()")
            conn.execute(f"DROP ROLE IF EXISTS {LOCKED_ROLE}")


def test_an_unreachable_server_names_the_host_and_what_to_check(run: Any, tmp_path: Any) -> None:
    for url in (
        f"postgresql://me:{WRONG_PASSWORD}@127.0.0.1:9/recall",  # nothing listens on port 9
        f"postgresql://me@/recall?host={tmp_path}",  # no server socket in that folder
    ):
        assert_one_line(run, url, "check that it is running")
        with pytest.raises(recallbox.StoreUnavailable, match="cannot reach the PostgreSQL server"):
            recallbox.open(url)


def test_wrong_credentials_name_the_user_and_where_the_password_comes_from(
    run: Any, locked_url: str
) -> None:
    assert_one_line(run, locked_url, "check the user and password in the URL")
    with pytest.raises(recallbox.StoreUnavailable, match=f'user "{LOCKED_ROLE}"'):
        recallbox.open(locked_url)


def test_a_missing_database_says_how_to_create_it(
    run: Any, postgres_server: PostgresTestServer
) -> None:
    url = postgres_server.url("rb_no_such_database")
    assert_one_line(run, url, "createdb rb_no_such_database")


def test_an_extension_the_server_cannot_create_names_the_fix(
    run: Any, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server without the extension (here: a name no server has)."""
    monkeypatch.setattr(schema, "EXTENSIONS", ("pg_trgm", "vector_missing_here"))
    monkeypatch.setattr("recallbox.storage.postgres.migrations.EXTENSIONS", schema.EXTENSIONS)
    assert_one_line(run, postgres_url, "CREATE EXTENSION IF NOT EXISTS vector_missing_here", "init")
    with pytest.raises(recallbox.StoreUnavailable, match="install it on the server"):
        recallbox.open(postgres_url)


def test_a_user_who_may_not_create_the_extension_is_told_who_can(
    run: Any, postgres_server: PostgresTestServer, postgres_url: str
) -> None:
    """pgvector is not a trusted extension: an ordinary owner of the database cannot create
    it; a superuser (or the managed service's console) must."""
    database = conninfo_to_dict(postgres_url)["dbname"]
    with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS rb_owner")
        conn.execute("CREATE ROLE rb_owner LOGIN")
        conn.execute(f'ALTER DATABASE "{database}" OWNER TO rb_owner')
    try:
        url = postgres_url.replace("postgres:@", "rb_owner:@")
        assert_one_line(run, url, "CREATE EXTENSION IF NOT EXISTS vector", "init")
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION vector")  # what the message says a superuser does
        with recallbox.open(url) as box:  # then the owner opens it
            assert box.append("ops", "user", "works now").content == "works now"
    finally:
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{database}" OWNER TO postgres')
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'rb_owner'"
            )
            with psycopg.connect(postgres_url, autocommit=True) as inside:
                inside.execute("REASSIGN OWNED BY rb_owner TO postgres")
                inside.execute("DROP OWNED BY rb_owner")
            conn.execute("DROP ROLE rb_owner")


def test_a_newer_schema_is_refused_with_the_upgrade_command(run: Any, postgres_url: str) -> None:
    recallbox.open(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations (version, name) VALUES (10000, 'future')")
    assert_one_line(run, postgres_url, "pip install -U recallbox")
    with pytest.raises(recallbox.SchemaMismatch, match="schema version 10000"):
        recallbox.open(postgres_url)


def test_a_password_in_the_url_never_reaches_an_error_line(run: Any) -> None:
    result = run("--db", f"postgresql://me:{WRONG_PASSWORD}@127.0.0.1:9/recall", "thread", "list")
    assert WRONG_PASSWORD not in result.out + result.err and "me@127.0.0.1:9/recall" in result.err
