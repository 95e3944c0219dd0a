"""``doctor`` on PostgreSQL (issue #16, DESIGN §4.1): each fault is found and repaired without
losing a base row — statistics out of step with the rows, a dropped statistics trigger, a
dropped GIN or trigram index, a keyword document edited behind the store's back, a dropped
vector table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import psycopg
import pytest

import recallbox
from postgres_server import RecallboxDatabases

Fault = Callable[[psycopg.Connection], None]
FAULTS: dict[str, tuple[Fault, str]] = {
    "a term statistic lost": (
        lambda c: c.execute(
            "DELETE FROM messages_fts_terms WHERE ctid = (SELECT min(ctid) FROM messages_fts_terms)"
        ),
        "messages_fts",
    ),
    "a scope count off by one": (
        lambda c: c.execute("UPDATE messages_fts_scopes SET n_docs = n_docs + 1"),
        "messages_fts",
    ),
    "a statistics trigger dropped": (
        lambda c: c.execute("DROP TRIGGER messages_fts_stats_insert ON messages"),
        "messages_fts",
    ),
    "the GIN index dropped": (lambda c: c.execute("DROP INDEX messages_fts"), "messages_fts"),
    "a keyword document emptied behind the store": (
        lambda c: c.execute(
            "UPDATE messages SET fts = ''::tsvector WHERE content LIKE 'deploy staging%'"
        ),
        "messages_fts",
    ),
    "the trigram index dropped": (
        lambda c: c.execute("DROP INDEX messages_literal_content"),
        "messages_literal_content",
    ),
    "the vector table dropped": (
        lambda c: c.execute("DROP TABLE vec_space_1"),
        "vec_space_1",
    ),
}


@pytest.fixture
def url(recallbox_databases: RecallboxDatabases) -> Iterator[str]:
    yield recallbox_databases.url()


def seed(url: str) -> list[str]:
    with recallbox.open(url, embedder="hash") as box:
        ids = [box.append(f"t{i % 3}", "user", f"deploy staging item{i}").id for i in range(40)]
        box.remember("deploy with the blue-green switch")
        box.add_document("# Deploys\nRoll forward, never back.\n", "deploys.md")
        assert box.embed_all() > 0
    return ids


@pytest.mark.parametrize("fault", list(FAULTS))
def test_each_fault_is_found_and_repaired_without_losing_a_row(url: str, fault: str) -> None:
    ids = seed(url)
    with recallbox.open(url) as box:
        assert box.doctor().healthy
    damage, table = FAULTS[fault]
    with psycopg.connect(url, autocommit=True) as conn:
        damage(conn)
    with recallbox.open(url) as box:
        report = box.doctor()
        assert not report.healthy
        assert [i.table for i in report.indexes if not i.healthy] == [table]
        repaired = box.doctor(repair=True)
        assert repaired.healthy, [i for i in repaired.indexes if not i.healthy]
        assert sorted(m.id for t in ("t0", "t1", "t2") for m in box.messages(t)) == sorted(ids)
        assert "item7" in box.search_memory("item7")
        assert box.search("deploy staging", allow_embed=False)
