"""The vectors of the SQLite backend, over any corpus (``corpora.py``): spaces, KNN, passes.

A space's ``owner`` is its corpus. Vectors are used only while their recorded content hash
equals the row's (:attr:`~recallbox.storage.sqlite.corpora.Corpus.fresh_vector`), so a changed
text never ranks by its old vector. Nearest-neighbour search is exact for the rows a caller
may see (:func:`recallbox.storage.sqlite.vectors.nearest_visible`): a channel restricts the
scan inside the index, the rest of the visibility rule filters the KNN result with ``k`` grown
until ``limit`` visible rows are found, and an exact filtered scan takes over past
sqlite-vec's ``k`` limit. A search of every thread in a space of more than
:data:`~recallbox.storage.sqlite.vectors.GLOBAL_EXACT_KNN_MAX` vectors is exact over the newest
threads' :data:`~recallbox.storage.sqlite.vectors.GLOBAL_SCAN_VECTORS` vectors
(:func:`~recallbox.storage.sqlite.vectors.nearest_recent`); the hybrid domains score their
keyword candidates with ``distances`` anyway, so the vector leg of such a search covers the
newest history and every keyword candidate.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import apsw

from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite import vec0_read, vector_cache, vector_health, vector_window, vectors
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import Corpus, corpus_of
from recallbox.storage.sqlite.rows import json_list, now
from recallbox.storage.sqlite.visibility import Clause
from recallbox.storage.values import EmbeddingSpace, EmbedTarget

REEMBED_HINT = vector_health.REEMBED_HINT
log = logging.getLogger(__name__)


def _visible(c: Corpus, where: SearchFilter) -> vectors.Visible:
    """rowid → public id of the visible rows with a fresh vector among ``rowids``."""
    narrow = c.narrow(where)
    sql = (
        f"SELECT {c.alias}.id, {c.public_id} FROM json_each(?) AS j "
        f"CROSS JOIN {c.table} {c.alias} ON {c.alias}.id = j.value {c.joins} "
        f"WHERE {c.rule}{narrow.sql} AND {c.fresh_vector}"
    )

    def visible(
        conn: apsw.Connection, space: EmbeddingSpace, rowids: Sequence[int]
    ) -> dict[int, str]:
        rows = conn.execute(sql, (json_list(rowids), *narrow.params, space.id))
        return {int(r[0]): str(r[1]) for r in rows}

    return visible


def _exact_scan(c: Corpus, where: SearchFilter) -> vectors.ExactScan:
    """The ``limit`` nearest visible rows by a filtered scan of the space's whole table."""
    narrow = c.narrow(where)

    def scan(
        conn: apsw.Connection,
        space: EmbeddingSpace,
        vector: Sequence[float],
        partition: int | None,
        limit: int,
    ) -> list[tuple[str, float]]:
        sql = (
            f"SELECT {c.public_id} AS rid, vec_distance_cosine(v.embedding, ?) AS d "
            f"FROM {vectors.table_name(space.id)} v "
            f"JOIN {c.table} {c.alias} ON {c.alias}.id = v.rowid {c.joins} "
            f"WHERE {c.rule}{narrow.sql} AND {c.fresh_vector}"
        )
        params: list[object] = [vectors.to_blob(vector), *narrow.params, space.id]
        if partition is not None:
            sql += " AND v.thread_id = ?"  # the vec0 partition key column (vectors.py)
            params.append(partition)
        sql += " ORDER BY d, rid LIMIT ?"
        params.append(limit)
        return [(str(r[0]), float(r[1])) for r in conn.execute(sql, params)]

    return scan


class VectorMixin:
    """:class:`~recallbox.storage.base.VectorIndex` for :class:`SQLiteStore`."""

    pool: ConnectionPool
    vector_copies: vector_cache.VectorCache
    vector_windows: vector_window.WindowCopies

    def corpus_size(self, corpus: str) -> int:
        c = corpus_of(corpus)
        with self.pool.reading() as conn:
            row = conn.execute(f"SELECT count(*) FROM {c.table}").fetchone()
        return int(row[0]) if row else 0

    # -- embedding spaces ------------------------------------------------------------------
    def embedding_spaces(self, owner: str) -> list[EmbeddingSpace]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                # ``vectors`` is kept by triggers on ``embeddings`` (migration 13)
                "SELECT s.id, s.owner, s.model_id, s.dim, s.vectors "
                "FROM embedding_spaces s WHERE s.owner = ? ORDER BY s.id",
                (owner,),
            ).fetchall()
        return [EmbeddingSpace(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]

    def ensure_embedding_space(self, owner: str, model_id: str, dim: int) -> EmbeddingSpace:
        corpus_of(owner)
        with self.pool.transaction() as conn:
            row = conn.execute(
                "SELECT id FROM embedding_spaces WHERE owner = ? AND model_id = ? AND dim = ?",
                (owner, model_id, dim),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO embedding_spaces (owner, model_id, dim, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (owner, model_id, dim, now()),
                )
                space_id = int(conn.last_insert_rowid())
            else:
                space_id = int(row[0])
            vectors.create_table(conn, space_id, dim)
        return next(s for s in self.embedding_spaces(owner) if s.id == space_id)

    def drop_embedding_space(self, space: EmbeddingSpace) -> int:
        with self.pool.transaction() as conn:
            row = conn.execute(
                "SELECT count(*) FROM embeddings WHERE space_id = ?", (space.id,)
            ).fetchone()
            conn.execute("DELETE FROM embeddings WHERE space_id = ?", (space.id,))
            vectors.drop_table(conn, space.id)
            conn.execute("DELETE FROM embedding_spaces WHERE id = ?", (space.id,))
        return int(row[0]) if row else 0

    # -- the vector leg --------------------------------------------------------------------
    def nearest(
        self, vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        c = corpus_of(space.owner)
        visible, scan = _visible(c, where), _exact_scan(c, where)
        if limit < 1 or space.count == 0:
            return []
        with self.pool.snapshot() as conn:
            if not vector_health.table_exists(conn, space.id):
                log.warning("vector table of space %s is missing: %s", space.id, REEMBED_HINT)
                return []  # the vector leg is absent; keyword ranking stands alone
            if (
                where.channel is None
                and c.channel_sql is not None
                and space.count > vectors.GLOBAL_EXACT_KNN_MAX
            ):
                # Trigger: a search of every thread over a big space. Why: an exact scan of
                # every vector costs ~0.1 s CPU per 100 000. Outcome: exact over the newest
                # threads (from their in-memory copy when it can be kept); the caller scores
                # its keyword candidates with distances().
                window = self._window_copy(conn, c, space, where)
                if window is None:
                    return vectors.nearest_recent(
                        conn,
                        space,
                        vector,
                        where=where,
                        limit=limit,
                        visible=visible,
                        exact_scan=scan,
                    )
                return vector_cache.nearest(
                    conn, window, space, vector, partition=None, limit=limit, visible=visible
                )
            copy = self._vector_copy(conn, space)
            if copy is not None:
                partition = c.partition_of(conn, where)
                if partition == vectors.NO_PARTITION:
                    return []
                return vector_cache.nearest(
                    conn, copy, space, vector, partition=partition, limit=limit, visible=visible
                )
            return vectors.nearest_visible(
                conn,
                space,
                vector,
                where=where,
                limit=limit,
                visible=visible,
                exact_scan=scan,
                partition_of=c.partition_of,
            )

    def distances(
        self,
        vector: Sequence[float],
        ids: Sequence[str],
        *,
        space: EmbeddingSpace,
        where: SearchFilter,
    ) -> dict[str, float]:
        c = corpus_of(space.owner)
        narrow = c.narrow(where)
        if not ids or space.count == 0:
            return {}
        with self.pool.snapshot() as conn:
            if not vector_health.table_exists(conn, space.id):
                return {}  # the vector leg is absent (doctor reports the missing table)
            copy = self._vector_copy(conn, space)
            if copy is not None:
                return _cached_distances(conn, copy, c, narrow, vector, ids, space)
            window = None
            if not self.pool.in_write() and self.vector_copies.enabled:
                window = self.vector_windows.held(conn, space)
            if window is not None:
                # the rows of the newest threads from their copy, any other by row id
                return _cached_distances(conn, window, c, narrow, vector, ids, space, rest=True)
        sql = (
            f"SELECT {c.given}, vec_distance_cosine(v.embedding, ?) FROM {c.keys_from} "
            f"JOIN {vectors.table_name(space.id)} v ON v.rowid = {c.alias}.id "
            f"WHERE {c.rule}{narrow.sql} AND {c.fresh_vector}"
        )
        params = (vectors.to_blob(vector), c.keys(ids), *narrow.params, space.id)
        with self.pool.reading() as conn:
            if not vector_health.table_exists(conn, space.id):
                return {}  # the vector leg is absent (doctor reports the missing table)
            vectors.load_sqlite_vec(conn)
            return {str(r[0]): float(r[1]) for r in conn.execute(sql, params)}

    def _window_copy(
        self, conn: apsw.Connection, c: Corpus, space: EmbeddingSpace, where: SearchFilter
    ) -> vector_cache.SpaceCopy | None:
        """The in-memory copy of the newest threads' vectors (``vector_window.py``) current on
        ``conn``'s snapshot, or ``None`` (copies off, or inside a write transaction)."""
        if self.pool.in_write() or not self.vector_copies.enabled:
            return None
        sql = (
            f"SELECT e.target_rowid FROM embeddings e JOIN {c.table} {c.alias} "
            f"ON {c.alias}.id = e.target_rowid WHERE e.space_id = ? "
            f"AND {c.alias}.{c.partition_column} = ? LIMIT ?"
        )

        def rowids_of(conn: apsw.Connection, partition: int, limit: int) -> list[int]:
            return [int(r[0]) for r in conn.execute(sql, (space.id, partition, limit))]

        threads = vectors.recent_threads(conn, where)
        vectors.load_sqlite_vec(conn)
        with self.pool.unstoppable(conn):  # a copy read for a late search serves the next ones
            return self.vector_windows.get(conn, space, threads, rowids_of)

    def _vector_copy(
        self, conn: apsw.Connection, space: EmbeddingSpace
    ) -> vector_cache.SpaceCopy | None:
        """The in-memory copy of ``space``'s vectors current on ``conn``'s snapshot, or
        ``None`` (no copy kept; inside a write transaction, whose writes may yet roll back)."""
        if self.pool.in_write():
            return None
        vectors.load_sqlite_vec(conn)
        with self.pool.unstoppable(conn):  # a copy read for a late search serves the next ones
            return self.vector_copies.get(conn, space, vectors.table_name(space.id))

    # -- embedding passes ------------------------------------------------------------------
    def embed_targets(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        c = corpus_of(space.owner)
        sql = (
            f"SELECT {c.alias}.id, {c.public_id}, {c.text}, {c.alias}.content_hash "
            + _stale_sql(c, drilled_only)
            + f" AND {c.alias}.id > ? ORDER BY {c.alias}.id LIMIT ?"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, (space.id, after, limit)).fetchall()
        return [EmbedTarget(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def count_embed_targets(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        c = corpus_of(space.owner)
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT count(*) " + _stale_sql(c, drilled_only), (space.id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def put_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        c = corpus_of(space.owner)
        if not items:
            return 0
        with self.pool.transaction() as conn:
            return vectors.put_embeddings(
                conn,
                space,
                items,
                owner_table=c.table,
                now=now(),
                partition_column=c.partition_column,
            )


def _cached_distances(
    conn: apsw.Connection,
    copy: vector_cache.SpaceCopy,
    c: Corpus,
    narrow: Clause,
    vector: Sequence[float],
    ids: Sequence[str],
    space: EmbeddingSpace,
    *,
    rest: bool = False,
) -> dict[str, float]:
    """:meth:`VectorMixin.distances` from the copy: the visible rows of ``ids`` with a fresh
    vector (the same SQL), measured by sqlite-vec on the copy's bytes of their vectors; with
    ``rest``, rows the copy does not hold are read from the space's table
    (``vec0_read.read_vectors``) and measured the same way."""
    sql = (
        f"SELECT {c.given}, {c.alias}.id FROM {c.keys_from} "
        f"WHERE {c.rule}{narrow.sql} AND {c.fresh_vector}"
    )
    found: list[Any] = conn.execute(sql, (c.keys(ids), *narrow.params, space.id)).fetchall()
    at = copy.positions([int(r[1]) for r in found])
    kept = [(str(r[0]), at[int(r[1])]) for r in found if int(r[1]) in at]
    measured = vector_cache.exact_distances(conn, vector, [copy.blob(i) for _, i in kept])
    out = {rid: d for (rid, _), d in zip(kept, measured, strict=True)}
    missing = {int(r[1]): str(r[0]) for r in found if int(r[1]) not in at}
    if rest and missing:
        stored = vec0_read.read_vectors(conn, space.id, space.dim, list(missing))
        keys = list(stored)
        measured = vector_cache.exact_distances(conn, vector, [stored[k] for k in keys])
        out.update((missing[k], d) for k, d in zip(keys, measured, strict=True))
    return out


def _stale_sql(c: Corpus, drilled_only: bool) -> str:
    """``FROM … WHERE …`` of the rows whose vector in the space (bound first) is missing or
    stale: embeddable rows of allowed threads (a denied text never goes to an embedder)."""
    a = c.alias
    sql = (
        f"FROM {c.rows_from} LEFT JOIN embeddings e ON e.space_id = ? AND e.target_rowid = {a}.id "
        f"WHERE {c.embeddable} AND {c.gate} "
        f"AND (e.content_hash IS NULL OR e.content_hash != {a}.content_hash)"
    )
    return sql + (f" AND {c.drilled}" if drilled_only else "")
