"""The hit-log through the Box (DESIGN §5): what is recorded, never waiting, bounded, off."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import recallbox
from backends import is_postgres
from recallbox.hitlog import HitRecorder
from recallbox.storage.base import HitRow, Store
from table_dump import hit_log_rows


def test_each_verb_records_its_rows(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        first = box.append("ops", "user", "rotate the staging key").id
        box.append("else", "user", "the staging key again")
        box.search("staging key")
        box.search_memory("staging key", "ops")
        box.recall("staging key", domains=["sessions"])
        box.read_message(first)
        box.message_page(first)
        stored = box.store_tool_output("line\n" * 5_000 + "ERROR x\n", channel="ops")
        assert stored.handle is not None
        box.expand(stored.handle)
        box.hits.flush()
    rows = hit_log_rows(db_path)
    layers = [(r[1], r[2]) for r in rows if not r[3]]
    assert ("keyword", first) in layers  # search, the other-memory part and recall
    assert ("literal", first) in layers  # search_memory's literal part
    drills = [(r[0], r[2], r[4]) for r in rows if r[3]]
    assert drills == [
        ("sessions", first, "read_message"),
        ("sessions", first, "message_page"),
        ("tool_outputs", stored.handle, "expand"),
    ]


def test_hit_log_off_records_nothing(db_path: Path) -> None:
    with recallbox.open(db_path, hit_log=False) as box:
        mid = box.append("ops", "user", "nothing is recorded").id
        box.search("recorded")
        box.recall("recorded")
        box.read_message(mid)
    assert hit_log_rows(db_path) == []


def test_a_read_returns_while_an_import_holds_the_write_lock(db_path: Path) -> None:
    """Today's fix: read_message no longer queues behind a long import for its drill."""
    with recallbox.open(db_path) as box, recallbox.open(db_path) as importer:
        mid = box.append("ops", "user", "read me during an import").id
        holding, release = threading.Event(), threading.Event()

        def long_import() -> None:
            with importer.store.transaction():
                importer.store.append("bulk", [])
                holding.set()
                release.wait(60)

        worker = threading.Thread(target=long_import)
        worker.start()
        try:
            assert holding.wait(30)
            read = threading.Thread(target=lambda: box.read_message(mid))
            read.start()
            read.join(20)  # far below the 30 s busy timeout a waiting write would sit out
            assert not read.is_alive(), "read_message waited for the write lock"
            # With one writer at a time (SQLite) the drill waits in memory, not the reader;
            # PostgreSQL's writers never exclude each other, so it is written at once.
            assert box.hits.buffered == (0 if is_postgres(db_path) else 1)
            assert "read me" in box.search_memory("read me during", None)
        finally:
            release.set()
            worker.join(30)
        assert box.hits.flush()
        assert box.hits.buffered == 0
    assert [r[2] for r in hit_log_rows(db_path) if r[3]] == [mid]


class BusyStore:
    """A hit-log that is always busy (the lock held forever), counting what reaches it."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.busy = True

    def append_hit_rows(self, rows: list[HitRow], **kwargs: object) -> bool:
        if self.busy:
            return False
        return self.store.append_hit_rows(rows, **kwargs)  # type: ignore[arg-type]


def test_a_full_buffer_drops_the_oldest_rows_and_counts_them(box: recallbox.Box) -> None:
    busy = BusyStore(box.store)
    recorder = HitRecorder(busy, max_buffer=5)  # type: ignore[arg-type]
    for i in range(8):
        recorder.drill(f"m_{i}", verb="read_message", domain="sessions")
    assert recorder.buffered == 5
    busy.busy = False
    assert recorder.flush()
    stats = box.hit_stats()
    assert stats.dropped == 3 and stats.drill_rows == 5
    assert recorder.buffered == 0


def test_a_failing_hit_log_never_fails_a_read(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    mid = box.append("ops", "user", "still readable").id

    def broken(*args: object, **kwargs: object) -> bool:
        raise recallbox.StoreUnavailable("the database cannot be written")

    monkeypatch.setattr(box.store, "append_hit_rows", broken)
    assert "still readable" in box.read_message(mid)
    assert box.hits.buffered == 1


def test_stats_hits(box: recallbox.Box) -> None:
    ids = [box.append("ops", "user", f"kestrel {i}").id for i in range(3)]
    box.recall("kestrel", domains=["sessions"])
    box.recall("kestrel", domains=["sessions"])
    box.read_message(ids[0])
    stats = box.hit_stats(top=2)
    assert stats.hit_rows == 6 and stats.drill_rows == 1 and stats.dropped == 0
    assert [d.domain for d in stats.domains] == ["sessions"]
    assert len(stats.most_recalled) == 2 and all(t.hits == 2 for t in stats.most_recalled)
    never = {n.corpus: n.count for n in stats.never_recalled}
    assert never["message"] == 0


def test_the_embedding_pass_advances_its_watermark(db_path: Path) -> None:
    with recallbox.open(db_path, embedder="hash") as box:
        mid = box.append("ops", "user", "embed me").id
        box.read_message(mid)
        box.hits.flush()
        top = box.store.hit_high_water()
        box.embed_all(lazy=True)
        assert box.store.hit_watermark("embed") == top
