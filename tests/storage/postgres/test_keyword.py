"""Documents and queries as PostgreSQL reads them: ``tsvector``/``tsquery`` literals (issue #16)."""

from __future__ import annotations

from typing import Any

import psycopg
from hypothesis import given, settings
from hypothesis import strategies as st

from recallbox.ranking.bm25 import phrase_count
from recallbox.storage.postgres.keyword import (
    LEXEME_MAX_BYTES,
    TSVECTOR_MAX_POSITION,
    TSVECTOR_MAX_POSITIONS,
    keyword_document,
    lexeme_literal,
    phrase_terms,
    tsquery_literal,
)
from recallbox.text.cjk import segment
from recallbox.text.fts_tokenize import bounded_term, fts_tokens

PIECES = [*"ab c'\\:\"召回率 ÄäéE\u0301 -_.", "a丸ed ", "x" * 2100 + " "]
TEXT = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def stored(conn: psycopg.Connection[Any], literal: str) -> list[tuple[str, list[int]]]:
    rows = conn.execute("SELECT lexeme, positions FROM unnest(%s::tsvector)", (literal,))
    return sorted((str(lexeme), list(positions)) for lexeme, positions in rows)


@settings(max_examples=60)
@given(TEXT)
def test_a_tsvector_literal_stores_exactly_our_terms_and_positions(
    postgres_conn: psycopg.Connection[Any], text: str
) -> None:
    entry = keyword_document(segment(text))
    tokens = fts_tokens(segment(text))
    assert entry.exact and entry.length == len(tokens)
    assert entry.tsvector is not None
    expected: dict[str, list[int]] = {}
    for position, token in enumerate(tokens, start=1):
        expected.setdefault(bounded_term(token, LEXEME_MAX_BYTES), []).append(position)
    assert stored(postgres_conn, entry.tsvector) == sorted(expected.items())


@settings(max_examples=60)
@given(TEXT, st.lists(TEXT, min_size=1, max_size=3))
def test_a_tsquery_matches_exactly_the_documents_holding_a_phrase(
    postgres_conn: psycopg.Connection[Any], text: str, phrases: list[str]
) -> None:
    terms = [phrase_terms(p) for p in phrases]
    query = tsquery_literal(terms)
    entry = keyword_document(segment(text))
    tokens = [bounded_term(t, LEXEME_MAX_BYTES) for t in fts_tokens(segment(text))]
    expected = any(phrase_count(tokens, p) for p in terms if p)
    if not query:
        assert not any(terms)
        return
    row = postgres_conn.execute(
        "SELECT %s::tsvector @@ %s::tsquery", (entry.tsvector, query)
    ).fetchone()
    assert row == (expected,)


def distinct_words(count: int) -> str:
    return " ".join(f"w{i}" for i in range(count))


def test_documents_a_tsvector_cannot_hold_exactly_overflow() -> None:
    assert keyword_document(distinct_words(TSVECTOR_MAX_POSITION)).exact
    assert not keyword_document(distinct_words(TSVECTOR_MAX_POSITION + 1)).exact
    assert keyword_document("w " * TSVECTOR_MAX_POSITIONS).exact
    assert not keyword_document("w " * (TSVECTOR_MAX_POSITIONS + 1)).exact
    many = " ".join(f"w{i}x{'y' * 60}" for i in range(15_000))
    assert not keyword_document(many).exact  # over a megabyte of lexemes
    entry = keyword_document("w " * (TSVECTOR_MAX_POSITIONS + 1))
    assert entry.tsvector is None
    assert entry.terms == (("w", tuple(range(1, TSVECTOR_MAX_POSITIONS + 2))),)


def test_lexemes_quote_quotes_and_backslashes(postgres_conn: psycopg.Connection[Any]) -> None:
    for term in ["it's", "back\\slash", "a b", "#x", "'", "\\"]:
        row = postgres_conn.execute(
            "SELECT lexeme FROM unnest((%s || ':1')::tsvector)", (lexeme_literal(term),)
        ).fetchone()
        assert row == (term,)
