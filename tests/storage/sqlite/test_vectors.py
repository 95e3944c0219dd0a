"""sqlite-vec vectors and the retrieval side of the SQLite store."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.ranking.bm25 import scope_scores
from recallbox.storage.base import CORPUS_MESSAGE, EmbeddingSpace, SearchFilter
from recallbox.storage.sqlite import keyword, vec0_read, vectors
from recallbox.storage.sqlite.match import render_match
from recallbox.storage.sqlite.store import SQLiteStore
from recallbox.storage.sqlite.vector_cache import VectorCache
from recallbox.text.cjk import segment
from recallbox.text.fts_query import build_fts_query


class AxisEmbedder:
    """Texts starting with ``x`` point along x, the others along y."""

    model_id = "axis-2"
    dim = 2

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        return [[1.0, 0.0] if t.startswith("x") else [0.0, 1.0] for t in texts]


def space_of(store: SQLiteStore) -> EmbeddingSpace:
    return store.embedding_spaces(CORPUS_MESSAGE)[0]


def test_channel_restriction_happens_inside_the_index(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append_many("a", [{"role": "user", "content": f"x a{i}"} for i in range(30)])
        (b,) = box.append_many("b", [{"role": "user", "content": "y far away"}])
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = space_of(store)
        got = store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="b"), limit=5)
        assert [(i, round(d, 6)) for i, d in got] == [(b.id, 1.0)]
        assert (
            len(store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="a"), limit=50))
            == 30
        )
        assert (
            store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="zzz"), limit=5) == []
        )


@pytest.mark.parametrize("max_k", [vectors.VEC_MAX_K, 4])
def test_excluded_rows_never_take_a_visible_rows_place(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, max_k: int
) -> None:
    monkeypatch.setattr(vectors, "VEC_MAX_K", max_k)
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append_many(
            "a", [{"role": "user", "content": f"x{i}", "pending": True} for i in range(40)]
        )
        far = box.append("a", "user", "y visible")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        for channel in (None, "a"):
            got = store.nearest(
                [1.0, 0.0], space=space_of(store), where=SearchFilter(channel=channel), limit=1
            )
            assert [i for i, _ in got] == [far.id]


def test_a_quarantined_thread_has_no_neighbours(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append("secret", "user", "x secret")
        visible = box.append("ops", "user", "y visible")
        box.embed_all()
        box.quarantine("secret")
        store: SQLiteStore = box.store  # type: ignore[assignment]
        got = store.nearest(
            [1.0, 0.0], space=space_of(store), where=SearchFilter(channel=None), limit=5
        )
        assert [i for i, _ in got] == [visible.id]
        assert store.distances(
            [1.0, 0.0], [visible.id], space=space_of(store), where=SearchFilter()
        )


def test_dropping_a_space_removes_its_vectors(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append("a", "user", "x one")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = space_of(store)
        assert store.drop_embedding_space(space) == 1
        assert store.embedding_spaces(CORPUS_MESSAGE) == []
        conn = store.pool.connection()
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        assert not any(n.startswith(vectors.VEC_TABLE_PREFIX) for n in names)


def test_a_missing_sqlite_vec_raises_dependency_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    conn = apsw.Connection(":memory:")
    with pytest.raises(recallbox.DependencyMissing, match="pip install sqlite-vec"):
        vectors.load_sqlite_vec(conn)
    conn.close()


def test_decode_varint() -> None:
    assert keyword.decode_varint(b"\x05") == (5, 1)
    assert keyword.decode_varint(b"\x81\x00") == (128, 2)
    assert keyword.decode_varint(b"\xff" * 8 + b"\x01") == ((2**56 - 1) << 8 | 1, 9)


WORDS = st.sampled_from(["alpha", "beta", "gamma", "running", "runs", "召回", "x", "Caroline:"])


@given(
    thread=st.lists(st.lists(WORDS, max_size=10).map(" ".join), min_size=1, max_size=10),
    other=st.lists(st.lists(WORDS, max_size=10).map(" ".join), max_size=10),
    query=st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
)
def test_thread_scoped_bm25_equals_fts5_on_that_thread_alone(
    tmp_path: Path, thread: list[str], other: list[str], query: str
) -> None:
    """A channel search ranks by BM25 over the thread: FTS5's bm25() on those rows alone."""
    with recallbox.open(":memory:") as box:
        messages = box.append_many("t", [{"role": "user", "content": c} for c in thread])
        if other:
            box.append_many("o", [{"role": "user", "content": c} for c in other])
        fts = build_fts_query(query)
        scope = box.store.keyword_scope(
            CORPUS_MESSAGE, fts.lexical, where=SearchFilter(channel="t")
        )  # type: ignore[attr-defined]
        assert scope is not None
        scores = scope_scores(
            scope.rows, scope.tokens, scope.df, [(m.length, m.freqs) for m in scope.matches]
        )
        got = {m.id: s for m, s in zip(scope.matches, scores, strict=True)}
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.executemany(
        "INSERT INTO f (rowid, x) VALUES (?, ?)",
        [(i, segment(m.content)) for i, m in enumerate(messages)],
    )
    expected = {
        messages[int(r)].id: -float(s)
        for r, s in conn.execute(
            "SELECT rowid, bm25(f) FROM f WHERE f MATCH ?", (render_match(fts.lexical),)
        )
    }
    conn.close()
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=0.0)


@pytest.mark.parametrize("max_k", [vectors.VEC_MAX_K, 2])
def test_nearest_visible_filters_grows_and_falls_back(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, max_k: int
) -> None:
    monkeypatch.setattr(vectors, "VEC_MAX_K", max_k)
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append_many("a", [{"role": "user", "content": f"x{i}"} for i in range(10)])
        box.append("secret", "user", "x secret")
        box.embed_all()
        box.quarantine("secret")
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = space_of(store)
        scans: list[tuple[int | None, int]] = []

        def visible(
            conn: apsw.Connection, space: EmbeddingSpace, rowids: Sequence[int]
        ) -> dict[int, str]:
            return {r: f"r{r}" for r in rowids if r == 7}

        def exact_scan(
            conn: apsw.Connection,
            space: EmbeddingSpace,
            vector: Sequence[float],
            thread_id: int | None,
            limit: int,
        ) -> list[tuple[str, float]]:
            scans.append((thread_id, limit))
            return [("exact", 0.0)]

        with store.pool.reading() as conn:

            def near(channel: str | None) -> list[tuple[str, float]]:
                return vectors.nearest_visible(
                    conn,
                    space,
                    [1.0, 0.0],
                    where=SearchFilter(channel=channel),
                    limit=1,
                    visible=visible,
                    exact_scan=exact_scan,
                )

            assert vectors.allowed_thread_id(conn, "secret") is None
            assert vectors.allowed_thread_id(conn, "zzz") is None
            thread_id = vectors.allowed_thread_id(conn, "a")
            assert thread_id is not None
            for channel in (None, "a"):
                assert near(channel) == ([("exact", 0.0)] if max_k == 2 else [("r7", 0.0)])
            assert scans == ([(None, 1), (thread_id, 1)] if max_k == 2 else [])
            assert near("secret") == []


def test_a_global_search_of_a_big_space_is_exact_over_the_newest_threads(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        old = box.append_many("old", [{"role": "user", "content": f"x old {i}"} for i in range(5)])
        mid = box.append_many("mid", [{"role": "user", "content": f"y mid {i}"} for i in range(5)])
        new = box.append_many("new", [{"role": "user", "content": f"y new {i}"} for i in range(5)])
        box.quarantine("mid")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = space_of(store)
        everything = SearchFilter()
        exact = store.nearest([1.0, 0.0], space=space, where=everything, limit=3)
        assert {i for i, _ in exact} <= {m.id for m in old}  # the x rows are nearest
        monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
        monkeypatch.setattr(vectors, "GLOBAL_SCAN_VECTORS", 5)  # the newest allowed thread
        bounded = store.nearest([1.0, 0.0], space=space, where=everything, limit=3)
        assert {i for i, _ in bounded} <= {m.id for m in new} and len(bounded) == 3
        monkeypatch.setattr(vectors, "GLOBAL_SCAN_VECTORS", 100)  # every allowed thread
        wide = store.nearest([1.0, 0.0], space=space, where=everything, limit=8)
        assert [i for i, _ in wide] == [i for i, _ in store.nearest(
            [1.0, 0.0], space=space, where=everything, limit=8)]  # fmt: skip
        assert not {i for i, _ in wide} & {m.id for m in mid}
        assert {i for i, _ in wide[:5]} == {m.id for m in old}
        # a channel search stays exact inside its thread; distances reach any visible row
        scoped = store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="old"), limit=2)
        assert len(scoped) == 2
        far = store.distances([1.0, 0.0], [old[0].id], space=space, where=everything)
        assert list(far) == [old[0].id]


def test_hidden_rows_nearest_in_a_thread_never_hide_a_visible_one(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the in-memory copies, the newest threads are searched by one KNN each: pending
    # rows nearest in their thread took the whole first k, and the visible row after them
    # was lost (the KNN was never widened).
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        box.append_many("t", [{"role": "user", "content": f"x hidden {i}", "pending": True}
                              for i in range(6)])  # fmt: skip
        shown = box.append("t", "user", "y shown")
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        store.vector_copies = VectorCache(enabled=False)
        monkeypatch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
        got = store.nearest([1.0, 0.0], space=space_of(store), where=SearchFilter(), limit=1)
        assert [i for i, _ in got] == [shown.id]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 300), st.integers(1, 5), st.integers(-3, 3)), max_size=120),
    st.lists(st.integers(1, 300), max_size=40),
    st.lists(st.integers(1, 320), min_size=1, max_size=60),
    st.booleans(),
)
def test_read_vectors_reads_what_vec0_stores(
    writes: list[tuple[int, int, int]], deletes: list[int], asked: list[int], direct: bool
) -> None:
    # writes may rewrite a row (delete + insert, as upsert does), deletes leave holes in the
    # chunks; the direct read of the chunks and vec0's own point queries agree byte for byte
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE embedding_spaces (id INTEGER PRIMARY KEY, version INTEGER)")
    vectors.create_table(conn, 1, 4)
    for rowid, partition, value in writes:
        vectors.upsert(conn, 1, [(rowid, partition, [float(value), 1.0, float(rowid), 0.5])])
    for rowid in deletes:
        conn.execute(f"DELETE FROM {vectors.table_name(1)} WHERE rowid = ?", (rowid,))
    expected = {
        int(r[0]): bytes(r[1])
        for r in conn.execute(f"SELECT rowid, embedding FROM {vectors.table_name(1)}")
        if int(r[0]) in set(asked)
    }
    versions = vec0_read.DIRECT_READ_VERSIONS if direct else frozenset()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vec0_read, "DIRECT_READ_VERSIONS", versions)
        assert vec0_read.read_vectors(conn, 1, 4, asked) == expected
    assert vec0_read._direct_layout(conn, vectors.table_name(1))  # the layout this build knows


DAMAGES = (
    "UPDATE {t}_rowids SET chunk_offset = 5000 WHERE rowid = 2",  # past the chunk's end
    "UPDATE {t}_rowids SET chunk_id = NULL WHERE rowid = 2",
    "UPDATE {t}_rowids SET chunk_id = 99 WHERE rowid = 2",  # no such chunk
    "DELETE FROM {t}_vector_chunks00",
    "UPDATE {t}_rowids SET chunk_offset = 1023 WHERE rowid = 2",  # an empty slot
)


def _vec0_answer(call: Any) -> tuple[str, object]:
    try:
        return "ok", call()
    except apsw.Error as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("damage", DAMAGES)
def test_read_vectors_answers_as_vec0_where_the_chunks_are_not_as_expected(damage: str) -> None:
    # The direct read raised ValueError / TypeError / its own SQLError where the chunk map
    # does not match the chunks; vec0 answers (or fails) its own way, and so does the read.
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE embedding_spaces (id INTEGER PRIMARY KEY, version INTEGER)")
    vectors.create_table(conn, 1, 4)
    vectors.upsert(conn, 1, [(i, 1, [1.0, 2.0, 3.0, float(i)]) for i in range(1, 6)])
    table = vectors.table_name(1)
    conn.execute(damage.format(t=table))
    own = _vec0_answer(
        lambda: {
            int(r[0]): bytes(r[1])
            for r in conn.execute(f"SELECT rowid, embedding FROM {table} WHERE rowid IN (1, 2)")
        }
    )
    assert _vec0_answer(lambda: vec0_read.read_vectors(conn, 1, 4, [1, 2])) == own


def _booked(store: SQLiteStore) -> int:
    with store.pool.reading() as conn:
        return int(conn.execute("SELECT count(*) FROM embeddings").fetchone()[0])


def test_a_space_counts_its_vectors_through_every_write(db_path: Path) -> None:
    # the count is kept by triggers (migration 13), not counted per search
    with recallbox.open(db_path, embedder=AxisEmbedder()) as box:
        first = box.append_many("a", [{"role": "user", "content": f"x {i}"} for i in range(6)])
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        assert space_of(store).count == _booked(store) == 6
        box.append("a", "user", "y new")
        box.embed_all()  # inserts
        assert space_of(store).count == _booked(store) == 7
        with store.pool.transaction() as conn:  # a rewrite of bookkeeping, then a forget
            vectors.forget(conn, CORPUS_MESSAGE, [store_rowid(store, first[0].id)])
        assert space_of(store).count == _booked(store) == 6
        with store.pool.transaction() as conn:
            conn.execute("UPDATE embedding_spaces SET vectors = 99")
        assert not all(h.healthy for h in store.doctor().indexes if h.table.startswith("vec_"))
        store.doctor(repair=True)
        assert space_of(store).count == _booked(store) == 6
        assert store.drop_embedding_space(space_of(store)) == 6
        assert store.embedding_spaces(CORPUS_MESSAGE) == []


def store_rowid(store: SQLiteStore, uid: str) -> int:
    with store.pool.reading() as conn:
        return int(conn.execute("SELECT id FROM messages WHERE uid = ?", (uid,)).fetchone()[0])
