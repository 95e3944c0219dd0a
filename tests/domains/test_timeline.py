"""``Box.thread_timeline`` (#20): a window of generations and one page of messages, the same
as cutting the whole-thread audit read, and its argument checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recallbox
from recallbox import InvalidArgument, NotFound
from recallbox.domains.timeline import TIMELINE_WINDOW, window_of


@given(st.integers(1, 200), st.data())
def test_windows_tile_the_generations_back_from_the_newest(total: int, data: st.DataObject) -> None:
    selected = data.draw(st.integers(1, total))
    first, last = window_of(selected, total)
    assert 1 <= first <= selected <= last <= total
    assert last - first + 1 == TIMELINE_WINDOW or first == 1
    assert (total - last) % TIMELINE_WINDOW == 0  # the newest window is full, older ones follow
    if last < total:  # the next window starts right after this one
        assert window_of(last + 1, total)[0] == last + 1
    if first > 1:
        assert window_of(first - 1, total)[1] == first - 1


def _thread(box: recallbox.Box, generations: int, per: int) -> None:
    for g in range(generations):
        if g:
            box.compact("ops", f"summary {g} " + "x" * 50)
        box.append_many("ops", [{"role": "user", "content": f"g{g} m{n}"} for n in range(per)])


def test_the_timeline_is_the_whole_thread_cut_into_bounded_pieces(box: recallbox.Box) -> None:
    _thread(box, TIMELINE_WINDOW + 5, 7)
    whole = box.messages("ops")
    now = box.thread_timeline("ops", page_size=3)
    total = TIMELINE_WINDOW + 5
    assert now.selected == total and [s.generation.number for s in now.spans] == list(
        range(6, total + 1)
    )
    assert (now.earlier, now.later) == (5, None)
    older = box.thread_timeline("ops", 2, page_size=3, head_chars=10)
    assert [s.generation.number for s in older.spans] == [1, 2, 3, 4, 5]
    assert (older.earlier, older.later) == (None, 6)
    mine = [m for m in whole if m.generation == 2]
    assert older.selected_span.message_count == len(mine) == 8  # the summary and 7 messages
    assert older.selected_span.summary_id == mine[0].id
    assert older.selected_span.summary_head == mine[0].content[:10]
    pages = [box.thread_timeline("ops", 2, p, page_size=3).messages for p in (1, 2, 3)]
    assert older.pages == 3 and [m for page in pages for m in page] == mine
    assert box.thread_timeline("ops", 1).spans[0].summary_id is None


def test_bad_arguments_are_refused(box: recallbox.Box) -> None:
    _thread(box, 2, 2)
    with pytest.raises(NotFound):
        box.thread_timeline("nope")
    with pytest.raises(NotFound):
        box.thread_timeline("ops", 3)
    with pytest.raises(NotFound):
        box.thread_timeline("ops", 1, 2)  # 2 messages: one page
    for bad in ({"page": 0}, {"page_size": 0}, {"page_size": 10**6}, {"head_chars": -1}):
        with pytest.raises(InvalidArgument):
            box.thread_timeline("ops", 1, **bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        box.thread_timeline("ops", 0)
    with pytest.raises(InvalidArgument):
        box.thread_timeline("")


def test_an_empty_thread_has_one_empty_page(box: recallbox.Box) -> None:
    box.create_thread("empty")
    timeline = box.thread_timeline("empty")
    assert (timeline.selected, timeline.pages, timeline.messages) == (1, 1, [])
    assert timeline.selected_span.message_count == 0 and timeline.selected_span.first_at is None
