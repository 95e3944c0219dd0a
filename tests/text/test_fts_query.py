"""Query sanitising (DESIGN §4.1): typed keyword queries, whole results, and never an error.

How a backend renders them is tested with the backend (``tests/storage/sqlite/test_match.py``).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.storage.base import LexicalQuery
from recallbox.text.fts_query import (
    MAX_QUERY_TERMS,
    FtsQuery,
    build_fts_query,
    clean_word,
)
from recallbox.text.stopwords import STOPWORDS_EN, is_stopword


def test_a_plain_question() -> None:
    assert build_fts_query("What did Caroline research?") == FtsQuery(
        lexical=LexicalQuery((("Caroline",), ("research",))),
        terms=("Caroline", "research"),
        literals=(),
    )


def test_operators_are_dropped() -> None:
    query = build_fts_query('deploy OR NEAR(billing) AND NOT say"hi"')
    assert query.lexical.phrases == (("deploy",), ("NEAR(billing",), ('say"hi',))
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
    assert query.lexical.phrases == (("search_memory",), ("fail",), ("./src/box.py",))


def test_cjk_runs_become_phrases_of_bigrams() -> None:
    assert build_fts_query("召回").lexical.phrases == (("召回",),)
    assert build_fts_query("压缩摘要 recall").lexical.phrases == (
        ("压缩", "缩摘", "摘要"),
        ("recall",),
    )


def test_punctuation_and_possessives_are_stripped() -> None:
    assert clean_word('"deploy,"') == "deploy"
    assert clean_word("Caroline's") == "Caroline"
    assert clean_word("parents'") == "parents"
    assert clean_word("(billing)*") == "billing"
    assert build_fts_query("... -- ?!").is_empty


@pytest.mark.parametrize("query", ["", "   ", "\x00", "OR AND NOT NEAR", '""', "***"])
def test_nothing_searchable_is_an_empty_query(query: str) -> None:
    assert build_fts_query(query) == FtsQuery()


def test_long_queries_are_capped() -> None:
    query = build_fts_query(" ".join(f"word{i}" for i in range(1000)))
    assert len(query.terms) == MAX_QUERY_TERMS


def test_stop_words() -> None:
    assert "the" in STOPWORDS_EN and "don’t" in STOPWORDS_EN and "don't" in STOPWORDS_EN
    assert is_stopword("WHAT") and not is_stopword("deploy")


@given(st.text(max_size=300))
def test_phrases_are_words_without_whitespace(text: str) -> None:
    """The LexicalQuery contract every backend relies on: non-empty words, no whitespace."""
    query = build_fts_query(text)
    assert len(query.lexical.phrases) == len(query.terms)
    for phrase in query.lexical.phrases:
        assert phrase and all(word and not any(c.isspace() for c in word) for word in phrase)
