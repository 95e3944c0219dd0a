"""The pgvector leg (issue #16): the channel filter is inside the search, never applied to the
k nearest afterwards; the HNSW index is built once a space is big, and then used with iterative
scans that apply the visibility rule as they go.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest

from postgres_server import RecallboxDatabases
from recallbox.storage.base import CORPUS_MESSAGE, SearchFilter
from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.store import PostgresStore
from recallbox.storage.values import EmbeddingSpace

DIM = 8
MODEL = "test-8"
#: Messages in the crowded thread, all nearer the query than any message of the quiet one.
CROWD = 300


def direction(angle: float) -> list[float]:
    """A unit vector at ``angle`` radians in the first plane (the rest zero)."""
    return [math.cos(angle), math.sin(angle), *([0.0] * (DIM - 2))]


@pytest.fixture
def store(recallbox_databases: RecallboxDatabases) -> Iterator[PostgresStore]:
    opened = PostgresStore(recallbox_databases.url())
    try:
        yield opened
    finally:
        opened.close()


def embed(store: PostgresStore, vector_of: dict[str, list[float]]) -> EmbeddingSpace:
    space = store.ensure_embedding_space(CORPUS_MESSAGE, MODEL, DIM)
    while targets := store.embed_targets(space, after=0, limit=1000):
        store.put_embeddings(space, [(t, vector_of[t.text]) for t in targets])
    return next(s for s in store.embedding_spaces(CORPUS_MESSAGE) if s.id == space.id)


def crowded(store: PostgresStore) -> tuple[EmbeddingSpace, list[str]]:
    """A crowd of messages near the query in one thread, a few farther ones in another."""
    from recallbox.domains.messages import build_row

    vector_of = {}
    crowd = [f"crowd {i}" for i in range(CROWD)]
    quiet = [f"quiet {i}" for i in range(5)]
    for i, text in enumerate(crowd):
        vector_of[text] = direction(0.001 * i)
    for i, text in enumerate(quiet):
        vector_of[text] = direction(1.0 + 0.1 * i)
    store.append("crowd", [build_row("user", t) for t in crowd])
    quiet_ids = [m.id for m in store.append("quiet", [build_row("user", t) for t in quiet])]
    return embed(store, vector_of), quiet_ids


def test_a_channel_search_finds_its_threads_vectors_behind_any_crowd(
    store: PostgresStore,
) -> None:
    """k-nearest-then-filter would return nothing here: the 300 nearest are all elsewhere."""
    space, quiet = crowded(store)
    found = store.nearest(direction(0.0), space=space, where=SearchFilter(channel="quiet"), limit=3)
    assert [rid for rid, _ in found] == quiet[:3]
    assert all(0.0 <= d <= 2.0 for _, d in found)
    assert found == sorted(found, key=lambda p: (p[1], p[0]))


def test_past_the_threshold_the_space_gets_an_hnsw_index_and_uses_it(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "HNSW_MIN_VECTORS", 100)
    space, quiet = crowded(store)
    with store.pool.reading() as conn:
        assert vectors.has_hnsw(conn, space.id)
    near = store.nearest(direction(0.0), space=space, where=SearchFilter(), limit=5)
    assert [rid for rid, _ in near] == [
        rid for rid, _ in store.nearest(direction(0.0), space=space, where=SearchFilter(), limit=5)
    ]
    assert len(near) == 5 and near == sorted(near, key=lambda p: (p[1], p[0]))
    # the quarantine is a condition of the scan: the crowd never takes the quiet rows' place
    store.set_quarantined("crowd", True)
    hidden = store.nearest(direction(0.0), space=space, where=SearchFilter(), limit=3)
    assert [rid for rid, _ in hidden] == quiet[:3]
    # and a channel search stays an exact scan of the thread, whatever the index
    found = store.nearest(direction(0.0), space=space, where=SearchFilter(channel="quiet"), limit=2)
    assert [rid for rid, _ in found] == quiet[:2]


def test_a_channel_search_never_plans_the_hnsw_index(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch, postgres_server: object
) -> None:
    monkeypatch.setattr(vectors, "HNSW_MIN_VECTORS", 100)
    space, _ = crowded(store)
    plans: list[str] = []
    real = psycopg.Connection.execute

    def spy(self: psycopg.Connection, query: object, params: object = None, **kw: object) -> object:
        if isinstance(query, str) and "<=>" in query and "EXPLAIN" not in query:
            explained = real(self, "EXPLAIN " + query, params)  # type: ignore[arg-type]
            plans.append("\n".join(str(r[0]) for r in explained.fetchall()))
        return real(self, query, params, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(psycopg.Connection, "execute", spy)
    store.nearest(direction(0.0), space=space, where=SearchFilter(channel="quiet"), limit=2)
    store.nearest(direction(0.0), space=space, where=SearchFilter(), limit=2)
    assert len(plans) == 2
    assert vectors.hnsw_name(space.id) not in plans[0]
    assert vectors.hnsw_name(space.id) in plans[1]


def test_an_hnsw_search_checks_each_row_as_the_index_yields_it_then_resets_the_plan(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule and the freshness check are joined row by row through the primary keys
    (nested loops): a hash or a materialised copy of the visible rows, read again for every
    index row, cost 5.8 s instead of 0.2 s at 100 000 messages. The snapshot reads on with
    the default plans (a search's other legs share it)."""
    monkeypatch.setattr(vectors, "HNSW_MIN_VECTORS", 100)
    space, _ = crowded(store)
    plans: list[str] = []
    real = psycopg.Connection.execute

    def spy(self: psycopg.Connection, query: object, params: object = None, **kw: object) -> object:
        if isinstance(query, str) and "<=>" in query and "EXPLAIN" not in query:
            explained = real(self, "EXPLAIN " + query, params)  # type: ignore[arg-type]
            plans.append("\n".join(str(r[0]) for r in explained.fetchall()))
        return real(self, query, params, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(psycopg.Connection, "execute", spy)
    with store.read_snapshot():
        assert len(store.nearest(direction(0.0), space=space, where=SearchFilter(), limit=5)) == 5
        with store.pool.snapshot() as conn:
            after = [
                str(conn.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
                for name in ("enable_seqscan", "enable_hashjoin", "enable_material")
            ]
    [plan] = plans
    assert vectors.hnsw_name(space.id) in plan
    assert "Hash" not in plan and "Materialize" not in plan, plan
    assert after == ["on", "on", "on"]


def test_a_batch_of_vectors_is_written_in_a_few_statements(store: PostgresStore) -> None:
    from recallbox.domains.messages import build_row

    store.append("t", [build_row("user", f"row {i}") for i in range(50)])
    space = store.ensure_embedding_space(CORPUS_MESSAGE, MODEL, DIM)
    targets = store.embed_targets(space, after=0, limit=100)
    with store.pool.reading() as conn:
        before = conn.execute(f"SELECT count(*) FROM {vectors.table_name(space.id)}").fetchone()
    assert before == (0,)
    assert store.put_embeddings(space, [(t, direction(0.01 * t.key)) for t in targets]) == 50
    assert store.count_embed_targets(space) == 0


def test_a_vector_written_while_its_chunk_is_deleted_never_outlives_it(
    store: PostgresStore,
) -> None:
    """``embed`` writing a chunk's vector while a re-chunk deletes that chunk (another
    transaction): the deleter waits for the writer's row locks, then deletes the vector too —
    never a vector of a row that is gone (the concurrency suite found one without the locks)."""
    from recallbox.domains.chunking import rechunk
    from recallbox.domains.messages import build_row
    from recallbox.storage.base import CORPUS_TRANSCRIPT_CHUNK

    store.append("ops", [build_row("user", f"deploy step {i}") for i in range(20)])
    assert rechunk(store, "ops", 1) > 0
    space = store.ensure_embedding_space(CORPUS_TRANSCRIPT_CHUNK, MODEL, DIM)
    targets = store.embed_targets(space, after=0, limit=100)
    deleted = threading.Event()

    def delete_the_chunks() -> None:
        store.replace_transcript_chunks("ops", 1, [])
        deleted.set()

    deleter = threading.Thread(target=delete_the_chunks)
    with psycopg.connect(store.pool.url) as writer:
        with writer.transaction():
            written = vectors.put_embeddings(
                writer,
                space,
                [(t, direction(0.1)) for t in targets],
                owner_table="transcript_chunks",
                partition_column="thread_id",
            )
            assert written == len(targets) > 0
            deleter.start()
            waiting = _wait_for_a_lock_wait(store, deleted)
        deleter.join(60)
    assert deleted.is_set() and waiting
    with store.pool.reading() as conn:
        orphans = conn.execute(
            f"SELECT count(*) FROM {vectors.table_name(space.id)} v WHERE NOT EXISTS "
            "(SELECT 1 FROM transcript_chunks c WHERE c.id = v.target_id)"
        ).fetchone()
        booked = conn.execute(
            "SELECT count(*) FROM embeddings WHERE space_id = %s", (space.id,)
        ).fetchone()
    assert (orphans, booked) == ((0,), (0,))


LOCK_WAIT_TIMEOUT_S = 60


def _wait_for_a_lock_wait(store: PostgresStore, finished: threading.Event) -> bool:
    """Whether a session of the store's database waits for a lock before ``finished``."""
    deadline = time.monotonic() + LOCK_WAIT_TIMEOUT_S
    with psycopg.connect(store.pool.url, autocommit=True) as watcher:
        while time.monotonic() < deadline and not finished.is_set():
            row = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock'"
            ).fetchone()
            if row and row[0]:
                return True
            time.sleep(0.02)
    return False
