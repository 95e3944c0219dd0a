"""EpisodeReads (#21): where episodes start, the newest time, the messages around a hit; and
the positions ``search_rows`` returns and the candidates' heads. The pure reference is
``ranking.episodes``."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.storage.conftest import StoreFactory

from recallbox.ranking.episodes import EPISODE_GAP, episode_starts, starts_from_breaks
from recallbox.storage.base import EVERYTHING, SearchFilter, Store
from recallbox.storage.values import GenerationSpan

from .helpers import DENIALS, deny, row, stored

T0 = datetime(2024, 1, 1, tzinfo=UTC)
GAP = EPISODE_GAP.total_seconds()
_names = itertools.count()
steps = st.lists(
    st.sampled_from([0, 60, 3599, 3600, 3601, 7200, 86_400 * 3, -60, -7200]),
    min_size=1,
    max_size=30,
)


def timed(store: Store, channel: str, times: list[datetime], **fields: object) -> list[str]:
    rows = [row(f"m{i}", created_at=t, **fields) for i, t in enumerate(times)]
    return [m.id for m in store.append(channel, rows)]


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps, st.integers(0, 35), st.integers(0, 35))
def test_episode_breaks_equal_the_pure_cut(
    store_factory: StoreFactory, gaps: list[int], lo: int, width: int
) -> None:
    store = store_factory(f"breaks{next(_names)}")
    times = list(itertools.accumulate((timedelta(seconds=s) for s in gaps), initial=T0))[1:]
    store.append("t", [row(f"m{i}", created_at=t) for i, t in enumerate(times)])
    messages = store.messages("t")
    generation = messages[0].generation_id
    span = GenerationSpan(generation, lo + 1, lo + 1 + width)
    found = store.episode_breaks([span], gap_seconds=GAP, where=EVERYTHING)
    points = [(m.seq, m.created_at) for m in messages if span.first <= m.seq <= span.last]
    if not points:
        assert found == {}
        return
    got = found[generation]
    assert (got.first, got.last) == (points[0][0], points[-1][0])
    assert starts_from_breaks(got.first, got.last, got.starts) == episode_starts(points)


def test_episode_breaks_count_hidden_messages_and_merge_spans(store: Store) -> None:
    hour = timedelta(hours=2)
    store.append("t", [row("a", created_at=T0), row("b", created_at=T0 + hour, pending=True)])
    store.append("t", [row("c", created_at=T0 + hour), row("d", created_at=T0 + 2 * hour)])
    generation = store.messages("t")[0].generation_id
    spans = [GenerationSpan(generation, 1, 2), GenerationSpan(generation, 3, 4)]
    found = store.episode_breaks(spans, gap_seconds=GAP, where=EVERYTHING)[generation]
    assert (found.first, found.last) == (1, 4)
    assert found.starts == (1, 2, 3, 4)  # a span's first row starts one: the scan's edge
    whole = store.episode_breaks(
        [GenerationSpan(generation, 1, 4)], gap_seconds=GAP, where=EVERYTHING
    )
    assert whole[generation].starts == (1, 2, 4)  # the pending message cuts by time too


@pytest.mark.parametrize("how", DENIALS)
def test_denied_threads_have_no_breaks_time_or_neighbours(store: Store, how: str) -> None:
    secret = timed(store, "secret", [T0, T0 + timedelta(minutes=1)])
    timed(store, "open", [T0 - timedelta(days=1)])
    generation = store.messages("secret")[0].generation_id
    where = deny(store, "secret", how)
    span = [GenerationSpan(generation, 1, 5)]
    assert store.episode_breaks(span, gap_seconds=GAP, where=where) == {}
    assert store.newest_created_at(where=where) == T0 - timedelta(days=1)
    assert (
        store.newest_created_at(where=SearchFilter(channel="secret", excluded=where.excluded))
        is None
    )
    assert store.adjacent_rows(secret, 1, where=where) == {}
    if stored(how):
        assert store.episode_breaks(span, gap_seconds=GAP, where=EVERYTHING) == {}


def test_newest_created_at_is_of_the_last_messages(store: Store) -> None:
    assert store.newest_created_at(where=EVERYTHING) is None
    timed(store, "a", [T0, T0 + timedelta(days=3)])
    timed(store, "b", [T0 + timedelta(days=1)])
    assert store.newest_created_at(where=EVERYTHING) == T0 + timedelta(days=3)
    assert store.newest_created_at(where=SearchFilter(channel="b")) == T0 + timedelta(days=1)
    assert store.newest_created_at(where=SearchFilter(channel="nope")) is None


def test_adjacent_rows_are_the_visible_messages_around(store: Store) -> None:
    minute = timedelta(minutes=1)
    ids = timed(store, "t", [T0 + i * minute for i in range(3)])
    (hidden,) = timed(store, "t", [T0 + 3 * minute], pending=True)
    after = timed(store, "t", [T0 + 4 * minute, T0 + 5 * minute])
    (alone,) = timed(store, "u", [T0])
    found = store.adjacent_rows([ids[2], alone, hidden, "m_unknown"], 2, where=EVERYTHING)
    assert set(found) == {ids[2], alone}  # a hidden or unknown id is absent
    around = found[ids[2]]
    assert [r.id for r in around] == [ids[0], ids[1], after[0]]  # the pending one skipped
    assert [r.seq for r in around] == [1, 2, 5]
    assert {r.generation for r in around} == {store.messages("t")[0].generation_id}
    assert around[0].created_at == T0 and around[0].content == "m0" and around[0].channel == "t"
    assert found[alone] == ()
    assert store.adjacent_rows([], 2, where=EVERYTHING) == {}
    narrowed = store.adjacent_rows([ids[1]], 1, where=SearchFilter(channel="u"))
    assert narrowed == {}


def test_search_rows_place_each_message(store: Store) -> None:
    first = timed(store, "t", [T0, T0])
    store.append("t", [row("summary", role="system", kind="compaction_summary")])
    (later,) = timed(store, "t", [T0])
    messages = {m.id: m for m in store.messages("t")}
    found = store.search_rows([*first, later], where=EVERYTHING)
    for rid in (*first, later):
        assert (found[rid].generation, found[rid].seq) == (
            messages[rid].generation_id,
            messages[rid].seq,
        )
    assert found[first[0]].generation != found[later].generation


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.text(min_size=1, max_size=90), st.booleans(), st.sampled_from("ab")),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 60),
    st.sampled_from([None, "a", "b"]),
)
def test_search_heads_are_the_rows_with_their_texts_cut(
    store_factory: StoreFactory,
    texts: list[tuple[str, bool, str]],
    lead: int,
    channel: str | None,
) -> None:
    store = store_factory(f"heads{next(_names)}")
    ids = []
    for n, (text, pending, thread) in enumerate(texts):
        (message,) = store.append(
            thread, [row(text or "x", created_at=T0 + timedelta(seconds=n), pending=pending)]
        )
        ids.append(message.id)
    where = SearchFilter(channel=channel)
    full = store.search_rows([*ids, "m_unknown"], where=where)
    heads = store.search_heads([*ids, "m_unknown"], lead=lead, where=where)
    assert set(heads) == set(full)  # the same visibility and filter
    for rid, whole in full.items():
        assert heads[rid].content == whole.content[:lead]
        assert heads[rid] == replace(whole, content=heads[rid].content)
    assert store.search_heads([], lead=lead, where=where) == {}
