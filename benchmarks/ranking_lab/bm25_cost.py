"""Experiment only (#21): what a BM25 with other k1/b costs on the unscoped keyword path.

Builds a synthetic corpus (Zipf words), then times, per query, over the whole index:

* ``fts5``: FTS5's built-in ``bm25()`` (k1 1.2, b 0.75 fixed), best 400;
* ``aux``: a Python FTS5 auxiliary function (apsw) computing BM25 with any k1/b, called for
  every matching row, best 400;
* ``rescore``: ``bm25()`` picks the best 400, then only those are re-scored in Python with the
  new k1/b (phrase frequencies through the existing aux function, df by one count per phrase).

Usage::

    python benchmarks/ranking_lab/bm25_cost.py --rows 200000 --db /tmp/rk/bm25cost.db
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import apsw
from recallbox.storage.sqlite.retrieval import PHRASE_FREQS_FUNCTION, register_functions

import recallbox
from recallbox.ranking.bm25 import bm25_idf

POOL = 400
K1, B = 1.2, 0.3


def build(db: Path, rows: int, vocab: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    weights = [1.0 / (i + 1) for i in range(vocab)]
    with recallbox.open(db) as box:
        batch = 2000
        for start in range(0, rows, batch):
            channel = f"t{start // 20000}"
            box.append_many(
                channel,
                [
                    {
                        "role": "user",
                        "content": " ".join(rng.choices(words, weights, k=rng.randint(5, 40))),
                    }
                    for _ in range(min(batch, rows - start))
                ],
            )


def bm25_aux(api: apsw.FTS5ExtensionApi, *args: object) -> float:
    n = api.row_count
    avgdl = api.column_total_size(-1) / n
    length = api.column_size(-1)
    score = 0.0
    for p in range(api.phrase_count):
        freq = sum(map(len, api.phrase_locations(p)))
        if not freq:
            continue
        df = api.query_phrase_count(p) if hasattr(api, "query_phrase_count") else None
        idf = 1.0 if df is None else bm25_idf(n, df)
        score += idf * freq * (K1 + 1) / (freq + K1 * (1 - B + B * length / avgdl))
    return -score


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--vocab", type=int, default=5_000)
    parser.add_argument("--db", type=Path, required=True)
    args = parser.parse_args()
    if not args.db.exists():
        t = time.perf_counter()
        build(args.db, args.rows, args.vocab)
        print(f"built {args.rows} rows in {time.perf_counter() - t:.0f} s")
    conn = apsw.Connection(str(args.db))
    register_functions(conn)
    conn.register_fts5_function("rb_bm25", bm25_aux)
    queries = [
        f"w{a} w{b}" for a, b in [(3, 40), (10, 200), (50, 900), (1, 2), (120, 2500), (7, 77)]
    ]
    results: dict[str, list[float]] = {"fts5": [], "aux": [], "rescore": []}
    for q in queries:
        expr = " OR ".join(f'"{w}"' for w in q.split())
        matches = conn.execute(
            "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (expr,)
        ).fetchone()[0]
        t = time.perf_counter()
        conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY bm25(messages_fts) LIMIT ?",
            (expr, POOL),
        ).fetchall()
        results["fts5"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        conn.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rb_bm25(messages_fts) LIMIT ?",
            (expr, POOL),
        ).fetchall()
        results["aux"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        top = conn.execute(
            f"SELECT rowid, {PHRASE_FREQS_FUNCTION}(messages_fts) FROM messages_fts WHERE messages_fts MATCH ? "
            "ORDER BY bm25(messages_fts) LIMIT ?",
            (expr, POOL),
        ).fetchall()
        n = conn.execute("SELECT count(*) FROM messages_fts_docsize").fetchone()[0]
        dfs = [
            conn.execute(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (f'"{w}"',)
            ).fetchone()[0]
            for w in q.split()
        ]
        idfs = [bm25_idf(n, d) for d in dfs]
        avgdl = 22.5
        scored = []
        for rowid, packed in top:
            length, *freqs = (int(x) for x in str(packed).split())
            s = sum(
                idf * f * (K1 + 1) / (f + K1 * (1 - B + B * length / avgdl))
                for idf, f in zip(idfs, freqs, strict=True)
                if f
            )
            scored.append((s, rowid))
        scored.sort(reverse=True)
        results["rescore"].append((time.perf_counter() - t) * 1000)
        print(
            f"{q!r}: {matches} matching rows; "
            + ", ".join(f"{k} {v[-1]:.1f} ms" for k, v in results.items())
        )
    for k, v in results.items():
        print(f"{k}: median {statistics.median(v):.1f} ms, max {max(v):.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
