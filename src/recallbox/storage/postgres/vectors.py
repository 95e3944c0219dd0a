"""pgvector tables: one per embedding space (DESIGN §4.2), and the writes every corpus shares.

* A space's table is ``vec_space_<id> (target_id bigint PRIMARY KEY, part bigint, embedding
  vector(dim))``: ``part`` is the corpus's partition key (a message's or chunk's thread, a code
  symbol's scope, 0 for the global corpora), with a btree index. Distances are pgvector's
  cosine distance ``<=>`` (``d = 1 − cos``; the ranking turns it into ``max(0, 1 − d)``).
* The HNSW index (``vector_cosine_ops``, :data:`HNSW_M`, :data:`HNSW_EF_CONSTRUCTION`) is
  built once a space holds :data:`HNSW_MIN_VECTORS` vectors, in one ``CREATE INDEX`` — a bulk
  build, far cheaper than growing the graph one insert at a time — and maintained after that.
  Below that size an exact scan is cheap, exact, and what the searches use
  (``vector_index.py``).
* :func:`put_embeddings` writes a batch of vectors in one statement with their ``embeddings``
  bookkeeping rows (the content hash each describes); :func:`forget` deletes both for rows
  about to be deleted. Every write bumps ``embedding_spaces.version`` (migration 12).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from recallbox.storage.postgres.connection import Connection

if TYPE_CHECKING:
    from recallbox.storage.values import EmbeddingSpace, EmbedTarget

VEC_TABLE_PREFIX = "vec_space_"
#: A space gets its HNSW index once it holds this many vectors (exact scans below).
HNSW_MIN_VECTORS = 20_000
#: pgvector's HNSW index takes vectors of at most this many dimensions.
HNSW_MAX_DIM = 2_000
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
#: Vectors per ``INSERT`` statement.
WRITE_BATCH = 500


def table_name(space_id: int) -> str:
    """The vector table of space ``space_id`` (an integer, so the name is always safe)."""
    return f"{VEC_TABLE_PREFIX}{int(space_id)}"


def hnsw_name(space_id: int) -> str:
    return f"{table_name(space_id)}_hnsw"


def literal(vector: Sequence[float]) -> str:
    """A ``vector`` literal: ``[x,y,…]`` (a non-finite value becomes 0, as pgvector refuses it)."""
    return "[" + ",".join(repr(float(x)) if math.isfinite(x) else "0.0" for x in vector) + "]"


def table_exists(conn: Connection, space_id: int) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table_name(space_id),)).fetchone()
    return bool(row and row[0])


def has_hnsw(conn: Connection, space_id: int) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (hnsw_name(space_id),)).fetchone()
    return bool(row and row[0])


def create_table(conn: Connection, space_id: int, dim: int) -> None:
    """Create the vector table of a space (idempotent)."""
    table = table_name(space_id)
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {table} (target_id bigint PRIMARY KEY, part bigint NOT NULL, "
        f"embedding vector({int(dim)}) NOT NULL)"
    )
    conn.execute(f"CREATE INDEX IF NOT EXISTS {table}_part ON {table} (part)")


def create_hnsw(conn: Connection, space_id: int) -> None:
    """Build the space's HNSW index (idempotent)."""
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {hnsw_name(space_id)} ON {table_name(space_id)} "
        f"USING hnsw (embedding vector_cosine_ops) WITH (m = {HNSW_M}, "
        f"ef_construction = {HNSW_EF_CONSTRUCTION})"
    )


def drop_table(conn: Connection, space_id: int) -> None:
    conn.execute(f"DROP TABLE IF EXISTS {table_name(space_id)}")


def bump_version(conn: Connection, space_id: int) -> None:
    """Count a write to the space's vectors (``embedding_spaces.version``)."""
    conn.execute("UPDATE embedding_spaces SET version = version + 1 WHERE id = %s", (space_id,))


def delete_rows(conn: Connection, owner: str, table: str, rowids: Sequence[int]) -> None:
    """Delete ``table``'s rows ``rowids`` (of corpus ``owner``) with their vectors in every
    space and the vectors' bookkeeping.

    Why the lock first: a vector written for a row that a concurrent transaction deletes would
    outlive it. :func:`put_embeddings` holds ``KEY SHARE`` on the rows it writes vectors for,
    this holds ``UPDATE``: whichever comes second waits for the first to commit, then finds
    the row gone (the writer skips it) or sees the vectors written (they are deleted here).
    Both lock in id order, so they never deadlock.
    """
    if not rowids:
        return
    conn.execute(
        f"SELECT id FROM {table} WHERE id = ANY(%s::bigint[]) ORDER BY id FOR UPDATE",
        (list(rowids),),
    )
    forget(conn, owner, rowids)
    conn.execute(f"DELETE FROM {table} WHERE id = ANY(%s::bigint[])", (list(rowids),))


def forget(conn: Connection, owner: str, rowids: Sequence[int]) -> None:
    """Delete the vectors of ``owner``'s rows ``rowids`` in every space, with their bookkeeping
    (with the rows locked: :func:`delete_rows`)."""
    if not rowids:
        return
    ids = list(rowids)
    spaces = conn.execute("SELECT id FROM embedding_spaces WHERE owner = %s", (owner,)).fetchall()
    for (space_id,) in spaces:
        conn.execute(
            "DELETE FROM embeddings WHERE space_id = %s AND target_rowid = ANY(%s::bigint[])",
            (space_id, ids),
        )
        if table_exists(conn, int(space_id)):
            deleted = conn.execute(
                f"DELETE FROM {table_name(int(space_id))} WHERE target_id = ANY(%s::bigint[]) "
                "RETURNING 1",
                (ids,),
            ).fetchall()
            if deleted:
                bump_version(conn, int(space_id))


def put_embeddings(
    conn: Connection,
    space: EmbeddingSpace,
    items: Sequence[tuple[EmbedTarget, Sequence[float]]],
    *,
    owner_table: str,
    partition_column: str,
) -> int:
    """Write the vectors of ``items`` to ``space`` with their ``embeddings`` rows; a target
    whose row is gone is skipped. Returns how many were written.

    Raises:
        ValueError: a vector's length is not the space's dimension.
    """
    for _, vector in items:
        if len(vector) != space.dim:
            raise ValueError(f"vector of {len(vector)} floats for a {space.dim}-d space")
    keys = [target.key for target, _ in items]
    parts: dict[int, int] = {
        int(r[0]): int(r[1])
        for r in conn.execute(
            f"SELECT id, {partition_column} FROM {owner_table} WHERE id = ANY(%s::bigint[]) "
            "ORDER BY id FOR KEY SHARE",  # the rows stay until this commits (delete_rows)
            (keys,),
        ).fetchall()
    }
    found = [(t, v) for t, v in items if t.key in parts]
    if not found:
        return 0
    stamp = datetime.now(UTC)
    table = table_name(space.id)
    latest = list({t.key: (t, v) for t, v in found}.values())  # a key written twice: the last
    for start in range(0, len(latest), WRITE_BATCH):
        batch = latest[start : start + WRITE_BATCH]
        ids = [t.key for t, _ in batch]
        conn.execute(
            "INSERT INTO embeddings (space_id, target_rowid, content_hash, embedded_at) "
            "SELECT %s, u.id, u.hash, %s FROM unnest(%s::bigint[], %s::text[]) AS u(id, hash) "
            "ON CONFLICT (space_id, target_rowid) DO UPDATE SET "
            "content_hash = excluded.content_hash, embedded_at = excluded.embedded_at",
            (space.id, stamp, ids, [t.content_hash for t, _ in batch]),
        )
        conn.execute(
            f"INSERT INTO {table} (target_id, part, embedding) SELECT u.id, u.part, "
            f"u.v::vector({int(space.dim)}) FROM unnest(%s::bigint[], %s::bigint[], %s::text[]) "
            "AS u(id, part, v) ON CONFLICT (target_id) DO UPDATE SET part = excluded.part, "
            "embedding = excluded.embedding",
            (ids, [parts[i] for i in ids], [literal(v) for _, v in batch]),
        )
    bump_version(conn, space.id)
    if space.dim <= HNSW_MAX_DIM and not has_hnsw(conn, space.id):
        row = conn.execute(  # kept by triggers (migration 13), never counted
            "SELECT vectors FROM embedding_spaces WHERE id = %s", (space.id,)
        ).fetchone()
        if row and int(row[0]) >= HNSW_MIN_VECTORS:
            create_hnsw(conn, space.id)
    return len(found)


def spaces(conn: Connection) -> list[tuple[int, str, int]]:
    """``(id, owner, dim)`` of every space."""
    rows: list[Any] = conn.execute(
        "SELECT id, owner, dim FROM embedding_spaces ORDER BY id"
    ).fetchall()
    return [(int(r[0]), str(r[1]), int(r[2])) for r in rows]
