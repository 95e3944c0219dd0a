"""ThreadStore: threads, generations and messages, and the reads that serve a search."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import recallbox
from recallbox.storage.base import EVERYTHING, SearchFilter, Store

from .helpers import add, row


def test_threads_are_created_once_with_a_first_generation(store: Store) -> None:
    thread = store.ensure_thread("ops", "Operations")
    assert (thread.channel, thread.title, thread.quarantined) == ("ops", "Operations", False)
    assert store.ensure_thread("ops", "ignored") == thread
    assert store.get_thread("nope") is None
    store.ensure_thread("dev", None)
    assert [t.channel for t in store.list_threads()] == ["ops", "dev"]
    assert [g.number for g in store.generations("ops")] == [1]
    assert store.current_generation("ops").channel == "ops"
    with pytest.raises(recallbox.NotFound):
        store.current_generation("nope")


def test_set_title_creates_a_missing_thread(store: Store) -> None:
    store.set_title("new", "Fresh")
    thread = store.get_thread("new")
    assert thread is not None and thread.title == "Fresh"


def test_append_numbers_messages_and_a_summary_opens_a_generation(store: Store) -> None:
    first, second = add(store, "ops", "one", "two")
    assert second.seq > first.seq and first.id != second.id
    (summary,) = store.append("ops", [row("summary", role="system", kind="compaction_summary")])
    after = add(store, "ops", "three")[0]
    assert (first.generation, summary.generation, after.generation) == (1, 2, 2)
    assert [g.number for g in store.generations("ops")] == [1, 2]
    assert store.current_generation("ops").number == 2
    assert [m.content for m in store.messages("ops")] == ["one", "two", "summary", "three"]
    assert [m.content for m in store.messages("ops", 1)] == ["one", "two"]
    assert list(store.iter_messages("ops", 2)) == store.messages("ops", 2)
    thread = store.get_thread("ops")
    assert thread is not None and thread.generation_count == 2 and thread.message_count == 4


def test_messages_keep_what_was_appended(store: Store) -> None:
    stamp = datetime(2025, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    calls = [{"id": "c1", "name": "bash", "arguments": '{"command": "ls"}'}]
    (message,) = store.append(
        "ops",
        [
            row(
                "ran\x00it",
                role="assistant",
                tool_calls=calls,
                created_at=stamp,
                metadata={"k": [1, "二"]},
            )
        ],
    )
    assert store.get_message(message.id) == message
    assert message.content == "ran it" and message.raw_content == "ran\x00it"
    assert message.tool_calls == [{"id": "c1", "name": "bash", "arguments": {"command": "ls"}}]
    assert message.created_at == stamp and message.metadata == {"k": [1, "二"]}
    assert store.get_message("m_unknown") is None
    readable = store.readable_message(message.id)
    assert readable is not None and readable.message == message
    assert readable.tool_calls_raw is not None and "command" in readable.tool_calls_raw
    assert store.readable_message("m_unknown") is None


def test_flags_change_and_unknown_ids_are_not_found(store: Store) -> None:
    first, second = add(store, "ops", "queued", "later", pending=True)
    assert store.set_pending(first.id, False).pending is False
    assert store.set_superseded(second.id, first.id).superseded_by == first.id
    assert store.set_superseded(second.id, None).superseded_by is None
    with pytest.raises(recallbox.NotFound):
        store.set_pending("m_unknown", False)
    with pytest.raises(recallbox.NotFound):
        store.set_superseded("m_unknown", None)


def test_search_rows_hold_only_visible_messages(store: Store) -> None:
    shown = add(store, "ops", "shown")[0]
    pending = add(store, "ops", "pending", pending=True)[0]
    hidden = add(store, "ops", "hidden", model_visible=False)[0]
    event = add(store, "ops", "event", role="system", kind="machine_event")[0]
    other = add(store, "dev", "elsewhere")[0]
    ids = [shown.id, pending.id, hidden.id, event.id, other.id, "m_unknown", shown.id]
    rows = store.search_rows(ids, where=EVERYTHING)
    assert set(rows) == {shown.id, other.id}
    got = rows[shown.id]
    assert (got.channel, got.role, got.content) == ("ops", "user", "shown")
    assert got.created_at == shown.created_at and got.content_hash
    assert set(store.search_rows(ids, where=SearchFilter(channel="dev"))) == {other.id}
    assert store.search_rows([], where=EVERYTHING) == {}


def test_a_session_window_counts_visible_messages_only(store: Store) -> None:
    ids = [m.id for m in add(store, "ops", *(f"m{i}" for i in range(6)))]
    add(store, "ops", "queued", pending=True)
    store.set_superseded(ids[1], ids[2])
    window = store.session_window(ids[3], 1, where=EVERYTHING)
    assert [m.id for m in window] == [ids[2], ids[3], ids[4]]
    window = store.session_window(ids[2], 5, where=EVERYTHING)
    assert [m.id for m in window] == [ids[0], ids[2], ids[3], ids[4], ids[5]]
    assert store.session_window(ids[1], 3, where=EVERYTHING) == []  # superseded: not a hit
    assert store.session_window(ids[3], 1, where=SearchFilter(channel="dev")) == []
    assert store.session_window("m_unknown", 1, where=EVERYTHING) == []


def test_last_activity_is_the_newest_message_time_never_the_append_time(store: Store) -> None:
    """DESIGN §2 (#17 item 9): the greatest ``created_at`` of the thread's messages, its
    creation time while it is empty, whatever time the append ran at."""
    empty = store.ensure_thread("empty", None)
    assert empty.last_activity == empty.created_at
    old = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    older = datetime(2023, 1, 1, tzinfo=UTC)
    store.ensure_thread("imported", None)  # created now, then given old messages
    store.append("imported", [row("a", created_at=old), row("b", created_at=older)])
    thread = store.get_thread("imported")
    assert thread is not None and thread.last_activity == old
    add(store, "imported", "c", created_at=older)  # an older message never moves it back
    assert store.get_thread("imported").last_activity == old  # type: ignore[union-attr]
    newer = datetime(2024, 6, 1, tzinfo=UTC)
    add(store, "imported", "d", created_at=newer)
    listed = {t.channel: t.last_activity for t in store.list_threads()}
    assert listed["imported"] == newer and listed["empty"] == empty.created_at


def test_threads_say_whether_their_source_is_excluded(store: Store) -> None:
    """``Thread.excluded``: the thread's source is excluded by the stored policy (the audit
    reads flag it; DESIGN §5)."""
    add(store, "t1", "x")
    add(store, "t2", "y")
    store.set_thread_source("t1", "s1.jsonl", None)
    store.set_thread_source("t2", "s2.jsonl", "dev:ino")
    assert [t.excluded for t in store.list_threads()] == [False, False]
    store.set_source_excluded("s1.jsonl", True)
    store.set_source_excluded("other-name.jsonl", True, "dev:ino")  # a hard link of s2
    assert [(t.channel, t.excluded) for t in store.list_threads()] == [("t1", True), ("t2", True)]
    store.set_quarantined("t1", True)
    t1 = store.get_thread("t1")
    assert t1 is not None and (t1.quarantined, t1.excluded) == (True, True)
    store.set_source_excluded("s1.jsonl", False)
    t1 = store.get_thread("t1")
    assert t1 is not None and (t1.quarantined, t1.excluded) == (True, False)
