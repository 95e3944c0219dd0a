"""Ranking signals (#21): components, renormalisation of what is missing, bounds."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.ranking.episodes import EpisodeKey
from recallbox.ranking.signals import (
    CONTEXT_NEXT_SHARE,
    CONTEXT_PREVIOUS_SHARE,
    DEFAULT_WEIGHTS,
    PARTICIPANT_OTHER_SHARE,
    SIGNAL_NAMES,
    WEIGHT_EPISODE,
    WEIGHT_NEIGHBOUR,
    Evidence,
    QuerySignals,
    Weights,
    combine,
    components,
    context_similarity,
    date_value,
    participant_value,
    weighted_mean,
)
from recallbox.text.dates import DateSpan

EP = EpisodeKey("g", 1)
DAY = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
NO_SIGNALS = Weights(context=0.0, neighbour=0.0, episode=0.0, participant=0.0, date=0.0)


def test_context_similarity_averages_with_the_neighbours_that_exist() -> None:
    a, b = CONTEXT_PREVIOUS_SHARE, CONTEXT_NEXT_SHARE
    assert context_similarity(0.5, 0.2, 0.8) == pytest.approx(
        (0.5 + a * 0.2 + b * 0.8) / (1 + a + b)
    )
    assert context_similarity(0.5, None, None) == 0.5  # no neighbour: its own similarity
    assert context_similarity(0.5, 0.0, None) == pytest.approx(0.5 / (1 + a))  # not a candidate


def test_components_of_a_small_episode() -> None:
    cands = [
        Evidence("a", 0.9, context=0.7, episode=EP, neighbours=("b",), participant="Ann"),
        Evidence("b", 0.2, context=0.4, episode=EP, neighbours=("a", "c"), participant="Bob"),
        Evidence("c", 0.5, context=None, episode=EpisodeKey("g", 9), neighbours=None),
    ]
    table = components(cands, QuerySignals(participants=("Bob", "Ann")))
    assert table["b"] == {
        "base": 0.2, "context": 0.4, "neighbour": 0.9, "episode": 0.9,
        "episode_doc": None, "participant": 1.0, "date": None,
    }  # fmt: skip
    assert table["a"]["participant"] == PARTICIPANT_OTHER_SHARE and table["a"]["episode"] == 0.9
    assert table["c"]["neighbour"] is None and table["c"]["participant"] == 0.0
    assert table["c"]["episode"] == 0.5  # alone in its episode: its own base


def test_neighbour_evidence_lifts_the_answer_next_to_the_match() -> None:
    question = Evidence("q", 0.8, episode=EP, neighbours=("ans",))
    answer = Evidence("ans", 0.3, episode=EP, neighbours=("q",))
    far = Evidence("far", 0.35, episode=EpisodeKey("g", 50), neighbours=())
    scores = {s.id: s.score for s in combine([question, answer, far], QuerySignals())}
    assert scores["ans"] > scores["far"]
    plain = {
        s.id: s.score for s in combine([question, answer, far], QuerySignals(), weights=NO_SIGNALS)
    }
    assert plain["ans"] < plain["far"]


def test_missing_signals_are_renormalised_away_never_scored_zero() -> None:
    alone = Evidence("x", 0.6)  # no context, no position, no participant, no date
    (scored,) = combine([alone], QuerySignals())
    assert scored.score == pytest.approx(0.6)
    assert scored.components == dict.fromkeys(SIGNAL_NAMES[1:], None) | {"base": 0.6}


def test_a_query_naming_no_date_ranks_as_without_the_date_signal() -> None:
    cands = [
        Evidence("a", 0.7, context=0.1, episode=EP, neighbours=("b",), created_at=DAY),
        Evidence("b", 0.4, context=0.9, episode=EP, neighbours=("a",), created_at=DAY),
    ]
    with_date = combine(cands, QuerySignals())
    without = combine(cands, QuerySignals(), weights=Weights(date=0.0))
    assert [s.score for s in with_date] == [s.score for s in without]


def test_date_and_participant_values() -> None:
    spans = (DateSpan(date(2023, 5, 10), date(2023, 5, 10)),)
    assert date_value(DAY, spans) == 1.0  # two days away, within the tolerance
    assert date_value(datetime(2023, 6, 1, tzinfo=UTC), spans) == 0.0
    assert date_value(DAY, ()) is None and date_value(None, spans) is None
    assert participant_value("ann", ("Ann",)) == 1.0
    assert participant_value("Bob", ()) is None and participant_value(None, ("Ann",)) == 0.0


def test_weighted_mean_matches_combine() -> None:
    cands = [Evidence("a", 0.5, context=0.2, episode=EP, neighbours=(), participant="Ann")]
    (scored,) = combine(cands, QuerySignals(participants=("Ann",)))
    assert weighted_mean(scored.components) == pytest.approx(scored.score)
    expected = (
        0.5
        + DEFAULT_WEIGHTS.context * 0.2
        + WEIGHT_NEIGHBOUR * 0.0
        + WEIGHT_EPISODE * 0.5
        + DEFAULT_WEIGHTS.participant
    ) / (
        1
        + DEFAULT_WEIGHTS.context
        + WEIGHT_NEIGHBOUR
        + WEIGHT_EPISODE
        + DEFAULT_WEIGHTS.participant
    )
    assert scored.score == pytest.approx(expected)


unit = st.floats(allow_nan=True, allow_infinity=True, width=32)
evidence = st.builds(
    Evidence,
    id=st.text(min_size=1, max_size=3),
    base=unit,
    context=st.none() | unit,
    episode=st.none() | st.builds(EpisodeKey, st.sampled_from(["g", "h"]), st.integers(1, 3)),
    neighbours=st.none() | st.lists(st.text(min_size=1, max_size=3), max_size=4).map(tuple),
    participant=st.none() | st.sampled_from(["Ann", "Bob", "user"]),
    created_at=st.none() | st.datetimes(timezones=st.just(UTC)),
)


@given(
    st.lists(evidence, max_size=12, unique_by=lambda e: e.id),
    st.lists(st.sampled_from(["Ann", "Bob", "Cy"]), max_size=3, unique=True).map(tuple),
    st.lists(st.dates().map(lambda d: DateSpan(d, d)), max_size=2).map(tuple),
)
def test_scores_are_bounded_and_every_candidate_is_scored(
    cands: list[Evidence], named: tuple[str, ...], spans: tuple[DateSpan, ...]
) -> None:
    scored = combine(cands, QuerySignals(participants=named, dates=spans))
    assert [s.id for s in scored] == [c.id for c in cands]
    for s in scored:
        assert 0.0 <= s.score <= 1.0
        assert all(v is None or 0.0 <= v <= 1.0 for v in s.values)
        assert s.components["base"] is not None
