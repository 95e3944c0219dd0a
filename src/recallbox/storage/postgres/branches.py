"""Which nodes of an imported conversation tree are superseded (``resolve_branches``, #16).

The answer is the SQLite twin's ``_RESOLVE_SQL`` (``storage/sqlite/imports.py``): the *line* is
the newest conversational leaf of ``(file, side, root)`` and its ancestors (same side); walking
down from ``root``, a node on the line is live, a conversational node off it is superseded, and
any other node inherits its parent's status.

Why in Python here: PostgreSQL runs a recursive CTE one iteration per tree level, ~12 µs each,
and a transcript is a chain thousands of levels deep, so the statement cost ~35 ms per 2 000
nodes on every import batch (measured: 3 s of an 8.7 s 2 000-record import). One indexed read
of the tree's rows and a walk in memory costs ~2 ms for the same tree. Ancestors outside the
tree (another root) are read one by one, as the CTE would.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from recallbox.storage.postgres.connection import Connection

_COLUMNS = "uuid, parent, root, side, conversational, line, superseded"


def superseded_changes(
    conn: Connection, file_id: int, root: str, side: bool, *, full: bool
) -> list[tuple[str, bool]]:
    """The ``(uuid, superseded)`` of every node of the tree whose status is not the stored one
    (every node with ``full``), sorted by uuid."""
    rows: Sequence[Sequence[Any]] = conn.execute(
        f"SELECT {_COLUMNS} FROM import_nodes "
        "WHERE file_id = %s AND ((side = %s AND root = %s) OR uuid = %s)",
        (file_id, side, root, root),
    ).fetchall()
    nodes = {str(r[0]): r for r in rows}
    tree = [r for r in rows if bool(r[3]) == side and r[2] == root]
    line = _line(conn, file_id, side, nodes, tree)
    start = nodes.get(root)
    if start is None:
        return []
    children: dict[str, list[Sequence[Any]]] = defaultdict(list)
    for row in tree:
        if row[0] != root and row[1] is not None:
            children[str(row[1])].append(row)
    status: dict[str, int] = {}
    seen: set[tuple[str, int]] = set()
    stack = [(root, 0 if root in line else int(bool(start[4])))]
    while stack:  # the CTE's UNION: each (node, status) once, so a cycle ends
        uuid, sup = stack.pop()
        if (uuid, sup) in seen:
            continue
        seen.add((uuid, sup))
        status[uuid] = max(status.get(uuid, 0), sup)
        for child in children.get(uuid, ()):
            name = str(child[0])
            stack.append((name, 0 if name in line else 1 if child[4] else sup))
    return [
        (uuid, bool(sup))
        for uuid, sup in sorted(status.items())
        if full or sup != int(bool(nodes[uuid][6]))
    ]


def _line(
    conn: Connection,
    file_id: int,
    side: bool,
    nodes: dict[str, Sequence[Any]],
    tree: list[Sequence[Any]],
) -> set[str]:
    """The newest conversational leaf of the tree and its ancestors on ``side``."""
    leaves = [r for r in tree if r[4]]
    if not leaves:
        return set()
    uuid: str | None = str(max(leaves, key=lambda r: int(r[5]))[0])
    line: set[str] = set()
    while uuid is not None and uuid not in line:
        line.add(uuid)
        row = nodes.get(uuid)
        if row is None:  # an ancestor outside the tree (or missing): read it alone
            found = conn.execute(
                "SELECT parent FROM import_nodes WHERE file_id = %s AND uuid = %s AND side = %s",
                (file_id, uuid, side),
            ).fetchone()
            uuid = None if found is None or found[0] is None else str(found[0])
        elif bool(row[3]) != side:
            uuid = None
        else:
            uuid = None if row[1] is None else str(row[1])
    return line
