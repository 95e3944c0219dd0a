"""sqlite-vec vector tables: one ``vec0`` table per embedding space (DESIGN §4.2).

* The extension is loaded lazily, per connection, through apsw
  (``enable_load_extension`` + ``load_extension(sqlite_vec.loadable_path())``); a missing
  package raises :class:`~recallbox.errors.DependencyMissing` naming the install command.
  Connections that never touch vectors never load it.
* A space's table is ``vec0(thread_id integer partition key, embedding float[dim]
  distance_metric=cosine)`` keyed by the row's rowid. The partition key is how a restricted
  search stays **inside the index**: sqlite-vec scans only that partition's vectors. The column
  is called ``thread_id`` because threads came first; it holds the corpus's partition key
  (:attr:`~recallbox.storage.sqlite.corpora.Corpus.partition_column`: a message's or chunk's
  thread, a code symbol's scope), and :func:`thread_partition` (or the corpus's own
  ``partition_of``) maps a filter to the partition it restricts the scan to.
* Distances are cosine distances ``d = 1 − cos``; the ranking turns them into ``max(0, 1 − d)``.
* :func:`put_embeddings` writes the vectors of any corpus's rows together with
  their ``embeddings`` rows (the content hash each vector describes); :func:`forget` deletes
  both for rows about to be deleted.
* :func:`nearest_visible` is the nearest-neighbour search of every corpus
  (``vector_index.py``): a channel restricts the scan inside the index (the partition key), the
  caller's other exclusions filter the KNN result, with ``k`` grown until ``limit`` visible rows
  are found or the index is exhausted, and an exact filtered scan past :data:`VEC_MAX_K`.

Quantisation (int8 / bit with a float re-rank) is not used: see the README's benchmark section
for why (at the sizes measured, the float scan inside one channel costs well under a
millisecond).
"""

from __future__ import annotations

import contextlib
import json
import math
import struct
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from recallbox.errors import DependencyMissing
from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.visibility import thread_gate, without_channel

if TYPE_CHECKING:
    from recallbox.storage.values import EmbeddingSpace, EmbedTarget

#: The largest ``k`` sqlite-vec 0.1 accepts in a KNN query.
VEC_MAX_K = 4096
#: Prefix of the ``vec0`` table of an embedding space (``vec_space_<id>``).
VEC_TABLE_PREFIX = "vec_space_"
SQLITE_VEC_HINT = "pip install sqlite-vec"
#: First KNN over-fetch: ``k = limit · factor`` before growing.
KNN_OVERFETCH_FACTOR = 2
#: How much ``k`` grows each time the visible rows do not fill ``limit``.
KNN_GROWTH = 4
#: A search of every thread in a space of more vectors than this is exact over the newest
#: threads only (:func:`nearest_recent`): an exact scan of every vector costs about 0.1 s of
#: CPU per 100 000 vectors, so it cannot stay interactive at a million.
GLOBAL_EXACT_KNN_MAX = 50_000
#: How many vectors (estimated from the threads' message counts) the newest threads of such a
#: search cover.
GLOBAL_SCAN_VECTORS = 50_000

#: ``visible(conn, space, rowids)``: rowid → public id of the rows among ``rowids`` a caller may
#: see (with a fresh vector).
Visible = Callable[[apsw.Connection, "EmbeddingSpace", Sequence[int]], dict[int, str]]
#: ``exact_scan(conn, space, vector, partition, limit)``: the ``limit`` nearest visible rows by
#: an exact filtered scan, as ``(public id, distance)``, nearest first.
ExactScan = Callable[
    [apsw.Connection, "EmbeddingSpace", Sequence[float], "int | None", int],
    list[tuple[str, float]],
]
#: ``partition_of(conn, where)``: the partition key ``where`` restricts the nearest-neighbour
#: scan to (``None``: every partition), or :data:`NO_PARTITION` when nothing may be searched.
PartitionOf = Callable[[apsw.Connection, SearchFilter], "int | None"]
#: A partition key no row has: the filter names something unknown or denied.
NO_PARTITION = -1


def load_sqlite_vec(conn: apsw.Connection) -> None:
    """Make the sqlite-vec functions and ``vec0`` available on ``conn`` (idempotent).

    Raises:
        DependencyMissing: the sqlite-vec package is missing or cannot be loaded.
    """
    try:
        conn.execute("SELECT vec_version()").fetchall()
        return
    except apsw.SQLError:
        pass
    try:
        import sqlite_vec
    except ImportError as exc:
        raise DependencyMissing(
            f"vector search needs the sqlite-vec package; install it with: {SQLITE_VEC_HINT}"
        ) from exc
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
    except (apsw.Error, AttributeError, OSError) as exc:
        raise DependencyMissing(
            f"cannot load the sqlite-vec extension ({exc}); reinstall it with: {SQLITE_VEC_HINT}"
        ) from exc
    finally:
        with contextlib.suppress(apsw.Error):
            conn.enable_load_extension(False)


def table_name(space_id: int) -> str:
    """The ``vec0`` table of space ``space_id`` (an integer, so the name is always safe)."""
    return f"{VEC_TABLE_PREFIX}{int(space_id)}"


def to_blob(vector: Sequence[float]) -> bytes:
    """float32 little-endian bytes, the format ``vec0`` stores."""
    return struct.pack(f"<{len(vector)}f", *vector)


def create_table(conn: apsw.Connection, space_id: int, dim: int) -> None:
    """Create the ``vec0`` table of a space (idempotent)."""
    load_sqlite_vec(conn)
    conn.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {table_name(space_id)} USING vec0("
        f"thread_id integer partition key, embedding float[{int(dim)}] distance_metric=cosine)"
    )


def forget(conn: apsw.Connection, owner: str, rowids: Sequence[int]) -> None:
    """Delete the vectors of ``owner``'s rows ``rowids`` in every space, with their
    bookkeeping (call it before deleting the rows): a vector left without bookkeeping would
    make ``doctor`` ask for a repair nothing broke."""
    if not rowids:
        return
    spaces: list[Any] = conn.execute(
        "SELECT id FROM embedding_spaces WHERE owner = ?", (owner,)
    ).fetchall()
    for space_id in [int(r[0]) for r in spaces]:
        conn.execute(
            "DELETE FROM embeddings WHERE space_id = ? AND target_rowid IN "
            "(SELECT value FROM json_each(?))",
            (space_id, json.dumps(list(rowids))),
        )
        name = table_name(space_id)
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone():
            load_sqlite_vec(conn)
            for rowid in rowids:  # one point delete each: vec0 scans for anything else
                conn.execute(f"DELETE FROM {name} WHERE rowid = ?", (rowid,))


def drop_table(conn: apsw.Connection, space_id: int) -> None:
    """Drop the ``vec0`` table of a space (idempotent)."""
    load_sqlite_vec(conn)
    conn.execute(f"DROP TABLE IF EXISTS {table_name(space_id)}")


def upsert(
    conn: apsw.Connection, space_id: int, rows: Iterable[tuple[int, int, Sequence[float]]]
) -> None:
    """Write ``(rowid, thread_id, vector)`` rows, replacing an existing vector of the rowid
    (and count the write: :func:`bump_version`)."""
    load_sqlite_vec(conn)
    table = table_name(space_id)
    written = False
    for rowid, thread_id, vector in rows:
        conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        conn.execute(
            f"INSERT INTO {table} (rowid, thread_id, embedding) VALUES (?, ?, ?)",
            (rowid, thread_id, to_blob(vector)),
        )
        written = True
    if written:
        bump_version(conn, space_id)


def put_embeddings(
    conn: apsw.Connection,
    space: EmbeddingSpace,
    items: Sequence[tuple[EmbedTarget, Sequence[float]]],
    *,
    owner_table: str,
    now: str,
    partition_column: str = "thread_id",
) -> int:
    """Write the vectors of ``items`` (rows of ``owner_table``, whose ``partition_column``
    holds the partition key) to ``space`` with their ``embeddings`` rows (content hash,
    ``now``); a target whose row is gone is skipped. Returns how many were written.

    Raises:
        ValueError: a vector's length is not the space's dimension.
    """
    rows: list[tuple[int, int, Sequence[float]]] = []
    for target, vector in items:
        if len(vector) != space.dim:
            raise ValueError(f"vector of {len(vector)} floats for a {space.dim}-d space")
        found = conn.execute(
            f"SELECT {partition_column} FROM {owner_table} WHERE id = ?", (target.key,)
        ).fetchone()
        if found is None:
            continue
        rows.append((target.key, int(found[0]), vector))
        conn.execute(
            "INSERT INTO embeddings (space_id, target_rowid, content_hash, embedded_at) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (space_id, target_rowid) DO UPDATE SET "
            "content_hash = excluded.content_hash, embedded_at = excluded.embedded_at",
            (space.id, target.key, target.content_hash, now),
        )
    upsert(conn, space.id, rows)
    return len(rows)


def bump_version(conn: apsw.Connection, space_id: int) -> None:
    """Count a write to the space's vectors (``embedding_spaces.version``, read by the
    in-memory copies of ``vector_cache.py``); every statement that inserts, changes or deletes
    ``vec0`` rows calls it in its transaction."""
    conn.execute("UPDATE embedding_spaces SET version = version + 1 WHERE id = ?", (space_id,))


def knn(
    conn: apsw.Connection,
    space_id: int,
    vector: Sequence[float],
    *,
    k: int,
    thread_id: int | None,
) -> list[tuple[int, float]]:
    """``(rowid, distance)`` of the ``k`` nearest vectors, nearest first (one thread's only
    when ``thread_id`` is given: the partition key restricts the scan)."""
    load_sqlite_vec(conn)
    table = table_name(space_id)
    k = max(1, min(int(k), VEC_MAX_K))
    if thread_id is None:
        sql = f"SELECT rowid, distance FROM {table} WHERE embedding MATCH ? AND k = ?"
        params: tuple[object, ...] = (to_blob(vector), k)
    else:
        sql = (
            f"SELECT rowid, distance FROM {table} "
            "WHERE embedding MATCH ? AND k = ? AND thread_id = ?"
        )
        params = (to_blob(vector), k, thread_id)
    return [(int(r[0]), float(r[1])) for r in conn.execute(sql, params)]


def allowed_thread_id(
    conn: apsw.Connection, channel: str, where: SearchFilter | None = None
) -> int | None:
    """The row id of thread ``channel`` when it may be searched (and ``where`` lets it
    through), else ``None``."""
    gate = thread_gate(without_channel(where or SearchFilter()))
    row = conn.execute(
        f"SELECT t.id FROM threads t WHERE t.channel = ?{gate.sql}", (channel, *gate.params)
    ).fetchone()
    return int(row[0]) if row else None


def thread_partition(conn: apsw.Connection, where: SearchFilter) -> int | None:
    """The partition of a corpus of thread rows: the thread ``where.channel`` names (when it
    may be searched, else :data:`NO_PARTITION`); ``None`` without a channel."""
    if where.channel is None:
        return None
    found = allowed_thread_id(conn, where.channel, where)
    return NO_PARTITION if found is None else found


def nearest_visible(
    conn: apsw.Connection,
    space: EmbeddingSpace,
    vector: Sequence[float],
    *,
    where: SearchFilter,
    limit: int,
    visible: Visible,
    exact_scan: ExactScan,
    partition_of: PartitionOf = thread_partition,
) -> list[tuple[str, float]]:
    """``(public id, distance)`` of the ``limit`` nearest rows ``visible`` lets through,
    nearest first (in the partition ``partition_of`` maps ``where`` to, when it names one —
    thread ``where.channel`` by default; none when it names one that may not be searched).

    Over-fetches ``k = limit ·`` :data:`KNN_OVERFETCH_FACTOR`, filters the KNN result through
    ``visible`` and grows ``k`` by :data:`KNN_GROWTH` until ``limit`` rows are visible or the
    index has no more; past :data:`VEC_MAX_K` it falls back to ``exact_scan``. So an excluded
    row never takes a visible row's place.
    """
    load_sqlite_vec(conn)
    thread_id = partition_of(conn, where)
    if thread_id == NO_PARTITION:
        return []
    k = min(VEC_MAX_K, limit * KNN_OVERFETCH_FACTOR)
    while True:
        found = knn(conn, space.id, vector, k=k, thread_id=thread_id)
        shown = visible(conn, space, [rowid for rowid, _ in found])
        hits = [(shown[rowid], d) for rowid, d in found if rowid in shown]
        if len(hits) >= limit or len(found) < k:
            return hits[:limit]
        if k >= VEC_MAX_K:
            return exact_scan(conn, space, vector, thread_id, limit)
        k = min(VEC_MAX_K, k * KNN_GROWTH)


def recent_threads(
    conn: apsw.Connection, where: SearchFilter, budget: int | None = None
) -> list[int]:
    """The threads a search may read, newest activity first, until their messages (an upper
    bound on their vectors) reach ``budget`` (default :data:`GLOBAL_SCAN_VECTORS`)."""
    budget = GLOBAL_SCAN_VECTORS if budget is None else budget
    gate = thread_gate(without_channel(where))
    chosen: list[int] = []
    covered = 0
    rows = conn.execute(
        f"SELECT t.id, t.next_seq - 1 FROM threads t WHERE 1{gate.sql} "
        "ORDER BY t.last_activity DESC, t.id DESC",
        gate.params,
    )
    for thread_id, size in rows:
        if covered >= budget:
            break
        chosen.append(int(thread_id))
        covered += int(size)
    return chosen


def nearest_recent(
    conn: apsw.Connection,
    space: EmbeddingSpace,
    vector: Sequence[float],
    *,
    where: SearchFilter,
    limit: int,
    visible: Visible,
    exact_scan: ExactScan,
) -> list[tuple[str, float]]:
    """The exact ``limit`` nearest visible rows among the newest threads' vectors
    (:func:`recent_threads`), nearest first, ties by row id: the bounded vector leg of a
    search of every thread in a big space. Each thread's partition is searched inside the
    index with ``k`` grown (up to :data:`VEC_MAX_K`, then ``exact_scan`` per thread) until no
    row a thread's KNN left out can be nearer than the ``limit``-th visible row."""
    load_sqlite_vec(conn)
    threads = recent_threads(conn, where)
    k = min(VEC_MAX_K, limit * KNN_OVERFETCH_FACTOR)
    while True:
        found: list[tuple[int, float]] = []
        edges: list[float] = []  # the k-th distance of each thread that may hold more
        for thread_id in threads:
            rows = knn(conn, space.id, vector, k=k, thread_id=thread_id)
            found.extend(rows)
            if len(rows) >= k:
                edges.append(rows[-1][1])
        found.sort(key=lambda pair: (pair[1], pair[0]))
        hits: list[tuple[str, float]] = []
        for start in range(0, len(found), k):
            window = found[start : start + k]
            shown = visible(conn, space, [rowid for rowid, _ in window])
            hits.extend((shown[rowid], d) for rowid, d in window if rowid in shown)
            if len(hits) >= limit:
                break
        cut = hits[limit - 1][1] if len(hits) >= limit else math.inf
        if not edges or min(edges) > cut:
            return hits[:limit]
        if k >= VEC_MAX_K:
            merged = [hit for t in threads for hit in exact_scan(conn, space, vector, t, limit)]
            return sorted(merged, key=lambda pair: pair[1])[:limit]
        k = min(VEC_MAX_K, k * KNN_GROWTH)
