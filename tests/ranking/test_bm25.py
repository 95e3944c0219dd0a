"""The pure-Python BM25 against FTS5's own bm25() on the same corpus (DESIGN §4.1)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.ranking.bm25 import (
    BM25_B,
    BM25_IDF_FLOOR,
    BM25_K1,
    SCOPED_BM25_B,
    SCOPED_BM25_K1,
    BM25Corpus,
    bm25_idf,
    phrase_count,
    scope_scores,
)
from recallbox.storage.sqlite.match import quote_phrase

TOKENIZE = "porter unicode61 remove_diacritics 2"
RELATIVE_TOLERANCE = 1e-9

CORPUS = [
    "Deploy the billing service to staging-03 and run the smoke tests.",
    "The smoke tests failed: connection refused on port 5432.",
    "Restarted postgres; the deploy of billing to staging passed.",
    "Caroline went to an LGBTQ support group; running, runners and runs.",
    "Café naïve résumé — diacritics are removed by the index.",
    "search_memory(query) searches every generation of the thread.",
    "We search memory with search_memory and read_message.",
    "",
    "the the the the the the",
    "召回 回率 provides recall over compacted threads",
    "deploy deploy deploy billing",
]
QUERIES = [
    ["deploy"],
    ["deploy", "billing"],
    ["smoke tests", "postgres"],
    ["running"],
    ["search memory", "read_message"],
    ["café", "resume"],
    ["召回", "recall"],
    ["the"],
    ["deploy", "deploy"],
    ["missing", "deploy billing"],
]


@pytest.fixture
def conn() -> Iterator[apsw.Connection]:
    connection = apsw.Connection(":memory:")
    yield connection
    connection.close()


def tokens(conn: apsw.Connection, text: str, reason: int) -> list[str]:
    tokenizer = conn.fts5_tokenizer("porter", ["unicode61", "remove_diacritics", "2"])
    return [
        str(t)
        for t in tokenizer(
            text.encode("utf-8"), reason, None, include_offsets=False, include_colocated=False
        )
    ]


def fts5_scores(
    conn: apsw.Connection, docs: Sequence[str], phrases: Sequence[str]
) -> dict[int, float]:
    conn.execute("DROP TABLE IF EXISTS corpus")
    conn.execute(f"CREATE VIRTUAL TABLE corpus USING fts5(body, tokenize='{TOKENIZE}')")
    conn.executemany("INSERT INTO corpus (rowid, body) VALUES (?, ?)", list(enumerate(docs)))
    expression = " OR ".join(quote_phrase(p) for p in phrases)
    rows = conn.execute(
        "SELECT rowid, -bm25(corpus) FROM corpus WHERE corpus MATCH ?", (expression,)
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def python_scores(
    conn: apsw.Connection, docs: Sequence[str], phrases: Sequence[str]
) -> list[float]:
    corpus = BM25Corpus([tokens(conn, d, apsw.FTS5_TOKENIZE_DOCUMENT) for d in docs])
    return corpus.scores([tokens(conn, p, apsw.FTS5_TOKENIZE_QUERY) for p in phrases])


def assert_agree(conn: apsw.Connection, docs: Sequence[str], phrases: Sequence[str]) -> None:
    expected = fts5_scores(conn, docs, phrases)
    got = python_scores(conn, docs, phrases)
    for row, score in enumerate(got):
        if row in expected:
            assert score == pytest.approx(expected[row], rel=RELATIVE_TOLERANCE, abs=0.0), row
        else:
            assert score == 0.0, (row, score)


@pytest.mark.parametrize("phrases", QUERIES)
def test_matches_fts5_bm25_on_a_fixed_corpus(conn: apsw.Connection, phrases: list[str]) -> None:
    assert fts5_scores(conn, CORPUS, phrases)  # every query matches something
    assert_agree(conn, CORPUS, phrases)


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "running", "runs", "召回", "x"])


@given(
    docs=st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=12),
    phrases=st.lists(st.lists(WORDS, min_size=1, max_size=3).map(" ".join), min_size=1, max_size=4),
)
def test_matches_fts5_bm25_on_random_corpora(
    conn: apsw.Connection, docs: list[str], phrases: list[str]
) -> None:
    assert_agree(conn, docs, phrases)


def test_idf_is_floored_like_fts5() -> None:
    assert bm25_idf(10, 1) == pytest.approx(math.log(9.5 / 1.5))
    assert bm25_idf(10, 5) == BM25_IDF_FLOOR
    assert bm25_idf(10, 9) == BM25_IDF_FLOOR


def test_phrase_count_counts_overlapping_occurrences() -> None:
    assert phrase_count(["a", "a", "a"], ["a", "a"]) == 2
    assert phrase_count(["a", "b", "a", "b"], ["a", "b"]) == 2
    assert phrase_count(["a"], ["a", "b"]) == 0
    assert phrase_count(["a"], []) == 0


def brute_force_bm25(
    docs: Sequence[Sequence[str]], phrases: Sequence[Sequence[str]], k1: float, b: float
) -> list[float]:
    """BM25 written out from its definition: an independent reference for other constants."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    counts = [[phrase_count(d, p) for p in phrases] for d in docs]
    df = [sum(1 for row in counts if row[i] > 0) for i in range(len(phrases))]
    out = []
    for doc, row in zip(docs, counts, strict=True):
        total = 0.0
        for i, tf in enumerate(row):
            if tf == 0:
                continue
            idf = max(math.log((n - df[i] + 0.5) / (df[i] + 0.5)), 0.0) or BM25_IDF_FLOOR
            total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        out.append(total)
    return out


TOKENS = st.sampled_from(["alpha", "beta", "gamma", "delta", "x"])


@given(
    docs=st.lists(st.lists(TOKENS, min_size=1, max_size=12), min_size=1, max_size=12),
    phrases=st.lists(st.lists(TOKENS, min_size=1, max_size=2), min_size=1, max_size=3),
)
def test_the_thread_scoped_constants_score_bm25_by_its_definition(
    docs: list[list[str]], phrases: list[list[str]]
) -> None:
    counts = [[phrase_count(d, p) for p in phrases] for d in docs]
    df = [sum(1 for row in counts if row[i] > 0) for i in range(len(phrases))]
    got = scope_scores(
        len(docs),
        sum(len(d) for d in docs),
        df,
        [(len(d), row) for d, row in zip(docs, counts, strict=True)],
        k1=SCOPED_BM25_K1,
        b=SCOPED_BM25_B,
    )
    expected = brute_force_bm25(docs, phrases, SCOPED_BM25_K1, SCOPED_BM25_B)
    assert got == pytest.approx(expected, rel=RELATIVE_TOLERANCE, abs=1e-12)
    assert (SCOPED_BM25_K1, SCOPED_BM25_B) != (BM25_K1, BM25_B)  # a real change, tested apart
