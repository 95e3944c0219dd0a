"""The vector leg of the PostgreSQL backend, over any corpus (``corpora.py``): spaces, nearest
neighbours, embedding passes.

A vector counts only while its recorded content hash equals its row's
(:attr:`~recallbox.storage.postgres.corpora.Corpus.fresh_vector`). **The filter is always
inside the search, never applied to a k-nearest list afterwards** (DESIGN §4.2):

* a search restricted to one partition (a thread for messages and chunks, a scope for code) is
  an exact scan of that partition's rows, found through the btree on ``part`` — the
  partitioned plan: a ``MATERIALIZED`` CTE keeps the planner from swapping in the HNSW index
  and filtering its k nearest afterwards;
* a search of every partition of a space without an HNSW index (under
  :data:`~recallbox.storage.postgres.vectors.HNSW_MIN_VECTORS` vectors) is an exact scan too;
* a bigger space is searched through its HNSW index with pgvector's iterative scan
  (``hnsw.iterative_scan = relaxed_order``): the visibility rule, the filter and the freshness
  check are conditions of the same statement, evaluated as the index yields rows, and the scan
  goes on until ``limit`` rows passed them (or :data:`HNSW_MAX_SCAN_TUPLES` were visited).
  It is approximate (HNSW) where the exact scan is exact; the hybrid domains score their
  keyword candidates with :meth:`VectorMixin.distances`, which is always exact.

Ties are broken by public id, nearest first.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime

from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import Corpus, corpus_of
from recallbox.storage.postgres.visibility import thread_gate, without_channel
from recallbox.storage.queries import SearchFilter
from recallbox.storage.values import EmbeddingSpace, EmbedTarget

REEMBED_HINT = "run `recallbox doctor --repair`, then `recallbox embed --all`"
#: Candidates the HNSW graph search keeps (pgvector's ``hnsw.ef_search``).
HNSW_EF_SEARCH = 100
#: The most index tuples one iterative HNSW scan visits (pgvector's ``hnsw.max_scan_tuples``).
HNSW_MAX_SCAN_TUPLES = 50_000
#: The settings of an HNSW search's one statement (reset after it: the snapshot reads on).
#: The size decided the graph, so no sequential scan or sort of the space; and each row the
#: index yields is joined and checked through the primary keys (nested loops), as it comes.
#: Left to itself the planner, which expects few rows to pass the freshness join, hashed
#: every visible message and re-read them for every index row: 5.8 s instead of 0.2 s for
#: ``limit`` 400 at 100 000 messages (EXPLAIN ANALYZE, ``benchmarks/backends.py``'s store).
HNSW_PLAN = (
    ("hnsw.ef_search", str(HNSW_EF_SEARCH)),
    ("hnsw.iterative_scan", "relaxed_order"),
    ("hnsw.max_scan_tuples", str(HNSW_MAX_SCAN_TUPLES)),
    ("enable_seqscan", "off"),
    ("enable_sort", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
    ("enable_material", "off"),
)
#: A partition key no row has: the filter names something unknown or denied.
NO_PARTITION = -1
log = logging.getLogger(__name__)


def _partition(conn: Connection, c: Corpus, where: SearchFilter) -> int | None:
    """The partition ``where`` restricts the search to (``None``: every partition), or
    :data:`NO_PARTITION` when it names one that may not be searched."""
    if c.partition_column == "scope_id":
        if where.scope is None:
            return None
        row = conn.execute("SELECT id FROM code_scopes WHERE name = %s", (where.scope,)).fetchone()
        return int(row[0]) if row else NO_PARTITION
    if where.channel is None or c.channel_sql is None:
        return None
    gate = thread_gate(without_channel(where))
    row = conn.execute(
        f"SELECT t.id FROM threads t WHERE t.channel = %s{gate.sql}", (where.channel, *gate.params)
    ).fetchone()
    return int(row[0]) if row else NO_PARTITION


class VectorMixin:
    """:class:`~recallbox.storage.base.VectorIndex` for :class:`PostgresStore`."""

    pool: PgPool

    def corpus_size(self, corpus: str) -> int:
        c = corpus_of(corpus)
        with self.pool.reading() as conn:
            row = conn.execute(f"SELECT count(*) FROM {c.table}").fetchone()
        return int(row[0]) if row else 0

    # -- embedding spaces ------------------------------------------------------------------
    def embedding_spaces(self, owner: str) -> list[EmbeddingSpace]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT s.id, s.owner, s.model_id, s.dim, "
                "(SELECT count(*) FROM embeddings e WHERE e.space_id = s.id) "
                "FROM embedding_spaces s WHERE s.owner = %s ORDER BY s.id",
                (owner,),
            ).fetchall()
        return [EmbeddingSpace(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]

    def ensure_embedding_space(self, owner: str, model_id: str, dim: int) -> EmbeddingSpace:
        corpus_of(owner)
        with self.pool.transaction() as conn:
            row = conn.execute(
                "INSERT INTO embedding_spaces (owner, model_id, dim, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT (owner, model_id, dim) DO NOTHING RETURNING id",
                (owner, model_id, dim, datetime.now(UTC)),
            ).fetchone()
            if row is None:
                row = conn.execute(
                    "SELECT id FROM embedding_spaces WHERE owner = %s AND model_id = %s "
                    "AND dim = %s",
                    (owner, model_id, dim),
                ).fetchone()
            assert row is not None
            space_id = int(row[0])
            vectors.create_table(conn, space_id, dim)
        return next(s for s in self.embedding_spaces(owner) if s.id == space_id)

    def drop_embedding_space(self, space: EmbeddingSpace) -> int:
        with self.pool.transaction() as conn:
            row = conn.execute(
                "DELETE FROM embeddings WHERE space_id = %s RETURNING 1", (space.id,)
            ).fetchall()
            vectors.drop_table(conn, space.id)
            conn.execute("DELETE FROM embedding_spaces WHERE id = %s", (space.id,))
        return len(row)

    # -- the vector leg --------------------------------------------------------------------
    def nearest(
        self, vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        c = corpus_of(space.owner)
        narrow = c.narrow(where)
        if limit < 1 or space.count == 0:
            return []
        a = c.alias
        query = vectors.literal(vector)
        rule = f"{c.rule}{narrow.sql} AND {c.fresh_vector}"
        with self.pool.snapshot() as conn:
            if not vectors.table_exists(conn, space.id):
                log.warning("vector table of space %s is missing: %s", space.id, REEMBED_HINT)
                return []  # the vector leg is absent; keyword ranking stands alone
            partition = _partition(conn, c, where)
            if partition == NO_PARTITION:
                return []
            table = vectors.table_name(space.id)
            if partition is not None or not vectors.has_hnsw(conn, space.id):
                # Exact: the partition's (or every) vector, scanned, never the HNSW graph.
                scope = " WHERE v.part = %s" if partition is not None else ""
                sql = (
                    f"WITH cand AS MATERIALIZED (SELECT v.target_id, v.embedding FROM {table} v"
                    f"{scope}) SELECT {c.public_id} AS rid, v.embedding <=> %s::vector AS d "
                    f"FROM cand v JOIN {c.table} {a} ON {a}.id = v.target_id {c.joins} "
                    f"WHERE {rule} ORDER BY d, rid LIMIT %s"
                )
                params = (
                    *((partition,) if partition is not None else ()),
                    query,
                    *narrow.params,
                    space.id,
                    limit,
                )
                rows = conn.execute(sql, params).fetchall()
                return [(str(r[0]), float(r[1])) for r in rows]
            sql = (
                f"SELECT {c.public_id}, v.embedding <=> %s::vector AS d FROM {table} v "
                f"JOIN {c.table} {a} ON {a}.id = v.target_id {c.joins} WHERE {rule} "
                "ORDER BY v.embedding <=> %s::vector LIMIT %s"
            )
            for name, value in HNSW_PLAN:
                conn.execute(f"SET LOCAL {name} = {value}")
            try:
                rows = conn.execute(sql, (query, *narrow.params, space.id, query, limit)).fetchall()
            finally:  # the snapshot may read on (a search's other legs): default plans again
                for name, _ in HNSW_PLAN:
                    conn.execute(f"RESET {name}")
        # relaxed_order may return neighbours slightly out of order: sort them.
        return sorted(((str(r[0]), float(r[1])) for r in rows), key=lambda p: (p[1], p[0]))

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
            if not vectors.table_exists(conn, space.id):
                return {}  # the vector leg is absent (doctor reports the missing table)
            sql = (
                f"SELECT {c.given}, v.embedding <=> %s::vector FROM {c.keys_from} "
                f"JOIN {vectors.table_name(space.id)} v ON v.target_id = {c.alias}.id "
                f"WHERE {c.rule}{narrow.sql} AND {c.fresh_vector}"
            )
            params = (vectors.literal(vector), *c.keys(ids), *narrow.params, space.id)
            return {str(r[0]): float(r[1]) for r in conn.execute(sql, params).fetchall()}

    # -- embedding passes ------------------------------------------------------------------
    def embed_targets(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        c = corpus_of(space.owner)
        sql = (
            f"SELECT {c.alias}.id, {c.public_id}, {c.text}, {c.alias}.content_hash "
            + _stale_sql(c, drilled_only)
            + f" AND {c.alias}.id > %s ORDER BY {c.alias}.id LIMIT %s"
        )
        with self.pool.reading() as conn:
            rows = conn.execute(sql, (space.id, after, limit)).fetchall()
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
                conn, space, items, owner_table=c.table, partition_column=c.partition_column
            )


def _stale_sql(c: Corpus, drilled_only: bool) -> str:
    """``FROM … WHERE …`` of the rows whose vector in the space (bound first) is missing or
    stale: embeddable rows of allowed threads (a denied text never goes to an embedder)."""
    a = c.alias
    sql = (
        f"FROM {c.rows_from} LEFT JOIN embeddings e ON e.space_id = %s "
        f"AND e.target_rowid = {a}.id WHERE {c.embeddable} AND {c.gate} "
        f"AND (e.content_hash IS NULL OR e.content_hash <> {a}.content_hash)"
    )
    return sql + (f" AND {c.drilled}" if drilled_only else "")
