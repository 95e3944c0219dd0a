"""Typed keyword queries rendered as FTS5 MATCH: well formed for any input (DESIGN §4.1)."""

from __future__ import annotations

from collections.abc import Iterator

import apsw
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.storage.sqlite.match import phrase_strings, quote_phrase, render_match
from recallbox.text.fts_query import build_fts_query


def expression(text: str) -> str:
    return render_match(build_fts_query(text).lexical)


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
    query = build_fts_query("What did Caroline research?").lexical
    assert render_match(query) == '"Caroline" OR "research"'
    assert phrase_strings(query) == ['"Caroline"', '"research"']


def test_quotes_are_doubled() -> None:
    assert expression('deploy OR NEAR(billing) AND NOT say"hi"') == (
        '"deploy" OR "NEAR(billing" OR "say""hi"'
    )


def test_identifiers_are_phrases() -> None:
    assert expression("why does search_memory fail on ./src/box.py?") == (
        '"search_memory" OR "fail" OR "./src/box.py"'
    )


def test_cjk_runs_become_phrases_of_bigrams() -> None:
    assert expression("召回") == '"召回"'
    assert expression("压缩摘要 recall") == '"压缩 缩摘 摘要" OR "recall"'


def test_nothing_searchable_renders_nothing() -> None:
    assert expression("OR AND NOT NEAR") == ""


@given(st.text(max_size=300))
def test_any_text_gives_a_valid_match_expression(fts: apsw.Connection, text: str) -> None:
    query = build_fts_query(text)
    if not query.is_empty:
        rendered = render_match(query.lexical)
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (rendered,)).fetchall()
        assert rendered == " OR ".join(phrase_strings(query.lexical))


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
        fts.execute(
            "SELECT rowid FROM t WHERE t MATCH ?", (render_match(query.lexical),)
        ).fetchall()


def test_quote_phrase() -> None:
    assert quote_phrase('a"b') == '"a""b"'
