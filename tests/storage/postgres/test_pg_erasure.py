"""Physical erasure on PostgreSQL (#16 item 3, DESIGN §7a): ``purge --vacuum-full``.

A purge removes the rows for every reader at once; their old bytes stay in the table files as
dead tuples (and in the GIN indexes) until the tables are rewritten. A byte scan of the
database's own files on the server (``base/<database oid>/``, after a ``CHECKPOINT`` flushes
the buffers) finds the canary after a plain purge, and nowhere after ``--vacuum-full``, while
every bystander row is intact. The server's WAL and its archives are outside recallbox
(documented), so they are not scanned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest
from click.testing import CliRunner
from psycopg.conninfo import conninfo_to_dict

import recallbox
from postgres_server import PostgresTestServer, RecallboxDatabases
from recallbox.cli import cli

CANARY = "canary-9f3e7c-zebra-quartz"


def database_files(server: PostgresTestServer, url: str) -> list[Path]:
    with psycopg.connect(server.admin_url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")  # every dirty buffer reaches its file
        root = Path(str(conn.execute("SHOW data_directory").fetchone()[0]))  # type: ignore[index]
        name = conninfo_to_dict(url)["dbname"]
        oid = conn.execute("SELECT oid FROM pg_database WHERE datname = %s", (name,)).fetchone()
    assert oid is not None
    return [p for p in (root / "base" / str(oid[0])).iterdir() if p.is_file()]


def traces(server: PostgresTestServer, url: str) -> list[str]:
    needle = CANARY.encode()
    return [p.name for p in database_files(server, url) if needle in p.read_bytes()]


def seed(url: str) -> dict[str, Any]:
    with recallbox.open(url, embedder="hash") as box:
        for i in range(30):
            box.append("bystanders", "user", f"an ordinary note number {i} about deploys")
        secret = box.append("leaky", "user", f"the key is {CANARY}, keep it")
        box.append("leaky", "assistant", f"noted {CANARY}")
        box.remember(f"never paste {CANARY} anywhere")
        box.embed_all()
        assert CANARY in box.search_memory(CANARY)  # the query is in the hit-log too
        return {"secret": secret.id, "memory": box.memories()[0].key}


def without_autovacuum(url: str) -> None:
    """Keep autovacuum off this database's tables: what a plain purge leaves on disk must not
    depend on whether the server's autovacuum got to the dead tuples first."""
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT c.oid::regclass::text, c.reltoastrelid <> 0 FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind = 'r' AND n.nspname = current_schema()"
        ).fetchall()
        for name, toasted in tables:
            toast = ", toast.autovacuum_enabled = false" if toasted else ""
            conn.execute(f"ALTER TABLE {name} SET (autovacuum_enabled = false{toast})")


def purge(url: str, *args: str) -> Any:
    result = CliRunner().invoke(
        cli, ["--db", url, "purge", "--channel", "leaky", "--yes", *args], obj={}
    )
    assert result.exit_code == 0, result.output
    return result


def test_a_plain_purge_leaves_bytes_vacuum_full_erases_them(
    postgres_server: PostgresTestServer, recallbox_databases: RecallboxDatabases
) -> None:
    url = recallbox_databases.url()
    seeded = seed(url)
    without_autovacuum(url)
    assert traces(postgres_server, url)  # the scan sees what is stored
    plain = purge(url)
    assert "--vacuum-full" in plain.stderr + plain.stdout  # the report says what is left
    with recallbox.open(url) as box:
        with pytest.raises(recallbox.NotFound):
            box.message(seeded["secret"])
        assert box.search_memory(CANARY).endswith(f'No matches for "{CANARY}" in all threads.')
        assert box.purge(key=seeded["memory"]).physical is False
    assert traces(postgres_server, url)  # dead tuples: still on disk
    full = CliRunner().invoke(
        cli, ["--db", url, "purge", "--handle", "none-such", "--yes", "--vacuum-full"], obj={}
    )
    assert full.exit_code == 0 and "tables rewritten (VACUUM FULL)" in full.stdout, full.output
    assert traces(postgres_server, url) == []
    with recallbox.open(url) as box:
        assert len(box.messages("bystanders")) == 30
        assert "note number 7" in box.search_memory("note number 7")
        assert box.doctor().healthy
