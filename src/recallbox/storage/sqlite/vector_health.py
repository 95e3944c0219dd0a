"""Vector health for ``doctor`` (DESIGN §4.1's heal probe, for the vector leg).

For each embedding space: its ``vec0`` table exists, and its vectors and their bookkeeping rows
(``embeddings``: which row has a vector of which content) name the same rowids, each one a
stored row, and the space's count of them (``embedding_spaces.vectors``) is right. Repair recreates a missing table and drops whatever does not agree — bookkeeping
without a vector, a vector without bookkeeping, either of a row that is gone — so the next
embedding pass writes those vectors again. No base row is touched.
"""

from __future__ import annotations

from typing import Any

import apsw

from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.corpora import corpus_of
from recallbox.types import IndexHealth

REEMBED_HINT = "run `recallbox doctor --repair`, then `recallbox embed --all`"


def _spaces(conn: apsw.Connection) -> list[tuple[int, str, int]]:
    rows: list[Any] = conn.execute(
        "SELECT id, owner, dim FROM embedding_spaces ORDER BY id"
    ).fetchall()
    return [(int(r[0]), str(r[1]), int(r[2])) for r in rows]


def _count(conn: apsw.Connection, sql: str, *params: object) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row else 0


def table_exists(conn: apsw.Connection, space_id: int) -> bool:
    name = vectors.table_name(space_id)
    return (
        conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
    )


def check(conn: apsw.Connection, space_id: int, owner: str) -> IndexHealth:
    """The health of one space's vectors."""
    table = vectors.table_name(space_id)
    booked = _count(conn, "SELECT count(*) FROM embeddings WHERE space_id = ?", space_id)
    if not table_exists(conn, space_id):
        return IndexHealth(
            table, False, True, 0, 0, booked, 0, True, f"vector table is missing; {REEMBED_HINT}"
        )
    vectors.load_sqlite_vec(conn)
    stored = _count(conn, f"SELECT count(*) FROM {table}")
    unbacked = _count(
        conn,
        f"SELECT count(*) FROM embeddings e WHERE e.space_id = ? AND NOT "
        f"EXISTS (SELECT 1 FROM {table} v WHERE v.rowid = e.target_rowid)",
        space_id,
    )
    target = corpus_of(owner).table
    orphans = _count(
        conn,
        f"SELECT count(*) FROM embeddings e WHERE e.space_id = ? AND NOT "
        f"EXISTS (SELECT 1 FROM {target} x WHERE x.id = e.target_rowid)",
        space_id,
    )
    counted = _count(conn, "SELECT vectors FROM embedding_spaces WHERE id = ?", space_id)
    problems = []
    if counted != booked:
        problems.append(f"the space counts {counted} vectors for {booked}")
    if unbacked:
        problems.append(f"{unbacked} bookkept vectors are missing")
    if stored - (booked - unbacked):
        problems.append(f"{stored - (booked - unbacked)} vectors have no bookkeeping")
    if orphans:
        problems.append(f"{orphans} vectors belong to rows that are gone")
    detail = "; ".join(problems) + (f"; {REEMBED_HINT}" if problems else "")
    return IndexHealth(
        table, not problems, True, 0, 0, booked, booked if not problems else stored, True, detail
    )


def check_all(conn: apsw.Connection) -> list[IndexHealth]:
    return [check(conn, space_id, owner) for space_id, owner, _ in _spaces(conn)]


def repair_all(conn: apsw.Connection) -> list[str]:
    """Make every space agree with itself (see the module docstring); one line per repair."""
    lines = []
    for space_id, owner, dim in _spaces(conn):
        if check(conn, space_id, owner).healthy:
            continue
        table = vectors.table_name(space_id)
        missing = not table_exists(conn, space_id)
        vectors.create_table(conn, space_id, dim)
        target = corpus_of(owner).table
        before = _count(conn, "SELECT count(*) FROM embeddings WHERE space_id = ?", space_id)
        conn.execute(
            f"DELETE FROM {table} WHERE rowid NOT IN (SELECT target_rowid FROM "
            f"embeddings WHERE space_id = ?) OR rowid NOT IN (SELECT id FROM {target})",
            (space_id,),
        )
        conn.execute(
            f"DELETE FROM embeddings WHERE space_id = ? AND (target_rowid NOT IN "
            f"(SELECT rowid FROM {table}) OR target_rowid NOT IN "
            f"(SELECT id FROM {target}))",
            (space_id,),
        )
        after = _count(conn, "SELECT count(*) FROM embeddings WHERE space_id = ?", space_id)
        conn.execute("UPDATE embedding_spaces SET vectors = ? WHERE id = ?", (after, space_id))
        what = "recreated (was missing)" if missing else "made to agree"
        lines.append(
            f"{table}: {what}; {before - after} vectors to re-embed (`recallbox embed --all`)"
        )
    return lines
