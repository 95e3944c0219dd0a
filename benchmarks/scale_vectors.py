"""Measured options for global vector KNN and ranked keyword search at scale (#14 items 4, 5).

On a copy of a scale database that has hashing-embedder vectors (``scale_build.embed``):

Vector leg (global, ``k = 200`` as ``sessions.VECTOR_CANDIDATES``), each against the exact
answer (numpy over the float vectors) for recall@200:

* ``partitioned`` — the shipped ``vec0`` table (``thread_id`` partition key), no constraint;
* ``flat`` — a ``vec0`` float table without the partition key;
* ``int8`` / ``binary`` — quantised ``vec0`` tables (``vec_quantize_int8(…, 'unit')``,
  ``vec_quantize_binary``); ``RERANK`` × 200 nearest by the quantised distance, re-ranked by
  the float cosine (``vec_distance_cosine`` on the partitioned table by rowid).

Keyword leg (global, 200 candidates as ``sessions.KEYWORD_CANDIDATES``):

* ``join_all`` — the shipped query: ``bm25()`` of every match joined to its message and
  thread, then ``ORDER BY … LIMIT``;
* ``rank_first`` — ``ORDER BY rank LIMIT`` over the FTS table alone (``OVERFETCH`` × 200),
  then the searchable and privacy filter on those rows only (grown when too few survive).

Usage: ``python benchmarks/scale_vectors.py --db COPY.db --meta META.json [--build]``.
Writes ``benchmarks/results/scale_vectors.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402
import numpy as np  # noqa: E402
import scale_data as data  # noqa: E402
import sqlite_vec  # noqa: E402
from scale import summary  # noqa: E402

from recallbox.embeddings.hashing import HashingEmbedder  # noqa: E402
from recallbox.storage.sqlite.vectors import to_blob  # noqa: E402
from recallbox.storage.sqlite.visibility import MESSAGE_SEARCHABLE_SQL as SEARCHABLE  # noqa: E402
from recallbox.text.fts_query import build_fts_query  # noqa: E402

RESULTS = HERE / "results" / "scale_vectors.json"
K = 200
RERANK = (2, 5, 10)
OVERFETCH = 2


def connect(db: Path) -> apsw.Connection:
    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def float_table(conn: apsw.Connection) -> tuple[str, int]:
    name, sql = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE name LIKE 'vec_%' AND sql LIKE '%vec0%' "
        "AND name NOT LIKE 'vecx_%' ORDER BY name LIMIT 1"
    ).fetchone()
    dim = int(str(sql).split("float[")[1].split("]")[0])
    return str(name), dim


def build(db: Path) -> dict[str, float]:
    conn = connect(db)
    table, dim = float_table(conn)
    out = {}
    for name, column, expr in (
        ("vecx_flat", f"float[{dim}] distance_metric=cosine", "embedding"),
        ("vecx_int8", f"int8[{dim}]", "vec_quantize_int8(embedding, 'unit')"),
        ("vecx_bit", f"bit[{dim}]", "vec_quantize_binary(embedding)"),
    ):
        started = time.perf_counter()
        conn.execute(f"DROP TABLE IF EXISTS {name}")
        conn.execute(f"CREATE VIRTUAL TABLE {name} USING vec0(embedding {column})")
        conn.execute("BEGIN")
        conn.execute(f"INSERT INTO {name}(rowid, embedding) SELECT rowid, {expr} FROM {table}")
        conn.execute("COMMIT")
        out[name] = round(time.perf_counter() - started, 1)
    conn.close()
    return out


def sizes(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    out: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        name = str(name)
        if name.startswith("vec"):
            key = name.split("_chunks")[0].split("_rowids")[0].split("_vector")[0].split("_info")[0]
            key = key.split("_auxiliary")[0].split("_metadata")[0]
            out[key] = out.get(key, 0) + int(size)
    conn.close()
    return out


def knn(conn: apsw.Connection, table: str, query: bytes, k: int, quant: str = "") -> list[int]:
    match = {"": "?", "int8": "vec_quantize_int8(?, 'unit')", "bit": "vec_quantize_binary(?)"}
    sql = f"SELECT rowid FROM {table} WHERE embedding MATCH {match[quant]} AND k = ?"
    return [int(r[0]) for r in conn.execute(sql, (query, k))]


def rerank(conn: apsw.Connection, table: str, query: bytes, ids: list[int], k: int) -> list[int]:
    sql = (
        f"SELECT rowid FROM {table} WHERE rowid IN (SELECT value FROM json_each(?)) "
        "ORDER BY vec_distance_cosine(embedding, ?) LIMIT ?"
    )
    return [int(r[0]) for r in conn.execute(sql, (json.dumps(ids), query, k))]


def vector_options(db: Path, queries: list[str]) -> dict[str, Any]:
    conn = connect(db)
    table, dim = float_table(conn)
    embedder = HashingEmbedder(dim)
    rowids = [int(r[0]) for r in conn.execute(f"SELECT rowid FROM {table}")]
    blobs = [bytes(r[0]) for r in conn.execute(f"SELECT embedding FROM {table}")]
    matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dim)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1
    matrix = matrix / norms
    del blobs
    vectors = [v for v in embedder.embed(queries) if v is not None]
    results: dict[str, Any] = {}

    def exact(v: list[float]) -> set[int]:
        q = np.asarray(v, dtype=np.float32)
        q /= np.linalg.norm(q) or 1
        top = np.argpartition(-(matrix @ q), K)[:K]
        return {rowids[i] for i in top}

    truth = [exact(v) for v in vectors]
    plans: dict[str, Any] = {
        "partitioned": lambda b: knn(conn, table, b, K),
        "flat": lambda b: knn(conn, "vecx_flat", b, K),
    }
    for r in RERANK:
        plans[f"int8_rerank{r}"] = lambda b, r=r: rerank(
            conn, table, b, knn(conn, "vecx_int8", b, K * r, "int8"), K
        )
        plans[f"binary_rerank{r}"] = lambda b, r=r: rerank(
            conn, table, b, knn(conn, "vecx_bit", b, K * r, "bit"), K
        )
    for name, plan in plans.items():
        times, recalls = [], []
        for v, want in zip(vectors, truth, strict=True):
            blob = to_blob(v)
            started = time.perf_counter()
            got = plan(blob)
            times.append(time.perf_counter() - started)
            recalls.append(len(set(got) & want) / K)
        results[name] = {
            "latency": summary(times),
            "recall_at_200": round(float(np.mean(recalls)), 4),
        }
        print(name, results[name], flush=True)
    conn.close()
    return results


def keyword_options(db: Path, queries: list[str]) -> dict[str, Any]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    join_all = (
        "SELECT m.uid, -bm25(messages_fts) AS s FROM messages_fts JOIN messages m ON "
        "m.id = messages_fts.rowid JOIN threads t ON t.id = m.thread_id "
        f"WHERE messages_fts MATCH ? AND {SEARCHABLE} ORDER BY s DESC, m.uid LIMIT ?"
    )
    rank_first = (
        "WITH top AS (SELECT rowid, rank FROM messages_fts WHERE messages_fts MATCH ? "
        "ORDER BY rank LIMIT ?) SELECT m.uid, -top.rank AS s FROM top JOIN messages m "
        f"ON m.id = top.rowid JOIN threads t ON t.id = m.thread_id WHERE {SEARCHABLE} "
        "ORDER BY s DESC, m.uid LIMIT ?"
    )

    def run_join(expr: str) -> list[str]:
        return [r[0] for r in conn.execute(join_all, (expr, K))]

    def run_rank(expr: str) -> list[str]:
        fetch = K * OVERFETCH
        while True:
            rows = [r[0] for r in conn.execute(rank_first, (expr, fetch, K))]
            if len(rows) >= K or fetch >= 1 << 20:
                return rows
            total = conn.execute(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?", (expr,)
            ).fetchone()[0]
            if fetch >= total:
                return rows
            fetch *= 4

    exprs = [build_fts_query(q).expression for q in queries]
    exprs = [e for e in exprs if e]
    out: dict[str, Any] = {}
    answers: dict[str, list[list[str]]] = {}
    for name, fn in (("join_all", run_join), ("rank_first", run_rank)):
        for e in exprs:
            fn(e)
        times = []
        answers[name] = []
        for e in exprs:
            started = time.perf_counter()
            answers[name].append(fn(e))
            times.append(time.perf_counter() - started)
        out[name] = {"latency": summary(times)}
        print(name, out[name], flush=True)
    same = sum(a == b for a, b in zip(answers["join_all"], answers["rank_first"], strict=True))
    out["rank_first"]["same_top200_as_join_all"] = f"{same}/{len(exprs)}"
    conn.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--meta", type=Path, required=True)
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    meta = json.loads(args.meta.read_text())
    queries = [q.text for q in data.query_mix(int(meta["size"]), int(meta["identifiers"]))]
    report: dict[str, Any] = {"db": args.db.name, "k": K}
    if args.build:
        report["build_seconds"] = build(args.db)
    report["vector_bytes"] = sizes(args.db)
    print(report, flush=True)
    report["keyword"] = keyword_options(args.db, queries)
    report["vector"] = vector_options(args.db, queries)
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    previous[args.db.name] = report
    args.out.write_text(json.dumps(previous, indent=1) + "\n")


if __name__ == "__main__":
    main()
