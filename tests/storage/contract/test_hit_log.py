"""HitLog: rows that never wait for the write lock, rotation below the watermarks, statistics."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from recallbox.storage.base import CORPUS_MESSAGE, HitRow, Store

from .helpers import add

NOW = datetime(2025, 11, 30, 12, 0, tzinfo=UTC)


def hit(target: str, *, domain: str = "sessions", query: str = "q") -> HitRow:
    return HitRow(NOW, domain, target, query=query, layer="keyword", event="e1")


def drill(target: str, *, domain: str = "sessions") -> HitRow:
    return HitRow(NOW, domain, target, verb="read_message")


def test_rows_are_appended_and_found(store: Store) -> None:
    assert store.hit_high_water() == 0
    assert store.append_hit_rows([hit("m_1"), hit("m_2"), drill("m_1")])
    assert store.hit_recorded("sessions", "m_1") and store.hit_recorded("sessions", "m_2")
    assert not store.hit_recorded("memory", "m_1") and not store.hit_recorded("sessions", "m_3")
    assert store.append_hit_rows([drill("m_3")])
    assert not store.hit_recorded("sessions", "m_3")  # a drill is not a hit row
    assert store.hit_high_water() >= 4
    assert store.append_hit_rows([])  # nothing to write is fine


def test_watermarks_only_move_forward(store: Store) -> None:
    assert store.hit_watermark("decay") == 0
    store.advance_hit_watermark("decay", 7)
    store.advance_hit_watermark("decay", 3)
    assert store.hit_watermark("decay") == 7 and store.hit_watermark("embed") == 0


def test_rotation_deletes_only_what_every_consumer_has_read(store: Store) -> None:
    store.append_hit_rows([hit(f"m_{i}") for i in range(10)])
    newest = store.hit_high_water()
    store.append_hit_rows([], keep_rows=3)
    assert store.hit_stats(top=5, max_rows=3).rows == 10  # no consumer ran: all kept
    store.advance_hit_watermark("decay", newest)
    store.append_hit_rows([], keep_rows=3)
    held = store.hit_stats(top=5, max_rows=3)
    assert held.rows == 10 and held.held == 7  # the lazy embedding pass has read nothing
    store.advance_hit_watermark("embed", newest - 5)
    store.append_hit_rows([], keep_rows=3)
    stats = store.hit_stats(top=5, max_rows=3)
    assert stats.rows == 5 and stats.held == 2  # rows 1-5 went; 6 and 7 wait for `embed`
    store.advance_hit_watermark("embed", newest)
    store.append_hit_rows([hit("m_new")], keep_rows=3)
    stats = store.hit_stats(top=5, max_rows=3)
    assert stats.rows == 3 and stats.held == 0
    assert stats.watermarks == {"decay": newest, "embed": newest}


def test_statistics(store: Store) -> None:
    ids = [m.id for m in add(store, "ops", "one", "two", "three")]
    store.append_hit_rows(
        [hit(ids[0]), hit(ids[0]), hit(ids[1]), drill(ids[0]), hit("k1", domain="memory")],
        dropped=4,
    )
    store.append_hit_rows([], dropped=1)
    stats = store.hit_stats(top=2, max_rows=1_000)
    assert (stats.rows, stats.hit_rows, stats.drill_rows, stats.dropped) == (5, 4, 1, 5)
    by_domain = {d.domain: (d.hits, d.drills, d.targets) for d in stats.domains}
    assert by_domain == {"memory": (1, 0, 1), "sessions": (3, 1, 2)}
    assert [(t.target_id, t.hits, t.drills) for t in stats.most_recalled] == [
        (ids[0], 2, 1),
        ("k1", 1, 0),
    ]
    never = {n.corpus: n for n in stats.never_recalled}
    assert never[CORPUS_MESSAGE].count == 1 and never[CORPUS_MESSAGE].examples == (ids[2],)
    assert not any(n.capped for n in stats.never_recalled)


def test_never_recalled_counts_stop_at_the_limit(store: Store) -> None:
    ids = [m.id for m in add(store, "ops", *(f"row {n}" for n in range(6)))]
    store.append_hit_rows([hit(ids[0]), drill(ids[1])])  # a drill is not a recall
    whole = {n.corpus: n for n in store.hit_stats(top=1, max_rows=100).never_recalled}
    assert whole[CORPUS_MESSAGE].count == 5 and not whole[CORPUS_MESSAGE].capped
    for limit, count, capped in ((2, 2, True), (5, 5, True), (6, 5, False), (50, 5, False)):
        stats = store.hit_stats(top=1, max_rows=100, never_limit=limit)
        got = {n.corpus: n for n in stats.never_recalled}
        assert (got[CORPUS_MESSAGE].count, got[CORPUS_MESSAGE].capped) == (count, capped)
        assert got[CORPUS_MESSAGE].examples == whole[CORPUS_MESSAGE].examples
        assert all(n.count == 0 and not n.capped for k, n in got.items() if k != CORPUS_MESSAGE)


def test_a_busy_database_never_makes_a_writer_wait(
    store_factory: Callable[[str], Store],
) -> None:
    reader, writer = store_factory("shared"), store_factory("shared")
    (message,) = add(reader, "ops", "read me while an import runs")
    holding, release = threading.Event(), threading.Event()

    def long_import() -> None:
        with writer.transaction():
            add(writer, "ops", "a long import")
            holding.set()
            release.wait(30)

    worker = threading.Thread(target=long_import)
    worker.start()
    try:
        assert holding.wait(30)
        # A backend with one writer at a time refuses; one whose writers do not exclude each
        # other writes: either way, at once.
        written = reader.append_hit_rows([drill(message.id)])
        assert worker.is_alive()  # it returned while the writer still held its transaction
        assert reader.readable_message(message.id) is not None  # and reads go on
    finally:
        release.set()
        worker.join(30)
    assert reader.append_hit_rows([drill(message.id)], wait_s=5.0) is True
    assert reader.hit_stats(top=1, max_rows=10).drill_rows == 1 + written  # nothing lost


def test_inside_a_snapshot_rows_are_written_or_refused_never_raised(store: Store) -> None:
    with store.read_snapshot():
        written = store.append_hit_rows([hit("m_1")])
    assert isinstance(written, bool)
    assert store.append_hit_rows([hit("m_2")])
    assert store.hit_recorded("sessions", "m_2")


@pytest.mark.parametrize("blocking", ["record_drill", "record_hits"])
def test_the_waiting_writes(store: Store, blocking: str) -> None:
    if blocking == "record_drill":
        store.record_drill("m_1")
        assert store.hit_stats(top=1, max_rows=10).drill_rows == 1
    else:
        store.record_hits("q", domain="sessions", layer="keyword", target_ids=["m_1"])
        assert store.hit_recorded("sessions", "m_1")
