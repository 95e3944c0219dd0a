"""Which nodes of a transcript's branch tree are superseded: the whole walk, and the part a
batch can change.

The live line of a tree is the chain of parents from its last conversational node (by line);
walking the tree from its root, a node on the line is live, a conversational node off the line
is superseded, and a non-conversational node inherits its parent's status (a note hanging off
an abandoned branch is abandoned, one hanging off the live line is live). The walk is SQL, so
a sync never loads a whole forest into memory.

**Incremental.** A long session is imported in many batches, and walking its whole tree after
each batch that branched made the import quadratic (a 100 000-record session: 12 minutes).
The nodes a batch adds are those at or after its first line (``since_line``); every older node
already has the status the previous line gave it. So, from the new leaf, walk up the parents to
the first *old, live, conversational* node ``Z``: it is on the old line (an old conversational
node off the line is superseded) and on the new one, hence so is every ancestor of ``Z``, and
no node outside ``Z``'s subtree changes — except nodes of this batch hanging elsewhere (a note
on an abandoned branch, a branch abandoned within the batch), which lie off the line: a
conversational one is superseded, a note takes its parent's status. The walk covers ``Z``'s
subtree only. Whenever that reasoning could fail (the tree is new, no such ``Z`` within
:data:`INCREMENTAL_WALK_LIMIT` steps, an old node hangs below a node of the batch: a file whose
records come before their parents), the whole tree is walked instead.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import apsw

#: Parents climbed from the new leaf looking for the old line before the whole tree is walked.
INCREMENTAL_WALK_LIMIT = 20_000

# (file, side, root) -> the (uuid, status) of every node of the tree whose status changed.
RESOLVE_SQL = """
WITH RECURSIVE
leaf(uuid) AS (
    SELECT uuid FROM import_nodes
    WHERE file_id = :file AND side = :side AND root = :root AND conversational = 1
    ORDER BY line DESC LIMIT 1
),
line(uuid) AS MATERIALIZED (
    SELECT uuid FROM leaf
    UNION
    SELECT (SELECT n.parent FROM import_nodes n
            WHERE n.file_id = :file AND n.uuid = line.uuid AND n.side = :side)
    FROM line WHERE line.uuid IS NOT NULL
),
walk(uuid, sup) AS (
    SELECT n.uuid, CASE WHEN n.uuid IN (SELECT uuid FROM line) THEN 0
                        WHEN n.conversational THEN 1 ELSE 0 END
    FROM import_nodes n WHERE n.file_id = :file AND n.uuid = :root
    UNION
    SELECT c.uuid, CASE WHEN c.uuid IN (SELECT uuid FROM line) THEN 0
                        WHEN c.conversational THEN 1 ELSE w.sup END
    FROM walk w CROSS JOIN import_nodes c INDEXED BY import_nodes_children
      ON c.file_id = :file AND c.side = :side AND c.parent = w.uuid
    WHERE c.root = :root AND c.uuid != :root
)
SELECT w.uuid, max(w.sup) FROM walk w CROSS JOIN import_nodes n
ON n.file_id = :file AND n.uuid = w.uuid
GROUP BY w.uuid HAVING :full OR max(w.sup) != max(n.superseded)
"""

# The subtree of :start (live: on both lines) with the new line below it given as a JSON
# array: (uuid, status, stored status) of each of its nodes. CROSS JOIN keeps the walk the
# outer loop: otherwise the planner reads every node of the file and probes the walk.
SUBTREE_SQL = """
WITH RECURSIVE
line(uuid) AS MATERIALIZED (SELECT value FROM json_each(:line)),
walk(uuid, sup) AS (
    SELECT :start, 0
    UNION
    SELECT c.uuid, CASE WHEN c.uuid IN (SELECT uuid FROM line) THEN 0
                        WHEN c.conversational THEN 1 ELSE w.sup END
    FROM walk w CROSS JOIN import_nodes c INDEXED BY import_nodes_children
      ON c.file_id = :file AND c.side = :side AND c.parent = w.uuid
    WHERE c.root = :root AND c.uuid != :root
)
SELECT w.uuid, max(w.sup), max(n.superseded) FROM walk w
CROSS JOIN import_nodes n ON n.file_id = :file AND n.uuid = w.uuid GROUP BY w.uuid
"""

_LEAF_SQL = (
    "SELECT uuid FROM import_nodes WHERE file_id = ? AND side = ? AND root = ? "
    "AND conversational = 1 ORDER BY line DESC LIMIT 1"
)
_NODE_SQL = (
    "SELECT uuid, parent, side, conversational, line, superseded FROM import_nodes "
    "WHERE file_id = ? AND uuid = ?"
)
# Without INDEXED BY (and the IN that lets it reach ``line``), SQLite's planner reads every
# node of the file through the primary key: a scan per batch, quadratic over a long session.
_NEW_NODES_SQL = (
    "SELECT uuid, parent, side, conversational, line, superseded FROM import_nodes "
    "INDEXED BY import_nodes_leaf WHERE file_id = ? AND side = ? AND root = ? "
    "AND conversational IN (0, 1) AND line >= ? ORDER BY line"
)
_OLD_CHILD_SQL = (
    "SELECT 1 FROM import_nodes INDEXED BY import_nodes_children "
    "WHERE file_id = ? AND side = ? AND parent = ? AND line < ? LIMIT 1"
)


@dataclass(frozen=True, slots=True)
class _Node:
    uuid: str
    parent: str | None
    side: int
    conversational: bool
    line: int
    superseded: int


def _node(conn: apsw.Connection, file_id: int, uuid: str | None) -> _Node | None:
    if uuid is None:
        return None
    row: Any = conn.execute(_NODE_SQL, (file_id, uuid)).fetchone()
    if row is None:
        return None
    return _Node(str(row[0]), row[1], int(row[2]), bool(row[3]), int(row[4]), int(row[5]))


def _whole(conn: apsw.Connection, file_id: int, root: str, side: int, full: bool) -> list[Any]:
    params = {"file": file_id, "side": side, "root": root, "full": int(full)}
    return conn.execute(RESOLVE_SQL, params).fetchall()


def resolve_tree(
    conn: apsw.Connection, file_id: int, root: str, side: bool, *, full: bool, since_line: int
) -> list[tuple[str, int]]:
    """``(uuid, superseded)`` of every node of the tree whose status changes (``full``: of
    every node), walking only what nodes at or after ``since_line`` can change (module docs)."""
    side_value = int(side)
    changes = None if full or since_line <= 0 else _incremental(conn, file_id, root, side_value,
                                                                since_line)  # fmt: skip
    if changes is None:
        return [(str(u), int(s)) for u, s in _whole(conn, file_id, root, side_value, full)]
    return changes


def _incremental(
    conn: apsw.Connection, file_id: int, root: str, side: int, since_line: int
) -> list[tuple[str, int]] | None:
    """The changes, or ``None`` when the whole tree must be walked."""
    top = _node(conn, file_id, root)
    leaf_row: Any = conn.execute(_LEAF_SQL, (file_id, side, root)).fetchone()
    if top is None or top.line >= since_line or leaf_row is None:
        return None
    line: list[str] = []
    node = _node(conn, file_id, str(leaf_row[0]))
    while node is None or not (node.line < since_line and node.conversational
                               and not node.superseded):  # fmt: skip
        if node is None or node.uuid == root or node.side != side:
            return None
        if len(line) >= INCREMENTAL_WALK_LIMIT:
            return None
        line.append(node.uuid)
        node = _node(conn, file_id, node.parent)
    start = node.uuid
    params = {"file": file_id, "side": side, "root": root, "line": json.dumps(line),
              "start": start}  # fmt: skip
    status: dict[str, int] = {}
    changes: list[tuple[str, int]] = []
    walked: list[Any] = conn.execute(SUBTREE_SQL, params).fetchall()
    for uuid, sup, stored in walked:
        status[str(uuid)] = int(sup)
        if int(sup) != int(stored):
            changes.append((str(uuid), int(sup)))
    added: list[Any] = conn.execute(_NEW_NODES_SQL, (file_id, side, root, since_line)).fetchall()
    for row in added:
        new = _Node(str(row[0]), row[1], int(row[2]), bool(row[3]), int(row[4]), int(row[5]))
        if new.uuid in status:
            continue
        if conn.execute(_OLD_CHILD_SQL, (file_id, side, new.uuid, since_line)).fetchone():
            return None  # an old node below a new one: the file is out of order
        if new.conversational:
            sup = 1  # off the line: the line above ``start`` holds old nodes only
        elif new.parent in status:
            sup = status[new.parent]
        else:
            parent = _node(conn, file_id, new.parent)
            if parent is None or parent.side != side or parent.line >= since_line:
                return None  # not reached by a walk, or a parent after its child
            sup = parent.superseded
        status[new.uuid] = sup
        if sup != new.superseded:
            changes.append((new.uuid, sup))
    return changes
