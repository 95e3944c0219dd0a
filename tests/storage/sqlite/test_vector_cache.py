"""The in-memory copy of a space's vectors (``vector_cache.py``, #12): the same answers as the
exact search in sqlite-vec, the privacy gate in front, and a copy never outliving a write; and
the window copy of a big space's newest threads (``vector_window.py``, #14): the same answers
as sqlite-vec's KNN over those threads, rebuilt after a vector write, and a change of window
reads only the threads it did not hold."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.storage.base import CORPUS_MEMORY_ENTRY, CORPUS_MESSAGE, SearchFilter
from recallbox.storage.deadline import Deadline
from recallbox.storage.sqlite import connection, vec0_read, vector_cache, vector_window, vectors
from recallbox.storage.sqlite.store import SQLiteStore
from recallbox.storage.sqlite.vector_cache import VectorCache

DIM = 8
THREADS = ("t0", "t1", "t2", "t3")
EXAMPLES = 25
#: A read deadline long enough to enter the snapshot on a loaded machine.
DEADLINE_S = 2.0


class TableEmbedder:
    """``"v<i> …"`` embeds as ``vectors[i]`` (a query text too)."""

    model_id = "table-8"
    dim = DIM

    def __init__(self, vectors: Sequence[Sequence[float]]) -> None:
        self.vectors = [list(v) for v in vectors]

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        return [self.vectors[int(t.split()[0][1:])] for t in texts]


def _vector() -> st.SearchStrategy[list[float]]:
    return st.lists(st.integers(-4, 4).map(float), min_size=DIM, max_size=DIM).filter(
        lambda v: any(v)
    )


def _exact(store: SQLiteStore) -> SQLiteStore:
    """The same store with the copies off: every search runs in sqlite-vec."""
    store.vector_copies = VectorCache(enabled=False)
    return store


def _same_up_to_boundary_ties(new: list[tuple[str, float]], old: list[tuple[str, float]]) -> None:
    """Equal distances in order, and equal ids except among the rows tied at the cut (which
    sqlite-vec orders arbitrarily: the copy orders them by row id)."""
    assert [d for _, d in new] == [d for _, d in old]
    if new:
        last = new[-1][1]
        assert {p for p in new if p[1] != last} == {p for p in old if p[1] != last}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    vectors=st.lists(_vector(), min_size=2, max_size=40),
    duplicates=st.lists(st.integers(0, 39), max_size=10),
    placement=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=60, max_size=60),
    quarantined=st.sets(st.sampled_from(THREADS), max_size=2),
    queries=st.lists(_vector(), min_size=1, max_size=3),
    limit=st.integers(1, 30),
)
def test_the_copy_answers_exactly_as_sqlite_vec(
    vectors: list[list[float]],
    duplicates: list[int],
    placement: list[tuple[int, bool]],
    quarantined: set[str],
    queries: list[list[float]],
    limit: int,
) -> None:
    rows = vectors + [vectors[i % len(vectors)] for i in duplicates]  # ties on purpose
    table = TableEmbedder([*rows, *queries])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "v.db"
        with recallbox.open(path, embedder=table) as box:
            for channel in THREADS:
                box.create_thread(channel)
            for i in range(len(rows)):
                thread, pending = placement[i]
                box.append(THREADS[thread], "user", f"v{i} row", pending=pending)
                box.remember(f"v{i} memory {i}", type="guideline")
            box.embed_all()
            for channel in quarantined:
                box.quarantine(channel)
            store: SQLiteStore = box.store  # type: ignore[assignment]
            spaces = [store.embedding_spaces(o)[0] for o in (CORPUS_MESSAGE, CORPUS_MEMORY_ENTRY)]
            wheres = [SearchFilter(), *(SearchFilter(channel=t) for t in THREADS)]
            answers = []
            for n, _ in enumerate(queries):
                q = table.vectors[len(rows) + n]
                for space in spaces:
                    for where in wheres if space.owner == CORPUS_MESSAGE else wheres[:1]:
                        got = store.nearest(q, space=space, where=where, limit=limit)
                        ids = [i for i, _ in got] + ["nope", *(i for i, _ in got)]
                        measured = store.distances(q, ids, space=space, where=where)
                        answers.append((q, space, where, got, measured))
            hidden = {m.id for t in quarantined for m in box.messages(t)}
            hidden |= {m.id for t in THREADS for m in box.messages(t) if m.pending}
            exact = _exact(store)
            for q, space, where, got, measured in answers:
                old = exact.nearest(q, space=space, where=where, limit=limit)
                _same_up_to_boundary_ties(got, old)
                assert measured == exact.distances(q, list(measured), space=space, where=where)
                assert not hidden & {i for i, _ in got}
                assert not hidden & set(measured)


def test_a_write_by_another_store_is_seen_by_the_next_search(db_path: Path) -> None:
    table = TableEmbedder([[1.0, 0, 0, 0, 0, 0, 0, 0]])
    with recallbox.open(db_path, embedder=table) as box:
        near = box.append("ops", "user", "v0 near")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        query = table.vectors[0]
        assert store.nearest(query, space=space, where=SearchFilter(), limit=5) == [(near.id, 0.0)]
        assert space.id in store.vector_copies
        with recallbox.open(db_path, embedder=table) as other:  # its own connections
            twin = other.append("dev", "user", "v0 twin")
            assert other.embed_all() == 1
        got = store.nearest(query, space=space, where=SearchFilter(), limit=5)
        assert sorted(got) == sorted([(near.id, 0.0), (twin.id, 0.0)])
        assert store.distances(query, [twin.id], space=space, where=SearchFilter()) == {
            twin.id: 0.0
        }


def test_a_quarantine_after_the_copy_was_made_hides_the_row(db_path: Path) -> None:
    table = TableEmbedder([[1.0, 0, 0, 0, 0, 0, 0, 0]])
    with recallbox.open(db_path, embedder=table) as box:
        secret = box.append("secret", "user", "v0 secret")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        q = table.vectors[0]
        assert [i for i, _ in store.nearest(q, space=space, where=SearchFilter(), limit=3)] == [
            secret.id
        ]
        box.quarantine("secret")  # no vector is written: the copy stays current, the gate decides
        assert store.nearest(q, space=space, where=SearchFilter(), limit=3) == []
        assert store.distances(q, [secret.id], space=space, where=SearchFilter()) == {}


def test_a_space_too_big_to_copy_is_searched_in_sqlite_vec(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_cache, "CACHE_MAX_VECTORS", 2)
    table = TableEmbedder([[1.0, float(i), 0, 0, 0, 0, 0, 0] for i in range(5)])
    with recallbox.open(db_path, embedder=table) as box:
        ids = [box.append("ops", "user", f"v{i} row").id for i in range(5)]
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        got = store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=5)
        assert [i for i, _ in got] == ids
        assert space.id not in store.vector_copies


def test_a_copy_read_for_a_late_search_is_finished_and_kept(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read deadline never stops the reading of a copy (it would be lost, and read again
    by every late search): the late search is stopped by its next statement, the copy is
    finished and kept, and the next search uses it."""
    table = TableEmbedder([[1.0, 0, 0, 0, 0, 0, 0, 0]])
    real = vector_cache.load  # the real reading, after the wait
    deadlines: list[Deadline] = []

    def late_load(*args: Any, **kwargs: Any) -> vector_cache.SpaceCopy:
        while not deadlines[0].expired:  # the search runs late while the copy is read
            time.sleep(0.01)
        return real(*args, **kwargs)

    with recallbox.open(db_path, embedder=table) as box:
        (near,) = box.append_many("ops", [{"role": "user", "content": "v0 near"}])
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        monkeypatch.setattr(vector_cache, "load", late_load)
        monkeypatch.setattr(connection, "DEADLINE_CHECK_STEPS", 1)  # any statement is stoppable
        deadlines.append(Deadline(DEADLINE_S))
        store.vector_copies.clear()
        with pytest.raises(recallbox.TimedOut), store.read_snapshot(deadline=deadlines[0]):
            store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=3)
        assert deadlines[0].expired and space.id in store.vector_copies  # stopped after it
        monkeypatch.setattr(vector_cache, "load", lambda *a, **k: pytest.fail("read again"))
        got = store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=3)
        assert got == [(near.id, 0.0)]


def test_a_purge_makes_the_copy_read_again(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A purged vector does not outlive the purge in memory either."""
    table = TableEmbedder([[1.0, 0, 0, 0, 0, 0, 0, 0]])
    reads: list[int] = []
    real = vector_cache.load

    def counted(*args: Any, **kwargs: Any) -> vector_cache.SpaceCopy:
        copy = real(*args, **kwargs)
        reads.append(len(copy.rowids))
        return copy

    monkeypatch.setattr(vector_cache, "load", counted)
    with recallbox.open(db_path, embedder=table) as box:
        gone, kept = box.append_many(
            "ops", [{"role": "user", "content": "v0 gone"}, {"role": "user", "content": "v0 kept"}]
        )
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        q = table.vectors[0]
        assert {i for i, _ in store.nearest(q, space=space, where=SearchFilter(), limit=5)} == {
            gone.id,
            kept.id,
        }
        box.purge(gone.id)
        got = store.nearest(q, space=space, where=SearchFilter(), limit=5)
        assert got == [(kept.id, 0.0)] and reads == [2, 1]


# -- the window copy of a big space (vector_window.py, #14) -------------------------------


def _sqlite_vec(store: SQLiteStore) -> SQLiteStore:
    """The same store with every copy off: the window is searched by per-thread KNN."""
    store.vector_copies = VectorCache(enabled=False)
    return store


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    vectors_=st.lists(_vector(), min_size=2, max_size=30),
    duplicates=st.lists(st.integers(0, 29), max_size=8),
    placement=st.lists(st.tuples(st.integers(0, 3), st.booleans()), min_size=40, max_size=40),
    quarantined=st.sets(st.sampled_from(THREADS), max_size=1),
    queries=st.lists(_vector(), min_size=1, max_size=3),
    window=st.integers(1, 40),
    limit=st.integers(1, 20),
)
def test_the_window_copy_answers_exactly_as_sqlite_vec(
    vectors_: list[list[float]],
    duplicates: list[int],
    placement: list[tuple[int, bool]],
    quarantined: set[str],
    queries: list[list[float]],
    window: int,
    limit: int,
) -> None:
    rows = vectors_ + [vectors_[i % len(vectors_)] for i in duplicates]  # ties on purpose
    table = TableEmbedder([*rows, *queries])
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
        patch.setattr(vectors, "GLOBAL_SCAN_VECTORS", window)
        path = Path(tmp) / "v.db"
        with recallbox.open(path, embedder=table) as box:
            for channel in THREADS:
                box.create_thread(channel)
            for i in range(len(rows)):
                thread, pending = placement[i]
                box.append(THREADS[thread], "user", f"v{i} row", pending=pending)
            box.embed_all()
            for channel in quarantined:
                box.quarantine(channel)
            store: SQLiteStore = box.store  # type: ignore[assignment]
            space = store.embedding_spaces(CORPUS_MESSAGE)[0]
            every = ["nope", *(m.id for t in THREADS for m in box.messages(t))]
            answers = []
            for n, _ in enumerate(queries):
                q = table.vectors[len(rows) + n]
                got = store.nearest(q, space=space, where=SearchFilter(), limit=limit)
                # in the window from its copy, outside it by row id
                measured = store.distances(q, every, space=space, where=SearchFilter())
                answers.append((q, got, measured))
            assert space.id in store.vector_windows._windows
            exact = _sqlite_vec(store)
            for q, got, measured in answers:
                old = exact.nearest(q, space=space, where=SearchFilter(), limit=limit)
                _same_up_to_boundary_ties(got, old)
                assert measured == exact.distances(q, every, space=space, where=SearchFilter())


def _space_db(path: Path) -> tuple[TableEmbedder, list[str]]:
    table = TableEmbedder([[1.0, float(i), 0, 0, 0, 0, 0, 0] for i in range(6)])
    with recallbox.open(path, embedder=table) as box:
        ids = [box.append(THREADS[i % 3], "user", f"v{i} row").id for i in range(6)]
        box.embed_all()
    return table, ids


def test_a_vector_write_rebuilds_the_window(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
    table, ids = _space_db(db_path)
    with recallbox.open(db_path, embedder=table) as box:
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        first = store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=9)
        assert sorted(i for i, _ in first) == sorted(ids)
        with recallbox.open(db_path, embedder=table) as other:  # its own connections
            twin = other.append(THREADS[0], "user", "v0 twin")
            assert other.embed_all() == 1
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        again = store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=9)
        assert twin.id in {i for i, _ in again}


def test_a_new_thread_in_the_window_is_read_alone(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
    monkeypatch.setattr(vectors, "GLOBAL_SCAN_VECTORS", 4)  # the two newest threads
    table, _ = _space_db(db_path)
    read: list[int] = []
    real = vector_window._partition_rows

    def counted(conn: Any, space: Any, partition: int, *rest: Any) -> Any:
        read.append(partition)
        return real(conn, space, partition, *rest)

    monkeypatch.setattr(vector_window, "_partition_rows", counted)
    with recallbox.open(db_path, embedder=table) as box:
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=3)
        assert len(read) == 2
        box.append(THREADS[0], "user", "no vector: the oldest thread becomes the newest")
        got = store.nearest(table.vectors[0], space=space, where=SearchFilter(), limit=9)
        assert len(read) == 3  # only the thread that entered the window was read
        assert len(got) == 4 and len(store.vector_windows._windows[space.id][1].rowids) == 4


def _one_long_thread(path: Path, rows: int) -> TableEmbedder:
    """A short old thread, then one long thread of ``rows`` vectors (the newest)."""
    table = TableEmbedder([[1.0, float(i % 7), float(i % 5), 0, 0, 0, 0, 1.0] for i in range(rows)])
    with recallbox.open(path, embedder=table) as box:
        box.append("old", "user", "v0 old")
        box.append_many("long", [{"role": "user", "content": f"v{i} row"} for i in range(rows)])
        box.embed_all()
    return table


def test_a_thread_bigger_than_the_budget_is_not_copied(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window takes the newest threads until their messages reach the budget: the last
    # one can be of any size (one long-running thread of a million messages would be copied
    # whole, 1.5 GB of 384-d vectors). Past WINDOW_MAX_VECTORS no copy is kept, the search
    # stays in sqlite-vec, and the verdict is not read again until something changes.
    monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
    monkeypatch.setattr(vectors, "GLOBAL_SCAN_VECTORS", 5)
    monkeypatch.setattr(vector_window, "WINDOW_MAX_VECTORS", 10)
    table = _one_long_thread(db_path, 30)
    read: list[int] = []
    real = vector_window._partition_rows

    def counted(conn: Any, space: Any, partition: int, *rest: Any) -> Any:
        read.append(partition)
        return real(conn, space, partition, *rest)

    monkeypatch.setattr(vector_window, "_partition_rows", counted)
    with recallbox.open(db_path, embedder=table) as box:
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        q = table.vectors[3]
        got = [store.nearest(q, space=space, where=SearchFilter(), limit=4) for _ in range(2)]
        assert space.id not in store.vector_windows._windows and len(read) == 1
        assert store.distances(q, [i for i, _ in got[0]], space=space, where=SearchFilter())
        exact = _sqlite_vec(store).nearest(q, space=space, where=SearchFilter(), limit=4)
        _same_up_to_boundary_ties(got[0], exact)
        assert got[0] == got[1]
        # a vector write changes the space: the window is judged again
        box.append("long", "user", "v1 more")
        box.embed_all()
        store.vector_copies = VectorCache()
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        store.nearest(q, space=space, where=SearchFilter(), limit=4)
        assert len(read) == 2 and space.id not in store.vector_windows._windows


def test_the_window_reads_its_vectors_from_the_chunks(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each thread's vectors were read by a KNN of k = 4096 inside its partition (1.3 s of CPU
    # for a 100 000-vector thread), the rows past k by vec0 point queries (~50 µs each: 6.6 s
    # for that thread). They are read from the chunks by row id (0.45 s), with the same bytes.
    monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
    table = _one_long_thread(db_path, 30)
    asked: list[int] = []
    real = vec0_read.read_vectors

    def counted(conn: Any, space_id: int, dim: int, rowids: Sequence[int]) -> dict[int, bytes]:
        asked.append(len(rowids))
        return real(conn, space_id, dim, rowids)

    monkeypatch.setattr(vec0_read, "read_vectors", counted)
    with recallbox.open(db_path, embedder=table) as box:
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        q = table.vectors[3]
        got = store.nearest(q, space=space, where=SearchFilter(), limit=6)
        assert asked == [30, 1]  # the long thread (the newest), then the old one
        assert len(store.vector_windows._windows[space.id][1].rowids) == 31
        _same_up_to_boundary_ties(
            got, _sqlite_vec(store).nearest(q, space=space, where=SearchFilter(), limit=6)
        )


def test_rows_orthogonal_to_a_sparse_query_are_ranked_without_measuring_them(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A hashing embedder's sparse vectors tie by the thousand at distance exactly 1.0 (no
    # shared dimension): they are taken in row id order, visible ones only, and never measured.
    table = TableEmbedder([[0, 1.0, 0, 0, 0, 0, 0, 0], [1.0, 0, 0, 0, 0, 0, 0, 0]])
    with recallbox.open(db_path, embedder=table) as box:
        rows = [box.append("t", "user", "v0 row", pending=i % 3 == 0) for i in range(60)]
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]
        measured: list[int] = []
        real = vector_cache.exact_distances

        def counted(conn: Any, vector: Any, blobs: Sequence[bytes]) -> list[float]:
            measured.append(len(blobs))
            return real(conn, vector, blobs)

        monkeypatch.setattr(vector_cache, "exact_distances", counted)
        got = store.nearest(table.vectors[1], space=space, where=SearchFilter(), limit=5)
        shown = [m.id for m in rows if not m.pending]
        assert got == [(i, 1.0) for i in shown[:5]]
        assert sum(measured) == 0
        old = _exact(store).nearest(table.vectors[1], space=space, where=SearchFilter(), limit=5)
        _same_up_to_boundary_ties(got, old)
