"""The in-memory copy of a big space's newest threads: the vector leg of a search of every
thread at a million messages (#14: hybrid ``search`` p95 ≤ 300 ms).

A search of every thread in a space of more than ``vectors.GLOBAL_EXACT_KNN_MAX`` vectors is
exact over the newest threads' vectors (``vectors.recent_threads``: threads by last activity
until their messages reach ``vectors.GLOBAL_SCAN_VECTORS``); the hybrid domains add the exact
distance of every keyword candidate, wherever it is. sqlite-vec answers that window with one
KNN per thread, and each reads its partition's whole chunk (1 024 slots): ~2 ms per thread,
~0.2 s of CPU for the 100 threads of 50 000 vectors. This module keeps the window's vectors as
one :class:`~recallbox.storage.sqlite.vector_cache.SpaceCopy` instead, searched by
``vector_cache.nearest`` (numpy ranks, sqlite-vec's ``vec_distance_cosine`` measures the rows
near the cut: the same ids and distances as sqlite-vec's own KNN over those threads).

* **Loading**: each thread's vectors come from one KNN inside its partition with ``k`` =
  ``vectors.VEC_MAX_K`` (which reads the partition's chunk once and returns its vectors); a
  partition that may hold more (the KNN filled ``k``) has the rest read by row id.
* **Validity**: a copy serves while the space's ``(version, created_at)`` on the caller's
  snapshot equals the one it was read at (every vector write bumps the version) *and* the
  window holds the same threads. When only the threads changed (a thread's new activity moved
  it into the window), the threads already held are kept and only the new ones are read.
* **Memory**: at most one window per space, ``GLOBAL_SCAN_VECTORS × dim × 4`` bytes (≈ 77 MB
  for 384-d vectors), whatever the history's size.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from recallbox.storage.sqlite.lazy_numpy import np
from recallbox.storage.sqlite.vector_cache import SpaceCopy, space_token
from recallbox.storage.sqlite.vectors import VEC_MAX_K, to_blob

if TYPE_CHECKING:
    from recallbox.storage.values import EmbeddingSpace


#: ``rowids_of(conn, partition)``: every row id of ``partition`` that has a vector in the space.
RowidsOf = Callable[[apsw.Connection, int], list[int]]
#: Row ids read by one point-lookup statement (a partition larger than ``VEC_MAX_K``).
POINT_BATCH = 500


def _partition_rows(
    conn: apsw.Connection, table: str, dim: int, partition: int, rowids_of: RowidsOf
) -> list[tuple[int, bytes]]:
    """``(rowid, stored bytes)`` of every vector of ``partition``."""
    probe = to_blob([1.0] + [0.0] * (dim - 1))
    rows: list[tuple[int, bytes]] = [
        (int(r[0]), bytes(r[1]))
        for r in conn.execute(
            f"SELECT rowid, embedding FROM {table} WHERE embedding MATCH ? AND k = ? "
            "AND thread_id = ?",
            (probe, VEC_MAX_K, partition),
        )
    ]
    if len(rows) < VEC_MAX_K:
        return rows
    have = {rowid for rowid, _ in rows}
    rest = [rowid for rowid in rowids_of(conn, partition) if rowid not in have]
    for start in range(0, len(rest), POINT_BATCH):
        batch = rest[start : start + POINT_BATCH]
        rows.extend(
            (int(r[0]), bytes(r[1]))
            for r in conn.execute(
                f"SELECT rowid, embedding FROM {table} WHERE rowid IN "
                f"({','.join('?' * len(batch))})",
                batch,
            )
        )
    return rows


def _assemble(token: tuple[int, str], dim: int, pieces: list[tuple[Any, Any, Any]]) -> SpaceCopy:
    """One copy from ``(rowids, partitions, matrix)`` pieces, rows ascending by id; each piece
    is written into the copy's one matrix and released (the peak is about one copy's bytes
    beyond the pieces, not three)."""
    rowids = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    partitions = np.concatenate([p[1] for p in pieces]) if pieces else np.zeros(0, dtype=np.int64)
    order = np.argsort(rowids, kind="stable")
    place = np.empty(len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    matrix = np.empty((len(order), dim), dtype=np.float32)
    start = 0
    while pieces:
        piece_rowids, _, piece_matrix = pieces.pop(0)
        matrix[place[start : start + len(piece_rowids)]] = piece_matrix
        start += len(piece_rowids)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
    return SpaceCopy(token, rowids[order], partitions[order], matrix, norms)


def _piece(rows: list[tuple[int, bytes]], partition: int, dim: int) -> tuple[Any, Any, Any]:
    rowids = np.fromiter((r for r, _ in rows), dtype=np.int64, count=len(rows))
    data = b"".join(blob for _, blob in rows)
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(rows), dim)
    return rowids, np.full(len(rows), partition, dtype=np.int64), matrix


class WindowCopies:
    """The window copy of each big space, keyed by space id; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[int, tuple[tuple[int, ...], SpaceCopy]] = {}

    def get(
        self,
        conn: apsw.Connection,
        space: EmbeddingSpace,
        table: str,
        threads: Sequence[int],
        rowids_of: RowidsOf,
    ) -> SpaceCopy | None:
        """The copy of ``threads``' vectors current on ``conn``'s snapshot (read as needed);
        ``None`` when numpy is missing or the space is gone."""
        if np is None:
            return None
        token = space_token(conn, space.id)
        if token is None:
            return None
        key = tuple(threads)
        with self._lock:
            found = self._windows.get(space.id)
        if found is not None and found[1].token == token and found[0] == key:
            return found[1]
        reuse = found[1] if found is not None and found[1].token == token else None
        held = set(found[0]) if reuse is not None and found is not None else set()
        pieces = []
        for partition in key:
            if partition in held and reuse is not None:
                at = np.nonzero(reuse.partitions == partition)[0]
                pieces.append((reuse.rowids[at], reuse.partitions[at], reuse.matrix[at]))
            else:
                rows = _partition_rows(conn, table, space.dim, partition, rowids_of)
                pieces.append(_piece(rows, partition, space.dim))
        copy = _assemble(token, space.dim, pieces)
        with self._lock:
            self._windows[space.id] = (key, copy)
        return copy

    def held(self, conn: apsw.Connection, space: EmbeddingSpace) -> SpaceCopy | None:
        """The window copy of ``space`` held now, when it is current on ``conn``'s snapshot
        (whatever threads it holds; nothing is read)."""
        with self._lock:
            found = self._windows.get(space.id)
        if found is None or found[1].token != space_token(conn, space.id):
            return None
        return found[1]

    def clear(self) -> None:
        """Forget every window."""
        with self._lock:
            self._windows.clear()
