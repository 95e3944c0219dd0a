"""The ranked parts of ``benchmarks/scale.py`` (#14): keyword and hybrid ``search``, global and
thread-scoped, each beside a same-run baseline.

* keyword, global: ``box.search(q, allow_embed=False)`` against ``bm25s`` over every
  searchable message's content (top 10);
* keyword, one thread: ``box.search(q, channel=…, allow_embed=False)`` against ``bm25s`` over
  that thread's messages (one small index per thread the mix rotates through);
* hybrid (hashing-embedder vectors), global: ``box.search(q)`` against an exact numpy cosine
  top 10 over every stored vector; one thread: ``box.search(q, channel=…)`` against the same
  scan over that thread's vectors.

Each query is timed once as a warm-up, then ``passes`` times (wall and process CPU time).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import apsw
import scale_baselines as base
from scale_build import SEARCHABLE_SQL

import recallbox

Timer = Callable[..., tuple[list[float], list[Any]]]
Op = Callable[[str, list[float], dict[str, list[float]]], dict[str, Any]]


def thread_texts(db: Path, channels: Sequence[str]) -> dict[str, list[str]]:
    """The searchable messages' content of each of ``channels`` (the per-thread baselines)."""
    wanted = set(channels)
    out: dict[str, list[str]] = {c: [] for c in channels}
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    for row in conn.execute(SEARCHABLE_SQL):
        if row[1] in wanted:
            out[str(row[1])].append(str(row[5]))
    conn.close()
    return out


def all_texts(db: Path) -> list[str]:
    """Every searchable message's content (the global ``bm25s`` baseline)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    texts = [str(row[5]) for row in conn.execute(SEARCHABLE_SQL)]
    conn.close()
    return texts


def keyword_ops(
    db: Path,
    queries: list[str],
    channel_of: dict[str, str],
    *,
    passes: int,
    bm25: bool,
    timed: Timer,
    op: Op,
    texts: list[str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``keyword_search`` and ``keyword_search_thread`` with their baselines, and facts about
    the baselines (index seconds)."""
    with recallbox.open(db) as box:
        g_times, _ = timed(lambda q: box.search(q, allow_embed=False), queries, passes)
        t_times, _ = timed(
            lambda q: box.search(q, channel=channel_of[q], allow_embed=False), queries, passes
        )
    facts: dict[str, Any] = {}
    g_base: dict[str, list[float]] = {}
    t_base: dict[str, list[float]] = {}
    if bm25:
        print("  bm25s baselines", flush=True)
        every = texts if texts is not None else all_texts(db)
        global_index = base.Bm25sBaseline(every)
        del every
        facts["bm25s_index_seconds"] = round(global_index.index_seconds, 1)
        g_base["bm25s"], _ = timed(global_index.query, queries, passes)
        del global_index
        per_thread = {
            c: base.Bm25sBaseline(t or [""])
            for c, t in thread_texts(db, sorted(set(channel_of.values()))).items()
        }
        t_base["bm25s"], _ = timed(lambda q: per_thread[channel_of[q]].query(q), queries, passes)
    return {
        "keyword_search": op(
            "search(query, allow_embed=False): ranked keyword, global, ms", g_times, g_base
        ),
        "keyword_search_thread": op(
            "search(query, channel, allow_embed=False): ranked keyword in one thread, ms",
            t_times,
            t_base,
        ),
    }, facts


class ThreadKnn:
    """Exact cosine top-k over one thread's stored vectors (the thread-scoped KNN baseline)."""

    def __init__(self, db: Path, channels: Sequence[str]) -> None:
        import numpy as np
        import sqlite_vec

        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        table = conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'vec_%' AND sql LIKE '%vec0%'"
        ).fetchone()[0]
        self.np = np
        self.matrices: dict[str, Any] = {}
        probe = None
        for channel in channels:
            row = conn.execute("SELECT id FROM threads WHERE channel = ?", (channel,)).fetchone()
            if probe is None:
                dim = (
                    len(bytes(conn.execute(f"SELECT embedding FROM {table} LIMIT 1").fetchone()[0]))
                    // 4
                )
                probe = np.zeros(dim, dtype=np.float32)
                probe[0] = 1.0
            blobs = [
                bytes(r[0])
                for r in conn.execute(
                    f"SELECT embedding FROM {table} WHERE embedding MATCH ? AND k = 4096 "
                    "AND thread_id = ?",
                    (probe.tobytes(), int(row[0]) if row else -1),
                )
            ]
            matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            self.matrices[channel] = matrix / norms
        conn.close()

    def query(self, channel: str, vector: list[float]) -> Any:
        np = self.np
        matrix = self.matrices[channel]
        if not len(matrix):
            return []
        q = np.asarray(vector, dtype=np.float32)
        q /= np.linalg.norm(q) or 1.0
        scores = matrix @ q
        k = min(base.TOP_K, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]


def _global_knn(
    db: Path, qvecs: dict[str, Any], queries: list[str], passes: int, timed: Timer
) -> list[float]:
    """The global numpy KNN baseline's timings (its matrix is freed on return)."""
    knn = base.NumpyKnn(db)
    times, _ = timed(lambda q: knn.query(qvecs[q]) if qvecs[q] else None, queries, passes)
    return times


def hybrid_ops(
    db: Path,
    queries: list[str],
    channel_of: dict[str, str],
    *,
    passes: int,
    timed: Timer,
    op: Op,
) -> dict[str, Any]:
    """``hybrid_search`` and ``hybrid_search_thread`` (hashing-embedder vectors) with exact
    numpy KNN baselines."""
    with recallbox.open(db, embedder="hash") as box:
        g_times, _ = timed(lambda q: box.search(q), queries, passes)
        t_times, _ = timed(lambda q: box.search(q, channel=channel_of[q]), queries, passes)
        embedder = box.embedder
        assert embedder is not None
        qvecs = {q: embedder.embed([q])[0] for q in queries}
    print("  numpy KNN baselines", flush=True)
    n_times = _global_knn(db, qvecs, queries, passes, timed)
    per_thread = ThreadKnn(db, sorted(set(channel_of.values())))
    nt_times, _ = timed(
        lambda q: per_thread.query(channel_of[q], qvecs[q]) if qvecs[q] else None,
        queries,
        passes,
    )
    return {
        "hybrid_search": op(
            "search(query): keyword + hashing-vector hybrid, global, ms",
            g_times,
            {"numpy_exact_knn": n_times},
        ),
        "hybrid_search_thread": op(
            "search(query, channel): keyword + hashing-vector hybrid in one thread, ms",
            t_times,
            {"numpy_exact_knn": nt_times},
        ),
    }
