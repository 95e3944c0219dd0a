"""Hit windows and the bounded merge (DESIGN §3.2)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import recallbox
from recallbox.text.windows import (
    MARK,
    SEP,
    THREAD_SEARCH_MAX_CHARS,
    WINDOW_CHARS,
    WINDOW_LEAD_CHARS,
    Window,
    bounded_thread_search,
    clip,
    cut_window,
)


def test_window_starts_lead_chars_before_the_match() -> None:
    text = "a" * 1000 + "NEEDLE" + "b" * 1000
    window = cut_window(text, 1000)
    assert (window.start, window.end) == (1000 - WINDOW_LEAD_CHARS, 1000 - WINDOW_LEAD_CHARS + 800)
    assert window.rendered == "…" + text[800:1600] + "…"
    assert len(window.rendered) == WINDOW_CHARS + 2


def test_window_is_clamped_at_the_start_and_shifted_back_at_the_end() -> None:
    text = "x" * 5000
    assert cut_window(text, 10) == Window(0, 800, "x" * 800 + "…")
    assert cut_window(text, 4990) == Window(4200, 5000, "…" + "x" * 800)
    assert cut_window("short text", 6) == Window(0, 10, "short text")


def test_window_covers_only_whole_matches() -> None:
    window = Window(100, 900, "")
    assert window.covers(100, 5) and window.covers(895, 5)
    assert not window.covers(896, 5) and not window.covers(99, 5)


def test_clip() -> None:
    assert clip("abc", 3) == "abc"
    assert clip("abcdef", 4) == "abc…"


def test_acceptance_merge_is_exactly_the_cap_when_cut() -> None:
    literal = "L" * 7_999
    merged = bounded_thread_search("z" * 100_000, literal)
    assert len(merged) == THREAD_SEARCH_MAX_CHARS
    assert literal in merged and merged.startswith(literal + SEP)
    assert merged.endswith("…truncated")


def test_uncut_merge_is_literal_sep_answer() -> None:
    assert bounded_thread_search("answer", "literal") == "literal" + SEP + "answer"
    assert bounded_thread_search("", "literal") == "literal"
    fits = "a" * (THREAD_SEARCH_MAX_CHARS - len(SEP) - 100)
    assert bounded_thread_search("b" * 100, fits) == fits + SEP + "b" * 100


def test_literal_alone_too_long_is_cut_too() -> None:
    merged = bounded_thread_search("answer", "L" * 20_000)
    room = THREAD_SEARCH_MAX_CHARS - len(SEP) - len(MARK)
    assert merged == "L" * room + SEP + MARK
    assert bounded_thread_search("", "L" * 20_000) == merged


def test_public_names() -> None:
    assert recallbox.bounded_thread_search is bounded_thread_search
    assert recallbox.THREAD_SEARCH_MAX_CHARS == 12_000
    assert recallbox.THREAD_LITERAL_MAX_CHARS == 8_000
    assert (recallbox.WINDOW_CHARS, recallbox.WINDOW_LEAD_CHARS) == (800, 200)
    assert (recallbox.MIN_TERM_CHARS, recallbox.LITERAL_COUNT_LIMIT) == (3, 1_000)
    assert recallbox.OTHER_MEMORY_TIMEOUT_S == 2.0


@given(st.text(max_size=15_000), st.text(max_size=15_000))
def test_merge_is_bounded_and_keeps_what_fits(answer: str, literal: str) -> None:
    merged = bounded_thread_search(answer, literal)
    assert len(merged) <= THREAD_SEARCH_MAX_CHARS
    uncut = literal + SEP + answer if answer else literal
    if len(uncut) <= THREAD_SEARCH_MAX_CHARS:
        assert merged == uncut
    else:
        assert len(merged) == THREAD_SEARCH_MAX_CHARS and merged.endswith(MARK)
        if len(literal) + len(SEP) + len(MARK) <= THREAD_SEARCH_MAX_CHARS:
            assert merged.startswith(literal + SEP)


@given(st.text(min_size=1, max_size=3000), st.data())
def test_window_is_at_most_window_chars_and_holds_the_match(text: str, data) -> None:
    offset = data.draw(st.integers(0, len(text) - 1))
    window = cut_window(text, offset)
    assert window.end - window.start == min(len(text), WINDOW_CHARS)
    assert window.covers(offset, 1)
    body = window.rendered.removeprefix("…") if window.start else window.rendered
    body = body.removesuffix("…") if window.end < len(text) else body
    assert body == text[window.start : window.end]
