"""Query sanitising for FTS5 MATCH (DESIGN §4.1): whole results, and never an error."""

from __future__ import annotations

from collections.abc import Iterator

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.text.fts_query import (
    MAX_QUERY_TERMS,
    FtsQuery,
    build_fts_query,
    clean_word,
    quote_phrase,
)
from recallbox.text.stopwords import STOPWORDS_EN, is_stopword


@pytest.fixture(scope="module")
def fts() -> Iterator[apsw.Connection]:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')"
    )
    conn.execute("INSERT INTO t (body) VALUES ('deploy the billing service'), ('召回 回率')")
    yield conn
    conn.close()


def test_a_plain_question() -> None:
    assert build_fts_query("What did Caroline research?") == FtsQuery(
        expression='"Caroline" OR "research"',
        terms=("Caroline", "research"),
        literals=(),
        phrases=('"Caroline"', '"research"'),
    )


def test_operators_are_dropped_and_quotes_doubled() -> None:
    query = build_fts_query('deploy OR NEAR(billing) AND NOT say"hi"')
    assert query.expression == '"deploy" OR "NEAR(billing" OR "say""hi"'
    assert query.terms == ("deploy", "NEAR(billing", 'say"hi')


def test_only_stop_words_are_kept_when_nothing_else_is_left() -> None:
    assert build_fts_query("to be or not to be").terms == ("to", "be", "or", "not")
    assert build_fts_query("the deploy").terms == ("deploy",)


def test_repeated_words_count_once_case_insensitively() -> None:
    assert build_fts_query("Deploy deploy DEPLOY").terms == ("Deploy",)


def test_identifiers_are_phrases_and_literals() -> None:
    query = build_fts_query("why does search_memory fail on ./src/box.py?")
    assert query.terms == ("search_memory", "fail", "./src/box.py")
    assert query.literals == ("search_memory", "./src/box.py")
    assert query.expression == '"search_memory" OR "fail" OR "./src/box.py"'


def test_cjk_runs_become_phrases_of_bigrams() -> None:
    assert build_fts_query("召回").expression == '"召回"'
    assert build_fts_query("压缩摘要 recall").expression == '"压缩 缩摘 摘要" OR "recall"'


def test_punctuation_and_possessives_are_stripped() -> None:
    assert clean_word('"deploy,"') == "deploy"
    assert clean_word("Caroline's") == "Caroline"
    assert clean_word("parents'") == "parents"
    assert clean_word("(billing)*") == "billing"
    assert build_fts_query("... -- ?!").is_empty


@pytest.mark.parametrize("query", ["", "   ", "\x00", "OR AND NOT NEAR", '""', "***"])
def test_nothing_searchable_is_an_empty_query(query: str) -> None:
    assert build_fts_query(query) == FtsQuery("")


def test_long_queries_are_capped() -> None:
    query = build_fts_query(" ".join(f"word{i}" for i in range(1000)))
    assert len(query.terms) == MAX_QUERY_TERMS


def test_stop_words() -> None:
    assert "the" in STOPWORDS_EN and "don’t" in STOPWORDS_EN and "don't" in STOPWORDS_EN
    assert is_stopword("WHAT") and not is_stopword("deploy")


@given(st.text(max_size=300))
def test_any_text_gives_a_valid_match_expression(fts: apsw.Connection, text: str) -> None:
    query = build_fts_query(text)
    if not query.is_empty:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.expression,)).fetchall()
        assert query.expression == " OR ".join(query.phrases)


@given(
    st.lists(
        st.sampled_from(['"', "(", ")", "OR", "NEAR", "*", "-", "^", ":", "\x00", "\ud800", "召回"])
        | st.text(max_size=5),
        max_size=20,
    ).map(" ".join)
)
def test_syntax_characters_never_break_the_expression(fts: apsw.Connection, text: str) -> None:
    query = build_fts_query(text)
    if not query.is_empty:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (query.expression,)).fetchall()


def test_quote_phrase() -> None:
    assert quote_phrase('a"b') == '"a""b"'
