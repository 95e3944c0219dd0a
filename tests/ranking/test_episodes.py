"""Episodes and neighbours (#21): created_at gaps, seq holes, one message, one long sitting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from recallbox.ranking.episodes import (
    EPISODE_GAP,
    NEIGHBOUR_WINDOW,
    EpisodeKey,
    Position,
    Timeline,
    episode_keys,
    episode_starts,
    has_neighbours,
    neighbours,
    timeline_starts,
)

T0 = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def test_a_gap_over_episode_gap_starts_a_new_episode() -> None:
    points = [(1, at(0)), (2, at(5)), (3, at(5) + EPISODE_GAP + timedelta(seconds=1)), (4, at(70))]
    assert episode_starts(points) == {1: 1, 2: 1, 3: 3, 4: 3}


def test_a_gap_of_exactly_episode_gap_stays_in_the_episode() -> None:
    assert episode_starts([(1, at(0)), (2, at(0) + EPISODE_GAP)]) == {1: 1, 2: 1}


def test_a_thread_without_gaps_is_one_episode_and_order_does_not_matter() -> None:
    points = [(seq, at(seq)) for seq in range(1, 200)]
    assert set(episode_starts(list(reversed(points))).values()) == {1}


def test_a_hole_in_seq_breaks_the_episode() -> None:
    assert episode_starts([(1, at(0)), (2, at(1)), (5, at(2))]) == {1: 1, 2: 1, 5: 5}


def test_naive_and_aware_times_are_not_known_to_be_close() -> None:
    assert episode_starts([(1, at(0)), (2, datetime(2024, 3, 1, 9, 1))]) == {1: 1, 2: 2}


def test_keys_and_neighbours_inside_the_episode_only() -> None:
    points = (*tuple((s, at(s)) for s in range(1, 8)), (8, at(500)), (9, at(501)))
    starts = timeline_starts([Timeline("g", points)])
    pos = {f"m{s}": Position("g", s, at(s)) for s in (2, 3, 5, 7, 8, 9)}
    keys = episode_keys(pos, starts)
    assert keys["m2"] == keys["m7"] == EpisodeKey("g", 1) and keys["m8"] == EpisodeKey("g", 8)
    near = neighbours(pos, keys, window=2)
    assert near["m3"] == ("m2", "m5")  # nearest first: 2 (−1), then 5 (+2)
    assert near["m7"] == ("m5",)  # 8 is one seq away but in the next episode
    assert near["m8"] == ("m9",)


def test_a_position_the_timeline_does_not_cover_is_its_own_episode() -> None:
    pos = {"a": Position("g", 10, at(0)), "b": Position("other", 3, at(0))}
    keys = episode_keys(pos, {"g": {1: 1}})
    assert keys == {"a": EpisodeKey("g", 10), "b": EpisodeKey("other", 3)}
    assert neighbours(pos, keys) == {"a": (), "b": ()}


def test_a_lone_message_has_no_neighbours() -> None:
    starts = timeline_starts([Timeline("g", ((1, at(0)),))])
    assert not has_neighbours(Position("g", 1, at(0)), starts)
    starts = timeline_starts([Timeline("g", ((1, at(0)), (2, at(1))))])
    assert has_neighbours(Position("g", 1, at(0)), starts)


@given(
    st.lists(st.tuples(st.integers(1, 60), st.integers(0, 10_000)), max_size=60),
    st.integers(0, 4),
)
def test_neighbours_are_symmetric_close_and_in_one_episode(
    raw: list[tuple[int, int]], window: int
) -> None:
    points = [(seq, at(minute)) for seq, minute in raw]
    starts = timeline_starts([Timeline("g", tuple(points))])
    pos = {f"m{seq}": Position("g", seq, t) for seq, t in dict(points).items()}
    keys = episode_keys(pos, starts)
    near = neighbours(pos, keys, window=window)
    for rid, others in near.items():
        for other in others:
            assert rid in near[other]
            assert 0 < abs(pos[rid].seq - pos[other].seq) <= window
            assert keys[rid] == keys[other]
    assert NEIGHBOUR_WINDOW >= 1
