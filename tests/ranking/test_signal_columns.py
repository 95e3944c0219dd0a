"""The vectorised signal step equals its pure-Python definition, float for float (#21)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recallbox.ranking import signal_columns
from recallbox.ranking.signal_columns import (
    Columns,
    ColumnScores,
    score_columns,
    score_columns_numpy,
    score_columns_reference,
)
from recallbox.ranking.signals import SIGNAL_NAMES, QuerySignals, Weights
from recallbox.storage.values import EpisodeBreaks
from recallbox.text.dates import DateSpan

T0 = datetime(2023, 5, 1, 12, tzinfo=UTC)
GENERATIONS = ("g_a", "g_b", "g_c")
PEOPLE = ("Ann", "Bob", "user", "assistant")


@st.composite
def searches(draw: st.DrawFn) -> tuple[Columns, dict[str, EpisodeBreaks], QuerySignals, bool]:
    places = draw(
        st.lists(
            st.tuples(st.sampled_from(GENERATIONS), st.integers(1, 40)),
            min_size=0,
            max_size=40,
            unique=True,
        )
    )
    n = len(places)
    score = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 1.0, 1.5, -0.2, math.nan]))
    base = draw(st.lists(score, min_size=n, max_size=n))
    vector = draw(st.lists(st.one_of(st.none(), st.floats(0.0, 1.0)), min_size=n, max_size=n))
    people = draw(st.lists(st.sampled_from(PEOPLE), min_size=n, max_size=n))
    days = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    phrases = draw(st.integers(0, 3))
    counts = st.lists(st.integers(0, 3), min_size=phrases, max_size=phrases).map(tuple)
    freqs = draw(st.none() | st.lists(st.none() | counts, min_size=n, max_size=n))
    breaks: dict[str, EpisodeBreaks] = {}
    for g in GENERATIONS:
        if draw(st.booleans()):
            first = draw(st.integers(0, 20))
            last = first + draw(st.integers(0, 30))
            starts = draw(st.lists(st.integers(-3, 60), max_size=6))
            breaks[g] = EpisodeBreaks(first, last, tuple(sorted({first, *starts})))
    cols = Columns(
        ids=[f"m{i:03d}" for i in range(n)],
        base=base,
        vector=vector,
        generation=[g for g, _ in places],
        seq=[s for _, s in places],
        participant=people,
        created_at=[T0 + timedelta(days=d) for d in days],
        freqs=freqs,
    )
    named = draw(st.lists(st.sampled_from(PEOPLE), max_size=2, unique=True))
    dated = draw(st.lists(st.integers(0, 9), max_size=2))
    spans = tuple(
        DateSpan((T0 + timedelta(days=d)).date(), (T0 + timedelta(days=d)).date()) for d in dated
    )
    return cols, breaks, QuerySignals(tuple(named), spans), draw(st.booleans())


weights = st.builds(
    Weights,
    context=st.sampled_from([0.0, 0.6]),
    episode_doc=st.sampled_from([0.0, 0.4]),
    neighbour=st.sampled_from([0.0, 0.6, 1.3]),
    episode=st.sampled_from([0.0, 0.6]),
    participant=st.sampled_from([0.0, 0.3]),
    date=st.sampled_from([0.0, 0.5]),
)


def _same(a: ColumnScores, b: ColumnScores) -> None:
    assert list(a.ids) == list(b.ids)
    assert list(a.score) == list(b.score)  # identical floats, not approximately
    for x, y in zip(a.components, b.components, strict=True):
        assert [None if v != v else v for v in x] == [None if v != v else v for v in y]


@settings(max_examples=300)
@given(searches(), weights, st.sampled_from([1, 2, 3]))
def test_numpy_path_equals_the_reference(
    search: tuple[Columns, dict[str, EpisodeBreaks], QuerySignals, bool],
    w: Weights,
    window: int,
) -> None:
    cols, breaks, query, vector_leg = search
    fast = score_columns_numpy(cols, breaks, query, vector_leg=vector_leg, weights=w, window=window)
    slow = score_columns_reference(
        cols, breaks, query, vector_leg=vector_leg, weights=w, window=window
    )
    _same(fast, slow)
    for i in range(len(cols.ids)):
        assert 0.0 <= fast.score[i] <= 1.0
        assert fast.scored(i) == slow.scored(i)


def test_without_numpy_the_reference_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    cols = Columns(
        ["a", "b"], [0.9, 0.2], [0.5, None], ["g", "g"], [1, 2], ["Ann", "Bob"], [T0, T0]
    )
    breaks = {"g": EpisodeBreaks(1, 2, (1,))}
    query = QuerySignals(("Bob",), ())
    with_numpy = score_columns(cols, breaks, query, vector_leg=True)
    monkeypatch.setattr(signal_columns, "HAS_NUMPY", False)
    _same(score_columns(cols, breaks, query, vector_leg=True), with_numpy)
    b = with_numpy.scored(1)
    assert b.components["neighbour"] == 0.9 and b.components["context"] is None
    assert b.components["participant"] == 1.0 and b.components["date"] is None
    assert len(b.values) == len(SIGNAL_NAMES)


def test_an_empty_search_scores_nothing() -> None:
    empty = Columns([], [], [], [], [], [], [])
    for scorer in (score_columns_numpy, score_columns_reference):
        result = scorer(empty, {}, QuerySignals(), vector_leg=True)
        assert list(result.score) == [] and len(result.components) == len(SIGNAL_NAMES)
