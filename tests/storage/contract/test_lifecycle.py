"""StoreLifecycle and Health: migrations, transactions, snapshots, closing, index health."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

import recallbox
from recallbox.storage.base import PROTOCOLS, Deadline, Store, require

from .helpers import add


def test_a_store_implements_every_protocol(store: Store) -> None:
    assert isinstance(store, Store)
    for protocol in PROTOCOLS:
        assert require(store, protocol) is store
    assert isinstance(store.capabilities, frozenset)


def test_migrate_is_idempotent_and_versions_grow(store: Store) -> None:
    version = store.schema_version()
    assert version >= 1
    store.migrate()
    assert store.schema_version() == version


def test_what_is_written_survives_reopening(store_factory: Callable[[], Store]) -> None:
    first = store_factory()
    (message,) = add(first, "ops", "kept across connections")
    first.close()
    again = store_factory()
    assert again.get_message(message.id) == message


def test_a_closed_store_refuses_work(store: Store) -> None:
    store.close()
    with pytest.raises(recallbox.StoreUnavailable):
        store.list_threads()


def test_a_failed_transaction_leaves_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        add(store, "ops", "written then rolled back")
        store.set_title("ops", "gone too")
        raise RuntimeError("boom")
    assert store.get_thread("ops") is None


def test_nested_transactions_join_the_outer_one(store: Store) -> None:
    with store.transaction():
        add(store, "ops", "outer")
        with pytest.raises(ValueError), store.transaction():
            add(store, "ops", "inner, rolled back")
            raise ValueError
        add(store, "ops", "outer again")
    assert [m.content for m in store.messages("ops")] == ["outer", "outer again"]


def test_a_snapshot_reads_one_state(store_factory: Callable[[str], Store]) -> None:
    reader, writer = store_factory("shared"), store_factory("shared")
    add(reader, "ops", "before")
    seen: list[int] = []
    done = threading.Event()

    def write() -> None:
        add(writer, "ops", "during")
        done.set()

    with reader.read_snapshot():
        seen.append(len(reader.messages("ops")))
        thread = threading.Thread(target=write)
        thread.start()
        done.wait(5)
        seen.append(len(reader.messages("ops")))
    thread.join(5)
    assert seen == [1, 1]
    assert len(reader.messages("ops")) == 2


def test_no_write_inside_a_snapshot(store: Store) -> None:
    with store.read_snapshot(), pytest.raises(RuntimeError):
        add(store, "ops", "refused")
    with store.read_snapshot(), store.read_snapshot():  # nested snapshots join
        assert store.get_thread("ops") is None


def test_doctor_finds_a_fresh_store_healthy_and_repair_keeps_it(store: Store) -> None:
    add(store, "ops", "召回 deploy billing", "second row")
    report = store.doctor()
    assert report.healthy and report.schema_version == store.schema_version()
    assert report.indexes and report.repaired == ()
    repaired = store.doctor(repair=True)
    assert repaired.healthy and repaired.repaired
    assert [m.content for m in store.messages("ops")] == ["召回 deploy billing", "second row"]


def test_a_snapshot_deadline_stops_reads(store: Store) -> None:
    (message,) = add(store, "ops", "under a deadline")
    with store.read_snapshot(deadline=Deadline(60)):
        assert store.readable_message(message.id) is not None
    with pytest.raises(recallbox.TimedOut), store.read_snapshot(deadline=Deadline(0)):
        store.readable_message(message.id)
    cancel = Deadline()
    with pytest.raises(recallbox.TimedOut), store.read_snapshot(deadline=cancel):
        assert store.readable_message(message.id) is not None
        cancel.cancel()  # from any thread; here, between two reads
        store.readable_message(message.id)
    inner = Deadline()
    with store.read_snapshot(deadline=Deadline(60)):
        with pytest.raises(recallbox.TimedOut), store.read_snapshot(deadline=inner):
            inner.cancel()
            store.readable_message(message.id)
        assert store.readable_message(message.id) is not None  # the outer one still runs
    assert store.readable_message(message.id) is not None  # and nothing outlives the snapshot
