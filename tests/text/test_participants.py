"""Participants (#21): a message's ``Name:`` prefix or role; the names a query mentions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.text.participants import (
    MAX_QUERY_PARTICIPANTS,
    name_prefix,
    participant_of,
    participants_of,
    query_participant,
    query_participants,
    same_participant,
)


@pytest.mark.parametrize(
    ("role", "content", "expected"),
    [
        ("user", "Caroline: Hey Mel! Good to see you!", "Caroline"),
        ("assistant", "Mary Ann: hi there", "Mary Ann"),
        ("user", "  Bob: indented", "Bob"),
        ("user", "Dr. Smith: the results", "Dr. Smith"),
        ("user", "Note: this is a label, not a name", "user"),
        ("assistant", "Error: file not found", "assistant"),
        ("user", "hello: lower case is not a name", "user"),
        ("user", "Bob:no space after the colon", "user"),
        ("tool", "no prefix at all", "tool"),
        ("user", "A Very Long Sequence Of Capitalised Words: x", "user"),
        ("user", "X" * 60 + ": too far", "user"),
        ("user", "", "user"),
    ],
)
def test_participant_of(role: str, content: str, expected: str) -> None:
    assert participant_of(role, content) == expected


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        ("What did Caroline tell Melanie?", ["Melanie", "Caroline"], ("Caroline", "Melanie")),
        ("What are Melanie's pets' names?", ["Caroline", "Melanie"], ("Melanie",)),
        ("what did MELANIE say", ["Melanie"], ("Melanie",)),
        ("Where did Mary go?", ["Mary Ann", "Bob"], ("Mary Ann",)),  # the first word counts
        ("Mary Ann and Mary", ["Mary", "Mary Ann"], ("Mary Ann", "Mary")),
        ("What did the user ask?", ["user", "assistant"], ("user",)),
        ("Johnson is not John", ["John"], ("John",)),
        ("Johnson only", ["John"], ()),
        ("nobody here", ["Caroline"], ()),
        ("", ["Caroline"], ()),
    ],
)
def test_query_participants(query: str, names: list[str], expected: tuple[str, ...]) -> None:
    assert query_participants(query, names) == expected
    assert query_participant(query, names) == (expected[0] if expected else None)


def test_same_participant_ignores_case_and_nothing_matches_nothing() -> None:
    assert same_participant("Caroline", "caroline")
    assert not same_participant(None, None) and not same_participant("", "")


@given(st.text(max_size=200), st.lists(st.text(max_size=20), max_size=10))
def test_never_raises(query: str, names: list[str]) -> None:
    named = query_participants(query, names)
    assert len(named) <= MAX_QUERY_PARTICIPANTS
    assert set(named) <= {n.strip() for n in names}
    participant_of("user", query)
    name_prefix(query)


@given(
    st.lists(st.tuples(st.sampled_from(["user", "assistant"]), st.text(max_size=60)), max_size=20)
)
def test_participants_of_is_participant_of_each(pairs: list[tuple[str, str]]) -> None:
    assert participants_of(pairs) == [participant_of(role, text) for role, text in pairs]
