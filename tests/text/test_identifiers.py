"""Identifier segmentation for the code index's *_seg columns."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from recallbox.text.identifiers import segment_code_text, segment_identifier, split_identifier

# Words of two letters or more, digits only at the end: single capitals and digit-capital runs
# (``AB``, ``A1B2``) are ambiguous in PascalCase and SCREAMING_CASE.
WORDS = st.lists(st.from_regex(r"[a-z]{2,6}[0-9]{0,2}", fullmatch=True), min_size=1, max_size=5)


def test_examples() -> None:
    assert split_identifier("search_memory") == ["search", "memory"]
    assert split_identifier("searchMemory") == ["search", "memory"]
    assert split_identifier("SearchMemory") == ["search", "memory"]
    assert split_identifier("SEARCH_MEMORY") == ["search", "memory"]
    assert split_identifier("Box.search_memory") == ["box", "search", "memory"]
    assert split_identifier("HTTPServer") == ["http", "server"]
    assert split_identifier("parseHTTP2Response") == ["parse", "http2", "response"]
    assert split_identifier("utf8Decode") == ["utf8", "decode"]
    assert split_identifier("v2Api") == ["v2", "api"]
    assert split_identifier("crate::util::square") == ["crate", "util", "square"]
    assert split_identifier("__init__") == ["init"]
    assert split_identifier("_") == []
    assert split_identifier("İstanbulCity") == ["istanbul", "city"]  # no combining dot left
    assert segment_identifier("Box.searchMemory") == "box search memory"
    assert segment_code_text("def searchMemory(query: str) -> Hit:") == "def search memory(query: str) -> hit:"


@given(WORDS)
def test_snake_camel_and_pascal_spellings_segment_alike(words: list[str]) -> None:
    snake = "_".join(words)
    camel = words[0] + "".join(word.capitalize() for word in words[1:])
    pascal = "".join(word.capitalize() for word in words)
    dotted = ".".join(words)
    screaming = snake.upper()
    expected = split_identifier(snake)
    assert split_identifier(camel) == expected
    assert split_identifier(pascal) == expected
    assert split_identifier(dotted) == expected
    assert split_identifier(screaming) == expected


@given(st.text(max_size=60))
def test_words_are_the_letters_and_digits_in_order(text: str) -> None:
    words = split_identifier(text)
    assert all(words)
    folded = "".join(char.casefold() for char in text if char.isalnum())
    assert "".join(words) == "".join(char for char in folded if char.isalnum())


@example("A\U0001d6e2")  # a capital without a lower-case form: "a𝛢" must not split again
@given(st.text(max_size=60))
def test_segmenting_is_idempotent(text: str) -> None:
    once = segment_identifier(text)
    assert segment_identifier(once) == once
    code = segment_code_text(text)
    assert segment_code_text(code) == code
