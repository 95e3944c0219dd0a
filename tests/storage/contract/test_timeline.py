"""ThreadStore's bounded audit reads for the inspector's timeline (#20): per-generation spans
and one slice of a generation, checked against the whole-thread audit read."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recallbox.storage.base import Store

from .helpers import add, row

BASE = datetime(2026, 1, 1, tzinfo=UTC)
#: One step of a thread: (opens a generation with a compaction summary?, seconds after BASE,
#: extra characters of text). Times are not in append order, so spans are real min/max.
STEPS = st.lists(
    st.tuples(st.booleans(), st.integers(0, 10**7), st.integers(0, 30)), max_size=24
)


def _build(store: Store, channel: str, steps: list[tuple[bool, int, int]]) -> None:
    store.ensure_thread(channel, None)
    for n, (compact, seconds, extra) in enumerate(steps):
        stamp = BASE + timedelta(seconds=seconds)
        text = f"step {n} " + "é" * extra
        if compact:
            kind = "compaction_summary"
            store.append(channel, [row(text, role="system", kind=kind, created_at=stamp)])
        else:
            add(store, channel, text, created_at=stamp)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STEPS, st.integers(1, 5), st.integers(0, 6), st.integers(1, 4), st.integers(0, 12))
def test_spans_and_slices_agree_with_the_whole_thread(
    store_factory: Callable[[str], Store],
    steps: list[tuple[bool, int, int]],
    first: int,
    width: int,
    limit: int,
    head: int,
) -> None:
    store = store_factory(f"t{uuid.uuid4().hex}")
    _build(store, "ops", steps)
    _build(store, "other", steps[:3])  # another thread's rows never count
    whole = store.messages("ops")
    last = first + width
    spans = store.generation_spans("ops", first, last, head_chars=head)
    wanted = [g for g in store.generations("ops") if first <= g.number <= last]
    assert [s.generation for s in spans] == wanted
    for span in spans:
        mine = [m for m in whole if m.generation == span.generation.number]
        stamps = [m.created_at for m in mine]
        assert span.message_count == len(mine)
        assert (span.first_at, span.last_at) == (min(stamps, default=None), max(stamps, default=None))
        opener = mine[0] if mine and mine[0].kind == "compaction_summary" else None
        if opener is None:
            assert (span.summary_id, span.summary_head, span.summary_chars) == (None, None, 0)
        else:
            assert span.summary_id == opener.id
            assert span.summary_head == opener.content[:head]
            assert span.summary_chars == len(opener.content)
        number = span.generation.number
        sliced = [
            m
            for offset in range(0, len(mine) + limit, limit)
            for m in store.message_slice("ops", number, offset, limit)
        ]
        assert sliced == mine
        assert store.message_slice("ops", number, len(mine), limit) == []


def test_unknown_channels_and_generations_read_as_empty(store: Store) -> None:
    add(store, "ops", "one")
    assert store.generation_spans("nope", 1, 9, head_chars=10) == []
    assert store.generation_spans("ops", 2, 9, head_chars=10) == []
    assert store.message_slice("nope", 1, 0, 5) == []
    assert store.message_slice("ops", 2, 0, 5) == []
    assert store.message_slice("ops", 1, 0, 0) == []
    (span,) = store.generation_spans("ops", 1, 1, head_chars=0)
    assert span.message_count == 1 and span.summary_id is None
