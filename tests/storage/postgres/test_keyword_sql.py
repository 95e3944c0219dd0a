"""BM25 parity: PostgreSQL's keyword index scores exactly as FTS5's ``bm25()`` (issue #16).

The same generated corpus goes into an FTS5 table (``porter unicode61 remove_diacritics 2``,
through apsw) and into a PostgreSQL keyword corpus (``tsvector`` of the Python tokenizer's
tokens, per-scope statistics kept by triggers). After inserts, updates and deletes on both,
every generated query must return the same rows with scores equal to 1e-9 relative — over the
whole corpus and within one scope — and the statistics must equal FTS5's own ``fts5vocab``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import apsw
import psycopg
import pytest

from recallbox.ranking.bm25 import BM25_B, BM25_K1, bm25_idf
from recallbox.storage.postgres.keyword import (
    LEXEME_MAX_BYTES,
    TSVECTOR_MAX_POSITION,
    keyword_document,
    phrase_terms,
    tsquery_literal,
)
from recallbox.storage.postgres.keyword_sql import KeywordCorpus, query_elements
from recallbox.storage.sqlite.match import render_match
from recallbox.text.cjk import segment
from recallbox.text.fts_query import build_fts_query
from recallbox.text.fts_tokenize import FTS5_TOKENIZE, bounded_term

RELATIVE_TOLERANCE = 1e-9
SEED = 16
DOCS = 400
QUERIES = 300
SCOPES = 8
MUTATIONS = 40
SPECIAL_DOCS = 6  # the first documents of make_docs are special cases, never mutated
CORPUS = KeywordCorpus(table="docs", scope_column="scope_id")

_WORDS = """
deploy deploys deployed deploying deployment billing bill service services staging smoke test
tests tested testing failed failure fail connection connections refused port postgres replica
replicas run running runner runs ran generalization general generally happy happiness relational
conditional electric electricity adjust adjustment agreed feed hopping hoping sky skies pony
ponies caress caresses memory memories search searching thread threads compaction recall
recalled café naïve résumé Ärger über the a of to and is it that
"""
WORDS = _WORDS.split()
IDENTIFIERS = ["search_memory", "read_message", "pg-replica-1", "v1.2.3", "src/app.py", "don't"]
CJK = ["召回率", "搜索记忆", "中文", "记忆", "召回", "回率", "かなカナ", "한국어"]


def pick_word(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(IDENTIFIERS)
    if roll < 0.16:
        return rng.choice(CJK)
    # A skewed choice, so some terms are common (idf floored) and some rare.
    return WORDS[min(int(rng.expovariate(0.08)), len(WORDS) - 1)]


def make_docs(rng: random.Random) -> list[str]:
    docs = [" ".join(pick_word(rng) for _ in range(rng.randrange(0, 40))) for _ in range(DOCS)]
    # Documents a tsvector cannot hold exactly: the overflow path.
    docs[1] = " ".join(pick_word(rng) for _ in range(TSVECTOR_MAX_POSITION + 50))
    docs[2] = "deploy " * 300 + "search_memory billing"
    docs[3] = "x" * (LEXEME_MAX_BYTES + 5) + " deploy a丸ed"  # a stand-in term, a cut stem
    docs[4] = ""
    docs[5] = "--- *** ..."
    return docs


def make_queries(rng: random.Random) -> list[str]:
    queries = [" ".join(pick_word(rng) for _ in range(rng.randrange(1, 5))) for _ in range(QUERIES)]
    queries += ["deploy deploy", "missing words only", "search memory", "the", "a丸ed"]
    return queries


@dataclass
class Mirror:
    """The corpus in both engines."""

    lite: apsw.Connection
    pg: psycopg.Connection[Any]
    docs: dict[int, tuple[int, bool, str]]  # id -> (scope, visible, text)


def pg_write(
    pg: psycopg.Connection[Any], doc_id: int, scope: int, visible: bool, text: str
) -> None:
    entry = keyword_document(segment(text))
    pg.execute(
        "INSERT INTO docs (id, scope_id, uid, visible, fts, fts_len) "
        "VALUES (%s, %s, %s, %s, %s::tsvector, %s) ON CONFLICT (id) DO UPDATE SET "
        "scope_id = excluded.scope_id, visible = excluded.visible, fts = excluded.fts, "
        "fts_len = excluded.fts_len",
        (doc_id, scope, f"d{doc_id:05d}", visible, entry.tsvector, entry.length),
    )
    pg.execute("DELETE FROM docs_fts_overflow WHERE doc_id = %s", (doc_id,))
    if not entry.exact:
        with pg.cursor() as cur:
            cur.executemany(
                "INSERT INTO docs_fts_overflow (term, doc_id, scope_id, positions) "
                "VALUES (%s, %s, %s, %s)",
                [(term, doc_id, scope, list(pos)) for term, pos in entry.terms],
            )


@pytest.fixture
def mirror(postgres_conn: psycopg.Connection[Any]) -> Iterator[Mirror]:
    rng = random.Random(SEED)
    pg = postgres_conn
    pg.execute(
        'CREATE TABLE docs (id bigint PRIMARY KEY, scope_id bigint NOT NULL, uid text COLLATE "C" '
        "NOT NULL, visible boolean NOT NULL, fts tsvector, fts_len integer NOT NULL DEFAULT 0)"
    )
    for statement in CORPUS.ddl():
        pg.execute(statement)
    lite = apsw.Connection(":memory:")
    lite.execute(f"CREATE VIRTUAL TABLE corpus USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
    lite.execute("CREATE TABLE meta (id INTEGER PRIMARY KEY, scope INTEGER, visible INTEGER)")
    docs: dict[int, tuple[int, bool, str]] = {}
    for doc_id, text in enumerate(make_docs(rng)):
        docs[doc_id] = (rng.randrange(SCOPES), rng.random() < 0.85, text)
    m = Mirror(lite, pg, {})
    with pg.transaction():
        for doc_id, (scope, visible, text) in docs.items():
            put(m, doc_id, scope, visible, text)
    # Updates (new text, some moving scope) and deletes, so the triggers subtract too.
    with pg.transaction():
        for doc_id in rng.sample(sorted(m.docs)[SPECIAL_DOCS:], MUTATIONS):
            if rng.random() < 0.5:
                lite.execute("DELETE FROM corpus WHERE rowid = ?", (doc_id,))
                lite.execute("DELETE FROM meta WHERE id = ?", (doc_id,))
                pg.execute("DELETE FROM docs WHERE id = %s", (doc_id,))
                del m.docs[doc_id]
            else:
                text = " ".join(pick_word(rng) for _ in range(rng.randrange(0, 30)))
                put(m, doc_id, rng.randrange(SCOPES), True, text)
    yield m
    lite.close()


def put(m: Mirror, doc_id: int, scope: int, visible: bool, text: str) -> None:
    m.lite.execute("DELETE FROM corpus WHERE rowid = ?", (doc_id,))
    m.lite.execute("INSERT INTO corpus (rowid, body) VALUES (?, ?)", (doc_id, segment(text)))
    m.lite.execute("INSERT OR REPLACE INTO meta VALUES (?, ?, ?)", (doc_id, scope, int(visible)))
    pg_write(m.pg, doc_id, scope, visible, text)
    m.docs[doc_id] = (scope, visible, text)


# -- the two engines' answers ------------------------------------------------------------------


def fts5_scores(lite: apsw.Connection, expression: str, scope: int | None) -> dict[int, float]:
    """``-bm25()`` of the visible matches; with a scope, over an FTS5 table of that scope."""
    table = "corpus"
    if scope is not None:
        table = "scoped"
        lite.execute("DROP TABLE IF EXISTS scoped")
        lite.execute(f"CREATE VIRTUAL TABLE scoped USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
        lite.execute(
            "INSERT INTO scoped (rowid, body) SELECT c.rowid, c.body FROM corpus c "
            "JOIN meta ON meta.id = c.rowid WHERE meta.scope = ?",
            (scope,),
        )
    rows = lite.execute(
        f"SELECT {table}.rowid, -bm25({table}) FROM {table} JOIN meta ON meta.id = {table}.rowid "
        f"WHERE {table} MATCH ? AND meta.visible",
        (expression,),
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def pg_scores(
    pg: psycopg.Connection[Any], phrases: Sequence[Sequence[str]], scope: int | None
) -> dict[int, float]:
    """The same through the statistics tables and :meth:`KeywordCorpus.ranked_sql`."""
    elements = query_elements(phrases)
    tsq = tsquery_literal(phrases)
    if not tsq:
        return {}
    scoped = scope is not None
    params: dict[str, Any] = {
        "scope": scope,
        "terms": list(elements.terms),
        "tsq": tsq,
        "e_phrase": list(elements.phrase),
        "e_offset": list(elements.offset),
        "e_term": list(elements.term),
        "e_width": list(elements.width),
    }
    row = pg.execute(CORPUS.totals_sql(scoped), params).fetchone()
    assert row is not None
    n_docs, n_tokens = int(row[0]), int(row[1])
    term_df = dict(pg.execute(CORPUS.df_sql(scoped), params).fetchall())
    phrase_df = dict(pg.execute(CORPUS.phrase_df_sql(scoped), params).fetchall())
    idf = []
    for number, terms in enumerate(phrases, start=1):
        df = term_df.get(terms[0], 0) if len(terms) == 1 else phrase_df.get(number, 0)
        idf.append(bm25_idf(n_docs, int(df)) if terms else 0.0)
    where = "d.visible" + (" AND d.scope_id = %(scope)s" if scoped else "")
    params |= {"idf": idf, "avgdl": n_tokens / n_docs, "k1": BM25_K1, "b": BM25_B, "limit": DOCS}
    multi = any(len(p) > 1 for p in phrases)
    rows = pg.execute(CORPUS.ranked_sql(where=where, key="d.uid", multi=multi), params).fetchall()
    return {int(str(key)[1:]): float(score) for key, score in rows}


def assert_same(expected: dict[int, float], got: dict[int, float], query: str) -> None:
    assert sorted(got) == sorted(expected), query
    for doc_id, score in expected.items():
        assert math.isclose(got[doc_id], score, rel_tol=RELATIVE_TOLERANCE), (query, doc_id)


def ranked(scores: dict[int, float]) -> list[set[int]]:
    """Ids best first, grouped where scores tie (the id tie-break is arbitrary)."""
    groups: list[tuple[float, set[int]]] = []
    for doc_id, score in sorted(scores.items(), key=lambda kv: -kv[1]):
        if groups and math.isclose(groups[-1][0], score, rel_tol=RELATIVE_TOLERANCE):
            groups[-1][1].add(doc_id)
        else:
            groups.append((score, {doc_id}))
    return [ids for _, ids in groups]


# -- tests -------------------------------------------------------------------------------------


def test_statistics_equal_fts5s_own(mirror: Mirror) -> None:
    vocab_rows = {}
    mirror.lite.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(corpus, 'row')")
    for term, doc in mirror.lite.execute("SELECT CAST(term AS BLOB), doc FROM vocab"):
        vocab_rows[
            bounded_term(bytes(term).decode("utf-8", "surrogateescape"), LEXEME_MAX_BYTES)
        ] = int(doc)
    pg_df = dict(
        mirror.pg.execute("SELECT term, sum(df)::bigint FROM docs_fts_terms GROUP BY term")
    )
    assert {t: int(v) for t, v in pg_df.items()} == vocab_rows
    (rows,) = mirror.lite.execute("SELECT count(*) FROM corpus").fetchone()
    total = mirror.pg.execute("SELECT sum(n_docs), sum(n_tokens) FROM docs_fts_scopes").fetchone()
    tokens = sum(keyword_document(segment(t)).length for _, _, t in mirror.docs.values())
    assert total == (rows, tokens)
    overflow = mirror.pg.execute("SELECT count(*) FROM docs WHERE fts IS NULL").fetchone()
    assert overflow == (2,)  # the long document and the one with 300 repeats


def test_ranked_scores_equal_fts5_bm25_over_the_corpus(mirror: Mirror) -> None:
    compared = matched = 0
    for query in make_queries(random.Random(SEED + 1)):
        fts = build_fts_query(query)
        if fts.is_empty:
            continue
        phrases = [phrase_terms(" ".join(words)) for words in fts.lexical.phrases]
        expected = fts5_scores(mirror.lite, render_match(fts.lexical), None)
        got = pg_scores(mirror.pg, phrases, None)
        assert_same(expected, got, query)
        assert ranked(got) == ranked(expected)
        compared += 1
        matched += bool(expected)
    assert compared > QUERIES * 0.9 and matched > QUERIES * 0.5


def test_ranked_scores_equal_fts5_bm25_within_a_scope(mirror: Mirror) -> None:
    rng = random.Random(SEED + 2)
    for query in make_queries(rng)[:60]:
        fts = build_fts_query(query)
        if fts.is_empty:
            continue
        scope = rng.randrange(SCOPES)
        phrases = [phrase_terms(" ".join(words)) for words in fts.lexical.phrases]
        assert_same(
            fts5_scores(mirror.lite, render_match(fts.lexical), scope),
            pg_scores(mirror.pg, phrases, scope),
            query,
        )
