"""Which stretches of a thread the ranking signals read (#21): bounded by the candidates."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.signal_inputs import EPISODE_SCAN_RADIUS, timeline_spans
from recallbox.ranking.episodes import NEIGHBOUR_WINDOW
from recallbox.storage.values import GenerationSpan


def test_close_candidates_share_a_stretch_far_ones_do_not() -> None:
    far = 10 + EPISODE_SCAN_RADIUS + 1
    spans = timeline_spans(
        [("g", 10), ("g", 12), ("g", 10 + EPISODE_SCAN_RADIUS), ("g", 900), ("h", 3)]
    )
    w = NEIGHBOUR_WINDOW
    assert spans == [
        GenerationSpan("g", 10 - w, 10 + EPISODE_SCAN_RADIUS + w),
        GenerationSpan("g", 900 - w, 900 + w),
        GenerationSpan("h", 3 - w, 3 + w),
    ]
    assert timeline_spans([("g", 10), ("g", far + EPISODE_SCAN_RADIUS)])[0].last == 10 + w


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(1, 3_000)), max_size=60))
def test_every_candidate_is_read_with_its_neighbours_and_the_reads_stay_bounded(
    places: list[tuple[str, int]],
) -> None:
    spans = timeline_spans(places)
    for generation, seq in places:
        assert any(
            s.generation == generation
            and s.first <= max(0, seq - NEIGHBOUR_WINDOW)
            and seq + NEIGHBOUR_WINDOW <= s.last
            for s in spans
        )
    read = sum(s.last - s.first + 1 for s in spans)
    assert read <= len(set(places)) * (EPISODE_SCAN_RADIUS + 2 * NEIGHBOUR_WINDOW + 1)
    for a, b in itertools.pairwise(spans):
        assert (a.generation, a.last) < (b.generation, b.first)
