"""An in-memory copy of a space's vectors: exact nearest-neighbour search without sqlite-vec's
per-partition scan (#12: the vector legs of a five-domain ``recall``).

A ``vec0`` table partitioned by thread keeps one chunk per partition, so a KNN of every thread
reads every partition's chunk: ~0.1 s of CPU for 10 000 vectors in 100 threads, five times per
recall. This module keeps each space's vectors as one matrix (numpy, when installed: every
model embedder needs it) and answers the same question from it:

* **Identical results.** The matrix ranks the candidates in float64 (an approximate distance
  within :func:`margin` of sqlite-vec's float32 one); every row whose approximate distance is
  within ``2 · margin`` of the ``limit``-th visible row's is then measured with sqlite-vec's own
  ``vec_distance_cosine`` on its stored bytes, and the rows are ranked by that distance (ties
  by row id). So the ids and distances are those of the exact search; only the order of equal
  distances, which sqlite-vec leaves unspecified, is fixed.
* **The privacy gate stays in front**: the caller's ``visible`` (the corpus's visibility rule,
  the filter and the fresh-vector check, in SQL, on the caller's read snapshot) decides which
  candidates exist, exactly as it filters sqlite-vec's KNN result.
* **Invalidation**: every write to a space's ``vec0`` table bumps ``embedding_spaces.version``
  in the same transaction (``vectors.upsert`` calls ``bump_version``; dropping a space deletes
  its row). A copy is used only while the ``(version, created_at)`` read on the caller's
  snapshot equals the one it was built at, so a write by any connection of any process is seen
  by the next search. Rows deleted without a version bump (a removed chunk's or symbol's ``vec0`` row) are
  never fresh, so the visibility check drops them as it drops them from a KNN result.
* **Memory**: a space of more than :data:`CACHE_MAX_VECTORS` vectors is not copied (its search
  stays in sqlite-vec), and copies beyond :data:`CACHE_MAX_BYTES` in all evict the oldest.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import apsw

from recallbox.storage.sqlite.lazy_numpy import np
from recallbox.storage.sqlite.vectors import to_blob

if TYPE_CHECKING:
    from recallbox.storage.values import EmbeddingSpace

#: The largest space copied into memory (vectors): 50 000 × 384 floats ≈ 77 MB.
CACHE_MAX_VECTORS = 50_000
#: The most bytes of vectors kept in memory over every space of a store.
CACHE_MAX_BYTES = 256 * 1024 * 1024
#: Bound on the rounding error of a float32 cosine distance, per dimension (sqlite-vec's sums
#: and the matrix product both run in float32: each is off by about ``dim · 2⁻²⁴`` at worst;
#: 16× that is the margin).
DISTANCE_ERROR_PER_DIM = 2.0**-20
#: Rows measured by one ``vec_distance_cosine`` statement.
EXACT_BATCH = 400
#: The candidate window (first ``limit`` rows) grows by this while too few of them are visible.
WINDOW_GROWTH = 4

#: ``visible(conn, space, rowids)`` → rowid → public id (``vectors.Visible``).
Visible = Callable[[apsw.Connection, "EmbeddingSpace", Sequence[int]], dict[int, str]]


def available() -> bool:
    """Whether copies can be kept (numpy is installed)."""
    return np is not None


def margin(dim: int) -> float:
    """How far an approximate distance may be from sqlite-vec's (doubled for the candidate
    window: both the threshold row and the candidate may be off)."""
    return max(1, dim) * DISTANCE_ERROR_PER_DIM


@dataclass(frozen=True, slots=True)
class SpaceCopy:
    """One space's vectors at one version: row ids ascending, their partition keys, the
    float32 matrix (the stored bytes, row by row) and each row's norm."""

    token: tuple[int, str]
    rowids: Any  # np.ndarray[int64]
    partitions: Any  # np.ndarray[int64]
    matrix: Any  # np.ndarray[float32] of shape (n, dim)
    norms: Any  # np.ndarray[float64]

    @property
    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.rowids.nbytes + self.partitions.nbytes)

    def blob(self, index: int) -> bytes:
        """Row ``index``'s stored bytes (float32 little-endian, as ``vec0`` keeps them)."""
        return bytes(self.matrix[index].tobytes())

    def positions(self, rowids: Sequence[int]) -> dict[int, int]:
        """rowid → matrix row, for the ``rowids`` this copy holds."""
        wanted = np.asarray(list(rowids), dtype=np.int64)
        at = np.searchsorted(self.rowids, wanted)
        at = np.minimum(at, max(0, len(self.rowids) - 1))
        hit = self.rowids[at] == wanted if len(self.rowids) else np.zeros(len(wanted), bool)
        return {int(r): int(i) for r, i, ok in zip(wanted, at, hit, strict=True) if ok}


def space_token(conn: apsw.Connection, space_id: int) -> tuple[int, str] | None:
    """``(version, created_at)`` of a space on ``conn``'s snapshot (``None``: no such space)."""
    row = conn.execute(
        "SELECT version, created_at FROM embedding_spaces WHERE id = ?", (space_id,)
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def load(conn: apsw.Connection, table: str, dim: int, token: tuple[int, str]) -> SpaceCopy:
    """Read every vector of ``vec0`` table ``table`` (on ``conn``'s snapshot)."""
    rows: list[Any] = conn.execute(f"SELECT rowid, thread_id, embedding FROM {table}").fetchall()
    rowids = np.fromiter((int(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    partitions = np.fromiter((int(r[1]) for r in rows), dtype=np.int64, count=len(rows))
    data = b"".join(bytes(r[2]) for r in rows)
    matrix = np.frombuffer(data, dtype="<f4").reshape(len(rows), dim)
    order = np.argsort(rowids, kind="stable")
    matrix = np.ascontiguousarray(matrix[order])
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
    return SpaceCopy(token, rowids[order], partitions[order], matrix, norms)


def exact_distances(
    conn: apsw.Connection, vector: Sequence[float], blobs: Sequence[bytes]
) -> list[float]:
    """sqlite-vec's ``vec_distance_cosine`` of ``vector`` to each stored vector ``blobs``."""
    query = to_blob(vector)
    out: list[float] = []
    for start in range(0, len(blobs), EXACT_BATCH):
        batch = blobs[start : start + EXACT_BATCH]
        values = ",".join("(?, ?)" for _ in batch)
        params: list[object] = [query]
        for i, blob in enumerate(batch):
            params += [i, blob]
        rows: list[Any] = conn.execute(
            f"SELECT column1, vec_distance_cosine(column2, ?) FROM (VALUES {values})", params
        ).fetchall()
        found = {int(r[0]): float(r[1]) for r in rows}
        out.extend(found[i] for i in range(len(batch)))
    return out


def _dots(matrix: Any, query: Any) -> Any:
    """Each row's dot product with ``query``, on this thread: ``einsum`` without ``optimize``
    does not call BLAS, whose worker threads cost several times the product itself on a busy
    machine."""
    return np.einsum("ij,j->i", matrix, query)


def _order_key(distance: float, rowid: int) -> tuple[bool, float, int]:
    """Nearest first, ties by row id; a NaN (a zero vector) last."""
    return (math.isnan(distance), distance, rowid)


def nearest(
    conn: apsw.Connection,
    copy: SpaceCopy,
    space: EmbeddingSpace,
    vector: Sequence[float],
    *,
    partition: int | None,
    limit: int,
    visible: Visible,
) -> list[tuple[str, float]]:
    """The exact ``limit`` nearest rows ``visible`` lets through (in ``partition`` when given),
    as ``(public id, distance)``, nearest first: see the module docstring."""
    query = np.asarray(vector, dtype=np.float32)
    if partition is None:
        index = np.arange(len(copy.rowids))
        dots = _dots(copy.matrix, query)
    else:
        index = np.nonzero(copy.partitions == partition)[0]
        dots = _dots(copy.matrix[index], query)
    if limit < 1 or len(index) == 0:
        return []
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = copy.norms[index] * float(np.linalg.norm(query.astype(np.float64)))
        approx = 1.0 - dots.astype(np.float64) / scale
    approx = np.where(np.isnan(approx), np.inf, approx)
    seen = _Seen(len(index))
    window = min(len(index), limit)
    while True:
        if window < len(index):
            part = np.argpartition(approx, window - 1)[:window]
        else:
            part = np.arange(len(index))
        part = part[np.lexsort((copy.rowids[index[part]], approx[part]))]
        seen.check(conn, space, copy, index, part, visible)
        ranked = part[seen.shown[part]]
        if len(ranked) >= limit or window >= len(index):
            break
        window = min(len(index), window * WINDOW_GROWTH)
    orthogonal = np.zeros(0, dtype=np.int64)
    if len(ranked) >= limit:
        threshold = float(approx[ranked[limit - 1]]) + 2 * margin(space.dim)
        near = np.nonzero(approx <= threshold)[0]
        sure = _orthogonal(copy, index, near, query)
        orthogonal, near = near[sure], near[~sure]
        seen.check(conn, space, copy, index, near, visible)
        ranked = near[seen.shown[near]]
    rows = index[ranked]
    measured = exact_distances(conn, vector, [copy.blob(int(r)) for r in rows])
    scored = sorted(
        zip(ranked.tolist(), measured, strict=True),
        key=lambda pd: _order_key(pd[1], int(copy.rowids[index[pd[0]]])),
    )
    if len(orthogonal):
        scored = _with_orthogonal(
            conn, space, copy, index, seen, visible, scored, orthogonal, limit
        )
    return [(seen.public[p], d) for p, d in scored[:limit]]


def _orthogonal(copy: SpaceCopy, index: Any, near: Any, query: Any) -> Any:
    """Which of the ``near`` positions share no non-zero dimension with ``query`` (every
    product of the dot is 0, and both vectors are non-zero): sqlite-vec's cosine distance of
    such a row is exactly 1.0, so it need not be measured. A sparse query vector (a hashing
    embedder's) has thousands of them tied at the cut."""
    support = np.nonzero(query)[0]
    if len(near) == 0 or len(support) == 0 or 2 * len(support) > len(query):
        return np.zeros(len(near), dtype=bool)
    rows = index[near]
    touches = np.any(copy.matrix[rows][:, support] != 0, axis=1)
    return ~touches & (copy.norms[rows] > 0)


def _with_orthogonal(
    conn: apsw.Connection,
    space: EmbeddingSpace,
    copy: SpaceCopy,
    index: Any,
    seen: _Seen,
    visible: Visible,
    scored: list[tuple[int, float]],
    orthogonal: Any,
    limit: int,
) -> list[tuple[int, float]]:
    """``scored`` (measured, visible, by distance then row id) with the ``orthogonal``
    positions (distance exactly 1.0) merged in: those are asked about in row id order, a
    batch at a time, only until the first ``limit`` places are settled."""
    below = [pd for pd in scored if pd[1] < 1.0]
    level = [pd for pd in scored if pd[1] == 1.0]
    above = [pd for pd in scored if not pd[1] <= 1.0]  # farther, or NaN
    needed = limit - len(below)
    if needed <= 0:
        return scored

    def rowid(pd: tuple[int, float]) -> int:
        return int(copy.rowids[index[pd[0]]])

    order = orthogonal[np.argsort(copy.rowids[index[orthogonal]], kind="stable")]
    batch = max(needed, EXACT_BATCH)
    for start in range(0, len(order), batch):
        chunk = order[start : start + batch]
        seen.check(conn, space, copy, index, chunk, visible)
        level += [(int(p), 1.0) for p in chunk if seen.shown[p]]
        last = int(copy.rowids[index[chunk[-1]]])
        if sum(1 for pd in level if rowid(pd) <= last) >= needed:
            break  # every row after this batch has a larger row id
    return below + sorted(level, key=rowid) + above


class _Seen:
    """Which candidates (positions in the searched rows) ``visible`` was asked about, which it
    let through, and their public ids."""

    def __init__(self, size: int) -> None:
        self.checked = np.zeros(size, dtype=bool)
        self.shown = np.zeros(size, dtype=bool)
        self.public: dict[int, str] = {}

    def check(
        self,
        conn: apsw.Connection,
        space: EmbeddingSpace,
        copy: SpaceCopy,
        index: Any,
        candidates: Any,
        visible: Visible,
    ) -> None:
        """Ask ``visible`` about the ``candidates`` not asked about yet."""
        fresh = candidates[~self.checked[candidates]]
        if len(fresh) == 0:
            return
        self.checked[fresh] = True
        by_rowid = dict(zip(copy.rowids[index[fresh]].tolist(), fresh.tolist(), strict=True))
        for rowid, public in visible(conn, space, list(by_rowid)).items():
            position = by_rowid[rowid]
            self.shown[position] = True
            self.public[position] = public


class VectorCache:
    """The copies of one store's spaces, keyed by space id; thread-safe. ``enabled=False``
    keeps none (every search runs in sqlite-vec: what the differential tests compare with)."""

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled
        self._lock = threading.Lock()
        self._copies: OrderedDict[int, SpaceCopy] = OrderedDict()

    def get(self, conn: apsw.Connection, space: EmbeddingSpace, table: str) -> SpaceCopy | None:
        """The copy of ``space`` current on ``conn``'s snapshot, read when missing or stale;
        ``None`` when no copy is kept (numpy missing, the space too big, or gone)."""
        if np is None or not self.enabled or space.count > CACHE_MAX_VECTORS:
            return None
        token = space_token(conn, space.id)
        if token is None:
            return None
        with self._lock:
            found = self._copies.get(space.id)
        if found is not None and found.token == token:
            return found
        copy = load(conn, table, space.dim, token)
        if len(copy.rowids) > CACHE_MAX_VECTORS:
            return None
        with self._lock:
            self._copies[space.id] = copy
            self._copies.move_to_end(space.id)
            while sum(c.nbytes for c in self._copies.values()) > CACHE_MAX_BYTES:
                self._copies.popitem(last=False)
        return copy

    def __contains__(self, space_id: object) -> bool:
        """Whether a copy of space ``space_id`` is kept (current or not)."""
        with self._lock:
            return space_id in self._copies

    def clear(self) -> None:
        """Forget every copy."""
        with self._lock:
            self._copies.clear()
