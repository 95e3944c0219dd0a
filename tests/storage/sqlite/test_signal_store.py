"""The SQLite side of the ranking signals (#21): episode breaks in SQL equal the pure cut."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.ranking.episodes import (
    EPISODE_GAP,
    episode_starts,
    starts_from_breaks,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
gaps = st.lists(
    st.sampled_from([0, 60, 3599, 3600, 3601, 7200, 86_400 * 3, -60, -7200]),
    min_size=1,
    max_size=40,
)


@settings(max_examples=25)
@given(gaps, st.integers(0, 45), st.integers(0, 45))
def test_sql_breaks_equal_the_pure_episode_cut(
    tmp_path_factory: object, steps: list[int], lo: int, width: int
) -> None:
    path = Path(tmp_path_factory.mktemp("eb")) / "x.db"  # type: ignore[attr-defined]
    times, at = [], T0
    for step in steps:
        at = at + timedelta(seconds=step)
        times.append(at)
    with recallbox.open(path) as box:
        msgs = box.append_many(
            "t",
            [{"role": "user", "content": f"m{i}", "created_at": t} for i, t in enumerate(times)],
        )
        generation = msgs[0].generation_id
        first, last = lo + 1, lo + 1 + width
        found = box.store.episode_breaks(  # type: ignore[attr-defined]
            [(generation, first, last)], gap_seconds=EPISODE_GAP.total_seconds()
        )
        timeline = box.store.message_timelines([(generation, first, last)])  # type: ignore[attr-defined]
    points = [(m.seq, m.created_at) for m in msgs if first <= m.seq <= last]
    if not points:
        assert found == {} and timeline == {}
        return
    assert list(timeline[generation]) == points
    assert starts_from_breaks(*found[generation]) == episode_starts(points)


def test_breaks_and_newest_respect_quarantine(tmp_path: Path) -> None:
    with recallbox.open(tmp_path / "q.db") as box:
        (m,) = box.append_many("secret", [{"role": "user", "content": "x", "created_at": T0}])
        box.append_many(
            "open", [{"role": "user", "content": "y", "created_at": T0 - timedelta(days=1)}]
        )
        box.quarantine("secret")
        store = box.store
        assert store.episode_breaks([(m.generation_id, 1, 5)], gap_seconds=1.0) == {}  # type: ignore[attr-defined]
        assert store.newest_created_at(None) == T0 - timedelta(days=1)  # type: ignore[attr-defined]
        assert store.newest_created_at("secret") is None  # type: ignore[attr-defined]
