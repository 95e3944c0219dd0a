"""Hit.text: a verbatim slice of at most 800 characters around the best match."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recallbox.text.excerpt import HIT_TEXT_LEAD_CHARS, HIT_TEXT_MAX_CHARS, excerpt


def test_short_texts_are_whole() -> None:
    assert excerpt("deploy billing", ["deploy"]) == "deploy billing"


def test_the_window_starts_before_the_match() -> None:
    text = "x" * 1000 + " deploy " + "y" * 1000
    got = excerpt(text, ["deploy"])
    assert len(got) == HIT_TEXT_MAX_CHARS
    assert got.index("deploy") == HIT_TEXT_LEAD_CHARS
    assert got in text


def test_the_window_with_most_terms_wins() -> None:
    text = "deploy " + "x" * 2000 + " deploy billing staging " + "y" * 2000
    got = excerpt(text, ["deploy", "billing", "staging"])
    assert "deploy billing staging" in got


def test_identifier_literals_weigh_double() -> None:
    text = "alpha " + "x" * 2000 + " search_memory " + "y" * 2000
    assert "search_memory" in excerpt(text, ["alpha", "search_memory"], ["search_memory"])
    assert "alpha" in excerpt(text, ["alpha", "search_memory"])


def test_near_the_end_the_window_stays_full() -> None:
    text = "x" * 2000 + "deploy"
    got = excerpt(text, ["deploy"])
    assert len(got) == HIT_TEXT_MAX_CHARS and got.endswith("deploy")


def test_no_match_starts_at_the_beginning() -> None:
    text = "z" * 2000
    assert excerpt(text, ["deploy"]) == text[:HIT_TEXT_MAX_CHARS]


def test_stemmed_and_cjk_terms_are_found() -> None:
    text = "x" * 1500 + " the runner ran " + "y" * 1500
    assert "runner" in excerpt(text, ["running"])
    text = "文" * 1500 + "召回" + "字" * 1500
    assert "召回" in excerpt(text, ["召回"])


@given(st.text(max_size=3000), st.lists(st.text(max_size=8), max_size=6))
def test_always_a_verbatim_slice_within_the_cap(text: str, terms: list[str]) -> None:
    got = excerpt(text, terms, terms[:1])
    assert len(got) <= HIT_TEXT_MAX_CHARS
    assert got in text
