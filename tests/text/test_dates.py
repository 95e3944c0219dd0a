"""Dates a query names (#21): absolute, month, year and relative dates; never raises."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recallbox.text.dates import (
    MAX_DATE_SPANS,
    DateSpan,
    day_distance,
    may_need_anchor,
    query_dates,
)

NOW = datetime(2023, 10, 20, 15, 0, tzinfo=UTC)  # a Friday


def span(a: str, b: str | None = None) -> DateSpan:
    return DateSpan(date.fromisoformat(a), date.fromisoformat(b or a))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What painting did Melanie show on October 13, 2023?", [span("2023-10-13")]),
        ("What did Gina find on 1 February, 2023?", [span("2023-02-01")]),
        ("the 5th of May, 2023", [span("2023-05-05")]),
        ("deploy notes 2023-05-08", [span("2023-05-08")]),
        ("Sept 3rd 2022", [span("2022-09-03")]),
        ("What happened in July 2022?", [span("2022-07-01", "2022-07-31")]),
        ("in May of 2023", [span("2023-05-01", "2023-05-31")]),
        ("When did Melanie go camping in June?", [span("2023-06-01", "2023-06-30")]),
        ("in November", [span("2022-11-01", "2022-11-30")]),  # the latest November ≤ now
        ("on 14 August", [span("2023-08-14")]),
        ("on December 25", [span("2022-12-25")]),
        (
            "How many times has Melanie gone to the beach in 2023?",
            [span("2023-01-01", "2023-12-31")],
        ),
        ("the week before August 3, 2023", [span("2023-08-03")]),  # anchored, not relative
        ("What did we do yesterday?", [span("2023-10-19")]),
        ("today", [span("2023-10-20")]),
        ("three days ago", [span("2023-10-17")]),
        ("last month", [span("2023-09-01", "2023-09-30")]),
        ("this year", [span("2023-01-01", "2023-12-31")]),
        ("last year", [span("2022-01-01", "2022-12-31")]),
        ("last week", [span("2023-10-09", "2023-10-15")]),
        ("last friday", [span("2023-10-13")]),
        ("last weekend", [span("2023-10-14", "2023-10-15")]),
        ("May I ask about March?", []),  # the verb and a bare month word
        ("we march on", []),
        ("it took 3000 steps", []),
        ("version 1.2023.4", []),
        ("", []),
    ],
)
def test_table(query: str, expected: list[DateSpan]) -> None:
    assert list(query_dates(query, now=NOW)) == expected


def test_without_now_only_fully_dated_spans() -> None:
    assert query_dates("on 14 August and in June, yesterday", now=None) == ()
    assert query_dates("on 14 August 2021") == (span("2021-08-14"),)


def test_an_impossible_day_is_no_date() -> None:
    assert query_dates("February 30, 2023", now=NOW) == ()


def test_a_naive_now_is_read_as_its_own_date() -> None:
    assert query_dates("yesterday", now=datetime(2024, 1, 1)) == (span("2023-12-31"),)


def test_day_distance() -> None:
    spans = (span("2023-05-01", "2023-05-31"), span("2023-07-04"))
    assert day_distance(date(2023, 5, 10), spans) == 0
    assert day_distance(date(2023, 6, 2), spans) == 2
    assert day_distance(date(2023, 7, 1), spans) == 3
    assert day_distance(date(2023, 7, 1), ()) is None


@given(st.text(max_size=300), st.none() | st.datetimes(timezones=st.just(UTC)))
def test_never_raises_and_spans_are_well_formed(query: str, now: datetime | None) -> None:
    spans = query_dates(query, now=now)
    assert len(spans) <= MAX_DATE_SPANS
    assert len(set(spans)) == len(spans)
    assert all(s.first <= s.last and s.days >= 1 for s in spans)


@given(st.dates(min_value=date(1950, 1, 1), max_value=date(2090, 12, 31)))
def test_every_written_day_is_read_back(day: date) -> None:
    for text in (
        day.isoformat(),
        f"{day:%B} {day.day}, {day.year}",
        f"{day.day} {day:%B} {day.year}",
    ):
        assert query_dates(f"what happened on {text}?") == (DateSpan(day, day),)


@given(
    st.text(max_size=80)
    | st.sampled_from(["in May", "3 days ago", "last week", "on 14 August", "Tuesday"])
)
def test_a_query_that_needs_no_anchor_reads_the_same_dates_whatever_now(query: str) -> None:
    if may_need_anchor(query):
        return
    early, late = datetime(2001, 2, 3, tzinfo=UTC), datetime(2031, 7, 9, tzinfo=UTC)
    assert query_dates(query, now=early) == query_dates(query, now=late) == query_dates(query)


# pieces of queries near the anchor words: month and weekday names glued to letters, digits
# and punctuation (``Mayor``, ``nov.5``, ``3rd of Dec``), which the anchor check must judge
# exactly as the parsers read them
_PIECE_WORDS = [
    "May",
    "may",
    "Nov",
    "novu",
    "Dec",
    "decide",
    "mar",
    "marker",
    "Sun",
    "sunday",
    "Mon",
    "ago",
    "weekend",
    "weekends",
    "today",
    "yesterday",
    "last",
    "week",
    "month",
    "in",
    "on",
    "the",
    "of",
    "5",
    "5th",
    "2024",
    "x",
    "st",
    "this",
    "past",
    "year",
    "weeks",
    "day",
    "two",
    "Friday",
    "fridays",
    "Sept",
    "September",
]
_PIECES = st.sampled_from([*_PIECE_WORDS, ""])
_GLUE = st.sampled_from([" ", "", ".", ",", "-", "/", ":"])


@settings(max_examples=400)
@given(st.lists(st.tuples(_PIECES, _GLUE), max_size=8))
def test_glued_date_words_need_the_anchor_only_when_read_as_dates(
    pieces: list[tuple[str, str]],
) -> None:
    query = "".join(word + glue for word, glue in pieces)
    if may_need_anchor(query):
        return
    early, late = datetime(2001, 2, 3, tzinfo=UTC), datetime(2031, 7, 9, tzinfo=UTC)
    assert query_dates(query, now=early) == query_dates(query, now=late) == query_dates(query)


def test_relative_and_partial_dates_need_the_anchor() -> None:
    for query in ("what happened yesterday", "two weeks ago", "last month", "in May", "on Friday"):
        assert may_need_anchor(query)
    assert not may_need_anchor("what is the deploy key")
    # "last weekend" is a relative date (it was missed when the check first read whole words)
    assert may_need_anchor("What event did John volunteer at last weekend?")
    # a word that merely starts like a month or weekday names none (no per-thread read)
    for query in ("novu zibo warning", "we decide on the mayor", "marker sundays"):
        assert not may_need_anchor(query)
