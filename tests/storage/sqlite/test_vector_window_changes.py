"""The in-memory vector copies across changes (#12, #14): after any sequence of writes — new
rows and their vectors, a purge, a redaction and the re-embedding of the rewritten row, a
quarantine, a write by another store on the same file — and with the space crossing the size
where a search of every thread switches to the window of the newest threads, each search
answers as sqlite-vec does on the same snapshot (copies off)."""

from __future__ import annotations

import re
import tempfile
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.storage.base import CORPUS_MESSAGE, SearchFilter
from recallbox.storage.sqlite import vector_cache, vectors
from recallbox.storage.sqlite.store import SQLiteStore
from recallbox.storage.sqlite.vector_cache import VectorCache

DIM = 6
THREADS = ("t0", "t1", "t2")
#: ``v<i> …`` embeds as row ``i`` of this table (ties on purpose); any other text by its hash.
TABLE = [[1.0, float(i % 3), float(i % 4), 0.0, float(i % 2), 1.0] for i in range(12)]
QUERIES = ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.0, 1.0])


class Embedder:
    model_id = "change-6"
    dim = DIM

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        out: list[list[float] | None] = []
        for text in texts:
            found = re.match(r"v(\d+)\b", text)
            if found:
                out.append(list(TABLE[int(found.group(1)) % len(TABLE)]))
            else:
                seed = zlib.crc32(text.encode())
                out.append([float((seed >> (4 * i)) % 5 - 2) for i in range(DIM)])
        return out


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 2), st.integers(0, 11)),
        st.tuples(st.just("embed")),
        st.tuples(st.just("purge"), st.integers(0, 30)),
        st.tuples(st.just("redact"), st.integers(0, 30)),
        st.tuples(st.just("quarantine"), st.integers(0, 2)),
        st.tuples(st.just("other"), st.integers(0, 2), st.integers(0, 11)),
    ),
    min_size=1,
    max_size=14,
)


@contextmanager
def _opened(path: Path, *, copies: bool) -> Iterator[recallbox.Box]:
    with recallbox.open(path, embedder=Embedder()) as box:
        if not copies:
            store: SQLiteStore = box.store  # type: ignore[assignment]
            store.vector_copies = VectorCache(enabled=False)
        yield box


def _ids(box: recallbox.Box) -> list[str]:
    """Every message id, in thread order (the audit read: quarantined threads too)."""
    return [m.id for t in box.threads() for m in box.messages(t.channel)]


def _apply(box: recallbox.Box, path: Path, op: tuple[object, ...]) -> None:
    kind = op[0]
    ids = _ids(box)
    if kind == "append":
        box.append(THREADS[int(str(op[1]))], "user", f"v{op[2]} row")
    elif kind == "embed":
        box.embed_all()
    elif kind == "purge" and ids:
        box.purge(ids[int(str(op[1])) % len(ids)])
    elif kind == "redact" and ids:
        box.redact(ids[int(str(op[1])) % len(ids)], "row")  # a new text, a new vector
    elif kind == "quarantine" and THREADS[int(str(op[1]))] in {t.channel for t in box.threads()}:
        channel = THREADS[int(str(op[1]))]
        quarantined = {t.channel for t in box.threads() if t.quarantined}
        (box.unquarantine if channel in quarantined else box.quarantine)(channel)
    elif kind == "other":
        with _opened(path, copies=True) as other:  # its own connections and copies
            other.append(THREADS[int(str(op[1]))], "user", f"v{op[2]} other")
            other.embed_all()


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=OPS, big_at=st.sampled_from((0, 5)), window=st.integers(1, 8), limit=st.integers(1, 9))
def test_the_copies_answer_as_sqlite_vec_after_any_change(
    monkeypatch: pytest.MonkeyPatch, ops: list[tuple[object, ...]], big_at: int, window: int,
    limit: int,
) -> None:  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        # the space is "big" past ``big_at`` vectors: no whole copy, the window of the newest
        # threads holding ``window`` messages' worth; below, the whole copy
        patch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", big_at)
        patch.setattr(vector_cache, "CACHE_MAX_VECTORS", big_at)
        patch.setattr(vectors, "GLOBAL_SCAN_VECTORS", window)
        path = Path(tmp) / "w.db"
        with _opened(path, copies=True) as box, _opened(path, copies=False) as exact:
            box.append(THREADS[0], "user", "v0 first")
            box.embed_all()
            for op in [*ops, ("embed",)]:
                _apply(box, path, op)
                _compare(box, exact, limit)


def _compare(box: recallbox.Box, exact: recallbox.Box, limit: int) -> None:
    copied: SQLiteStore = box.store  # type: ignore[assignment]
    plain: SQLiteStore = exact.store  # type: ignore[assignment]
    spaces = copied.embedding_spaces(CORPUS_MESSAGE)
    if not spaces:
        return
    space = spaces[0]
    ids = (
        [m.id for m in box.messages(THREADS[0])]
        if "t0" in {t.channel for t in box.threads()}
        else []
    )
    for q in QUERIES:
        for where in (SearchFilter(), SearchFilter(channel=THREADS[1])):
            got = copied.nearest(q, space=space, where=where, limit=limit)
            want = plain.nearest(q, space=space, where=where, limit=limit)
            assert [d for _, d in got] == [d for _, d in want]
            last = got[-1][1] if got else None
            assert {p for p in got if p[1] != last} == {p for p in want if p[1] != last}
        asked = ["m_0000000000000000", *ids]
        assert copied.distances(q, asked, space=space, where=SearchFilter()) == plain.distances(
            q, asked, space=space, where=SearchFilter()
        )
