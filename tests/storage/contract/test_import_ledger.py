"""ImportLedger: files, record keys, branch forests, message updates of an import."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from recallbox.storage.base import ImportFile, ImportNode, ImportRecord, Store

from .helpers import add, row

_STORES = itertools.count()


def test_files_are_saved_found_and_updated(store: Store) -> None:
    assert store.import_file("/t/a.jsonl") is None
    saved = store.save_import_file(
        ImportFile(path="/t/a.jsonl", format="codex", identity="1:2", state={"k": [1]})
    )
    assert saved.id > 0 and store.import_file("/t/a.jsonl") == saved
    moved = store.save_import_file(replace(saved, path="/t/b.jsonl", cursor_bytes=10, sync_count=1))
    assert moved.id == saved.id
    assert store.import_file("/t/a.jsonl") is None and store.import_file("/t/b.jsonl") == moved
    assert store.import_files_with_identity("1:2") == [moved]
    assert store.import_files_with_identity("9:9") == []


def test_records_map_keys_to_messages_per_sync(store: Store) -> None:
    file = store.save_import_file(ImportFile(path="/t/a.jsonl", format="codex"))
    first, second = add(store, "codex:x", "one", "two")
    store.put_import_records(
        file.id,
        [
            ImportRecord("k1", "codex:x", first.id, "h1", sync_id=1, node="n1"),
            ImportRecord("k2", "codex:x", second.id, "h2", sync_id=1),
        ],
    )
    assert store.import_record(file.id, "k1") == ImportRecord(
        "k1", "codex:x", first.id, "h1", 1, "n1"
    )
    assert store.import_record(file.id, "nope") is None
    store.put_import_records(file.id, [ImportRecord("k1", "codex:x", first.id, "h1b", sync_id=2)])
    assert [r.key for r in store.vanished_import_records(file.id, 2)] == ["k2"]
    record = store.import_record(file.id, "k1")
    assert record is not None and record.content_hash == "h1b" and record.node is None


def tree(store: Store, file_id: int) -> None:
    """n0 → n1 → n2 → n3, a note hanging off n3, and a later branch b2 forking at n1."""
    nodes = [
        ImportNode(f"n{i}", f"n{i - 1}" if i else None, "n0", False, True, i + 1) for i in range(4)
    ]
    store.add_import_nodes(file_id, nodes)
    store.add_import_nodes(
        file_id,
        [
            ImportNode("note", "n3", "n0", False, False, 5),
            ImportNode("b2", "n1", "n0", False, True, 6),
        ],
    )


def test_branches_resolve_to_the_line_of_the_last_conversational_record(store: Store) -> None:
    file = store.save_import_file(ImportFile(path="/t/c.jsonl", format="claude-code"))
    tree(store, file.id)
    node = store.import_node(file.id, "n2")
    assert node == ImportNode("n2", "n1", "n0", False, True, 3)
    assert store.import_node(file.id, "nope") is None
    store.add_import_nodes(file.id, [ImportNode("n2", "x", "x", True, False, 99)])  # kept as is
    assert store.import_node(file.id, "n2") == node
    assert store.last_conversational_node(file.id, "n0", False) == "b2"
    assert store.last_conversational_node(file.id, "n0", True) is None
    messages = add(store, "claude-code:c", "n2 said", "n3 said", "b2 said")
    store.put_import_records(
        file.id,
        [
            ImportRecord(f"k{i}", "claude-code:c", m.id, "h", 1, node)
            for i, (m, node) in enumerate(zip(messages, ["n2", "n3", "b2"], strict=True))
        ],
    )
    changes = dict(store.resolve_branches(file.id, "n0", False))
    assert changes == {messages[0].id: True, messages[1].id: True}
    states = {n: store.import_node(file.id, n).superseded for n in ("n1", "n2", "n3", "note", "b2")}  # type: ignore[union-attr]
    assert states == {"n1": False, "n2": True, "n3": True, "note": True, "b2": False}
    for message_id, superseded in changes.items():
        store.set_superseded(message_id, message_id if superseded else None)
    assert store.resolve_branches(file.id, "n0", False) == []  # nothing changed since
    full = dict(store.resolve_branches(file.id, "n0", False, full=True))
    assert full == {}  # every message already has the status the tree gives it
    assert store.reset_import_nodes(file.id) == 6
    assert store.import_node(file.id, "n0") is None


def test_the_next_live_message_replaces_a_dropped_one(store: Store) -> None:
    a, b, c = add(store, "t", "a", "b", "c")
    assert store.next_live_message(b.id) == c.id
    store.set_superseded(c.id, c.id)
    assert store.next_live_message(b.id) == a.id
    (lonely,) = add(store, "alone", "only")
    assert store.next_live_message(lonely.id) == lonely.id


def test_an_extended_message_is_found_by_its_new_text(store: Store) -> None:
    (message,) = add(store, "t", "first part", role="assistant")
    store.extend_message(
        message.id, row("first part\n\nsecond part", role="assistant", metadata={"n": 2})
    )
    got = store.get_message(message.id)
    assert got is not None and got.content.endswith("second part") and got.metadata == {"n": 2}
    assert got.seq == message.seq and got.id == message.id


def test_an_imported_thread_is_dated_by_its_transcript(store: Store) -> None:
    add(store, "t", "x")
    first = datetime(2020, 1, 1, tzinfo=UTC)
    last = datetime(2020, 1, 2, tzinfo=UTC)
    store.set_thread_times("t", first, last, replace_last=True)
    thread = store.get_thread("t")
    assert thread is not None and thread.created_at == first
    assert store.generations("t")[0].opened_at == first


def test_a_record_of_another_file_of_the_thread_is_found_and_mirrors_never_move(
    store: Store,
) -> None:
    """#17: a copy of a transcript (another file, same session) finds the records the first
    file imported (by thread and key) and only mirrors them; branch resolution of the copy
    never changes a message it mirrors."""
    a = store.save_import_file(ImportFile(path="/t/a.jsonl", format="claude-code"))
    b = store.save_import_file(ImportFile(path="/t/b.jsonl", format="claude-code"))
    first, second = add(store, "claude-code:s", "one", "two")
    store.put_import_records(
        a.id,
        [
            ImportRecord("u1", "claude-code:s", first.id, "h1", 1, "u1"),
            ImportRecord("u2", "claude-code:s", second.id, "h2", 1, "u2"),
        ],
    )
    found = store.channel_import_record("claude-code:s", "u1", other_than=b.id)
    assert found == ImportRecord("u1", "claude-code:s", first.id, "h1", 1, "u1")
    assert found is not None and found.file_id == a.id and not found.mirror
    assert store.channel_import_record("claude-code:s", "u1", other_than=a.id) is None
    assert store.channel_import_record("claude-code:other", "u1", other_than=b.id) is None
    mirrored = ImportRecord("u2", "claude-code:s", second.id, "h2", 1, "u2", mirror=True)
    store.put_import_records(b.id, [mirrored])
    assert store.import_record(b.id, "u2") == mirrored
    # a mirror is never what another file finds: only the file that imported the message
    assert store.channel_import_record("claude-code:s", "u2", other_than=a.id) is None
    assert [r.mirror for r in store.vanished_import_records(b.id, 2)] == [True]
    # b's forest says u2 was abandoned (u3 replaced it); a's message stays as a decides
    store.add_import_nodes(
        b.id,
        [
            ImportNode("u1", None, "u1", False, True, 1),
            ImportNode("u2", "u1", "u1", False, True, 2),
            ImportNode("u3", "u1", "u1", False, True, 3),
        ],
    )
    assert store.resolve_branches(b.id, "u1", False, full=True) == []
    assert store.import_node(b.id, "u2").superseded  # type: ignore[union-attr]


@st.composite
def forests(draw: st.DrawFn) -> tuple[list[tuple[int, int | None, bool]], list[int]]:
    """Nodes ``(i, parent index, conversational)`` in line order (a parent before its child,
    mostly a recent one, sometimes none: a new tree), and the lines where batches start."""
    count = draw(st.integers(min_value=1, max_value=24))
    nodes: list[tuple[int, int | None, bool]] = []
    for i in range(count):
        parent = None
        if i and draw(st.integers(min_value=0, max_value=9)):
            parent = draw(st.integers(min_value=max(0, i - 4), max_value=i - 1))
            if not draw(st.integers(min_value=0, max_value=4)):
                parent = draw(st.integers(min_value=0, max_value=i - 1))
        nodes.append((i, parent, draw(st.booleans())))
    starts = draw(st.lists(st.integers(min_value=2, max_value=count + 1), max_size=4, unique=True))
    return nodes, sorted(starts)


def _resolved(store: Store, file_id: int, nodes: list[ImportNode], starts: list[int]) -> dict:
    """Add ``nodes`` batch by batch (a batch starts at each line of ``starts``), resolving every
    tree after each batch as an import does; the superseded flag of each node at the end."""
    bounds = [1, *starts, len(nodes) + 1]
    for first, end in itertools.pairwise(bounds):
        store.add_import_nodes(file_id, [n for n in nodes if first <= n.line < end])
        for root in sorted({n.root for n in nodes if n.line < end}):
            store.resolve_branches(file_id, root, False, since_line=first)
    return {n.uuid: store.import_node(file_id, n.uuid).superseded for n in nodes}  # type: ignore[union-attr]


@given(forest=forests())
@settings(max_examples=60)
def test_resolving_batch_by_batch_equals_resolving_the_whole_tree(
    store_factory: Callable[[str], Store], forest: tuple[list[tuple[int, int | None, bool]], list[int]]
) -> None:
    """``since_line`` lets a backend walk only what a batch can change: whatever the forest and
    the batches, every node ends with the status one walk of the whole forest gives it."""
    shape, starts = forest
    roots: dict[int, int] = {}
    nodes = []
    for i, parent, conversational in shape:
        roots[i] = roots[parent] if parent is not None else i
        nodes.append(ImportNode(f"n{i}", f"n{parent}" if parent is not None else None,
                                f"n{roots[i]}", False, conversational, i + 1))  # fmt: skip
    key = next(_STORES)
    batched, whole = store_factory(f"batched{key}"), store_factory(f"whole{key}")
    file_a = batched.save_import_file(ImportFile(path="/t/a.jsonl", format="claude-code"))
    file_b = whole.save_import_file(ImportFile(path="/t/a.jsonl", format="claude-code"))
    assert _resolved(batched, file_a.id, nodes, starts) == _resolved(whole, file_b.id, nodes, [])
    batched.close()
    whole.close()
