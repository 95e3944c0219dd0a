"""The import ledger on SQLite: branch resolution in SQL, with a plan that stays linear."""

from __future__ import annotations

from typing import Any

import recallbox
from recallbox.storage.base import ImportFile, ImportNode
from recallbox.storage.sqlite.branches import _NEW_NODES_SQL, RESOLVE_SQL, SUBTREE_SQL


def chain(store: Any, file_id: int, length: int) -> None:
    nodes = [
        ImportNode(uuid=f"n{i}", parent=f"n{i - 1}" if i else None, root="n0", side=False,
                   conversational=True, line=i + 1)
        for i in range(length)
    ]  # fmt: skip
    store.add_import_nodes(file_id, nodes)


def test_a_branch_supersedes_the_old_line_and_notes_hanging_off_it(box: recallbox.Box):
    store: Any = box.store
    file = store.save_import_file(ImportFile(path="/x.jsonl", format="claude-code"))
    chain(store, file.id, 5)  # n0 .. n4
    store.add_import_nodes(
        file.id,
        [
            ImportNode("note", "n4", "n0", False, False, 6),  # a note on the old branch
            ImportNode("b3", "n2", "n0", False, True, 7),  # the new branch forks at n2
        ],
    )
    assert store.resolve_branches(file.id, "n0", False) == []  # no messages mapped yet
    states = {n: store.import_node(file.id, n).superseded for n in ("n2", "n3", "n4", "note", "b3")}
    assert states == {"n2": False, "n3": True, "n4": True, "note": True, "b3": False}


def test_the_resolve_query_walks_children_by_index(box: recallbox.Box):
    conn = box.store.pool.connection()
    plan = " | ".join(
        str(row[3])
        for row in conn.execute(
            "EXPLAIN QUERY PLAN " + RESOLVE_SQL, {"file": 1, "side": 0, "root": "r", "full": 0}
        )
    )
    assert "SEARCH c USING INDEX import_nodes_children (file_id=? AND side=? AND parent=?)" in plan
    assert "MATERIALIZE line" in plan


def test_the_subtree_query_walks_children_by_index(box: recallbox.Box):
    conn = box.store.pool.connection()
    params = {"file": 1, "side": 0, "root": "r", "line": "[]", "start": "s"}
    plan = " | ".join(
        str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + SUBTREE_SQL, params)
    )
    assert "SEARCH c USING INDEX import_nodes_children (file_id=? AND side=? AND parent=?)" in plan
    # the walk drives the join: a node is read by its key, never the file's nodes scanned
    assert "SEARCH n USING PRIMARY KEY (file_id=? AND uuid=?)" in plan


def test_the_batch_reads_of_a_long_file_use_their_indexes(box: recallbox.Box):
    """Per batch and per changed node, an import reads its new nodes and a node's records by
    index, never every node or record of the file (which made a long session quadratic)."""
    conn = box.store.pool.connection()
    new_nodes = " | ".join(
        str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + _NEW_NODES_SQL, (1, 0, "r", 5))
    )
    leaf = "import_nodes_leaf (file_id=? AND side=? AND root=? AND conversational=? AND line>?)"
    assert leaf in new_nodes
    store: Any = box.store
    file = store.save_import_file(ImportFile(path="/x.jsonl", format="claude-code"))
    chain(store, file.id, 3)
    plans: list[str] = []
    conn.set_profile(lambda sql, _ns: plans.append(sql) if "import_records r" in sql else None)
    store.add_import_nodes(file.id, [ImportNode("b1", "n0", "n0", False, True, 4)])
    store.resolve_branches(file.id, "n0", False, since_line=4)
    conn.set_profile(None)
    assert plans and all("INDEXED BY import_records_by_node" in sql for sql in plans)
