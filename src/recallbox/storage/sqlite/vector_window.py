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

* **Loading**: each thread's vectors are read by row id from its chunks
  (``vec0_read.read_vectors``, the row ids from the ``embeddings`` bookkeeping): ~1 ms for a
  thread of 500 384-d vectors, 0.45 s for one of 100 000. A KNN inside the partition with
  ``k = 4096`` (the former way) cost 4 ms and 1.3 s, and the rows past its ``k`` were read by
  ``vec0`` point queries (~50 µs each): 6.6 s of CPU for that thread.
* **Validity**: a copy serves while the space's ``(version, created_at)`` on the caller's
  snapshot equals the one it was read at (every vector write bumps the version) *and* the
  window holds the same threads. When only the threads changed (a thread's new activity moved
  it into the window), the threads already held are kept and only the new ones are read.
* **Memory**: at most one window per space, about ``GLOBAL_SCAN_VECTORS × dim × 4`` bytes
  (≈ 77 MB for 384-d vectors), and never more than :data:`WINDOW_MAX_VECTORS` vectors,
  whatever the history's size: the newest threads are taken until their messages reach the
  budget, so the last one can be any size (one long thread of a million messages). A window
  that would hold more is not kept (the search stays in sqlite-vec, one KNN per thread), and
  that verdict is remembered until the space or the window's threads change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from recallbox.storage.sqlite import vec0_read
from recallbox.storage.sqlite.lazy_numpy import np
from recallbox.storage.sqlite.vector_cache import SpaceCopy, space_token
from recallbox.storage.sqlite.vectors import GLOBAL_SCAN_VECTORS

if TYPE_CHECKING:
    from recallbox.storage.values import EmbeddingSpace


#: ``rowids_of(conn, partition, limit)``: the row ids of ``partition`` that have a vector in the
#: space, at most ``limit`` of them.
RowidsOf = Callable[[apsw.Connection, int, int], list[int]]
#: The most vectors a window copy holds: twice the budget its threads are chosen by (the last
#: thread taken may overshoot it); a bigger window is searched in sqlite-vec instead.
WINDOW_MAX_VECTORS = 2 * GLOBAL_SCAN_VECTORS


def _partition_rows(
    conn: apsw.Connection, space: EmbeddingSpace, partition: int, rowids_of: RowidsOf, room: int
) -> list[tuple[int, bytes]] | None:
    """``(rowid, stored bytes)`` of every vector of ``partition``: its row ids from the
    bookkeeping, the bytes from its chunks (``vec0_read``); ``None`` (no vector read) when it
    holds more than ``room``."""
    rowids = rowids_of(conn, partition, room + 1)
    if len(rowids) > room:
        return None
    return list(vec0_read.read_vectors(conn, space.id, space.dim, rowids).items())


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
        #: space id → the ``(threads, token)`` whose window was too big to keep
        self._too_big: dict[int, tuple[tuple[int, ...], tuple[int, str]]] = {}

    def get(
        self,
        conn: apsw.Connection,
        space: EmbeddingSpace,
        threads: Sequence[int],
        rowids_of: RowidsOf,
    ) -> SpaceCopy | None:
        """The copy of ``threads``' vectors current on ``conn``'s snapshot (read as needed);
        ``None`` when numpy is missing, the space is gone, or the window would hold more than
        :data:`WINDOW_MAX_VECTORS` vectors."""
        if np is None:
            return None
        token = space_token(conn, space.id)
        if token is None:
            return None
        key = tuple(threads)
        with self._lock:
            found = self._windows.get(space.id)
            if self._too_big.get(space.id) == (key, token):
                return None
        if found is not None and found[1].token == token and found[0] == key:
            return found[1]
        reuse = found[1] if found is not None and found[1].token == token else None
        held = set(found[0]) if reuse is not None and found is not None else set()
        pieces: list[tuple[Any, Any, Any]] = []
        size = 0
        for partition in key:
            piece: tuple[Any, Any, Any] | None
            if partition in held and reuse is not None:
                at = np.nonzero(reuse.partitions == partition)[0]
                piece = (reuse.rowids[at], reuse.partitions[at], reuse.matrix[at])
            else:
                room = WINDOW_MAX_VECTORS - size
                rows = _partition_rows(conn, space, partition, rowids_of, room)
                piece = None if rows is None else _piece(rows, partition, space.dim)
            if piece is None or size + len(piece[0]) > WINDOW_MAX_VECTORS:
                # Trigger: the window's threads hold more vectors than WINDOW_MAX_VECTORS (the
                # last one taken can be of any size). Why: the copy's memory would grow with
                # that thread, unbounded. Outcome: no copy (the caller searches sqlite-vec),
                # until the space or the window's threads change.
                with self._lock:
                    self._windows.pop(space.id, None)
                    self._too_big[space.id] = (key, token)
                return None
            pieces.append(piece)
            size += len(piece[0])
        copy = _assemble(token, space.dim, pieces)
        with self._lock:
            self._windows[space.id] = (key, copy)
            self._too_big.pop(space.id, None)
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
            self._too_big.clear()
