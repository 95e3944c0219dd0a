"""The SQLite side of :class:`~recallbox.storage.transcripts.TranscriptSearchStore` (a mixin).

Chunks are ranked by ``-bm25(transcript_chunks_fts)`` over the whole chunk index (a ``channel``
only filters), and by cosine distance in a ``vec0`` table per embedding space, partitioned by
thread like the message vectors (:mod:`recallbox.storage.sqlite.vectors`). Every read joins the
thread and applies :data:`~recallbox.storage.sqlite.schema.THREAD_ALLOWED_SQL`; a vector counts
only while its recorded content hash equals the chunk's (a rebuilt chunk gets a new row id, and
row ids are never reused, so an old vector can never describe a new chunk).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from recallbox.storage.retrieval import EmbeddingSpace, EmbedTarget
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.schema import THREAD_ALLOWED_SQL
from recallbox.storage.transcripts import ChunkRow, parse_chunk_id

if TYPE_CHECKING:
    import apsw

    from recallbox.storage.sqlite.connection import ConnectionPool

#: The public chunk id of ``transcript_chunks c JOIN threads t``.
CHUNK_ID_SQL = (
    "(t.channel || '@' || c.first_seq || CASE WHEN c.part > 0 THEN '.' || c.part ELSE '' END)"
)
_FROM = "transcript_chunks c JOIN threads t ON t.id = c.thread_id"
#: A vector counts only while it describes the chunk's current text.
FRESH_CHUNK_VECTOR = (
    "EXISTS (SELECT 1 FROM embeddings e WHERE e.space_id = ? AND e.target_rowid = c.id "
    "AND e.content_hash = c.content_hash)"
)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _key(chunk_id: str) -> tuple[str, int, int] | None:
    return parse_chunk_id(chunk_id)


#: Nearest chunks past sqlite-vec's ``k`` limit.
_EXACT_SCAN = vectors.ExactScanSql(
    id_sql=CHUNK_ID_SQL,
    join_sql="JOIN transcript_chunks c ON c.id = v.rowid JOIN threads t ON t.id = c.thread_id",
    where_sql=f"{THREAD_ALLOWED_SQL} AND {FRESH_CHUNK_VECTOR}",
)


class TranscriptSearchMixin:
    """Chunk search and chunk vectors for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- keyword leg -------------------------------------------------------------------------
    def keyword_chunks_ranked(
        self, expression: str, *, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        if not expression or limit < 1:
            return []
        sql = (
            f"SELECT {CHUNK_ID_SQL} AS cid, -bm25(transcript_chunks_fts) AS s "
            "FROM transcript_chunks_fts JOIN transcript_chunks c "
            "ON c.id = transcript_chunks_fts.rowid JOIN threads t ON t.id = c.thread_id "
            f"WHERE transcript_chunks_fts MATCH ? AND {THREAD_ALLOWED_SQL}"
        )
        params: list[object] = [expression]
        if channel is not None:
            sql += " AND t.channel = ?"
            params.append(channel)
        sql += " ORDER BY s DESC, cid LIMIT ?"
        params.append(limit)
        with self.pool.reading() as conn:
            return [(str(r[0]), float(r[1])) for r in conn.execute(sql, params)]

    def _rowids(self, conn: apsw.Connection, ids: Sequence[str]) -> dict[int, str]:
        """rowid -> public id for the allowed chunks among ``ids``."""
        out: dict[int, str] = {}
        for chunk_id in dict.fromkeys(ids):
            key = _key(chunk_id)
            if key is None:
                continue
            row = conn.execute(
                f"SELECT c.id FROM {_FROM} WHERE t.channel = ? AND c.first_seq = ? "
                f"AND c.part = ? AND {THREAD_ALLOWED_SQL}",
                key,
            ).fetchone()
            if row is not None:
                out[int(row[0])] = chunk_id
        return out

    def chunk_rows(self, ids: Sequence[str]) -> dict[str, ChunkRow]:
        out: dict[str, ChunkRow] = {}
        with self.pool.reading() as conn:
            for rowid, chunk_id in self._rowids(conn, ids).items():
                r: Any = conn.execute(
                    "SELECT t.channel, c.content, c.content_hash, c.source, c.line_start, "
                    "c.line_end, (SELECT m.created_at FROM messages m WHERE m.thread_id = "
                    "c.thread_id AND m.seq = c.first_seq), c.message_ids, c.message_offsets "
                    f"FROM {_FROM} WHERE c.id = ?",
                    (rowid,),
                ).fetchone()
                out[chunk_id] = ChunkRow(
                    id=chunk_id,
                    channel=str(r[0]),
                    text=str(r[1]),
                    content_hash=str(r[2]),
                    source=str(r[3]) if r[3] is not None else None,
                    line_start=int(r[4]) if r[4] is not None else None,
                    line_end=int(r[5]) if r[5] is not None else None,
                    created_at=datetime.fromisoformat(str(r[6])) if r[6] is not None else None,
                    message_ids=tuple(json.loads(r[7])),
                    message_offsets=tuple(json.loads(r[8])),
                )
        return out

    # -- vector leg --------------------------------------------------------------------------
    def _visible_chunks(
        self, conn: apsw.Connection, space: EmbeddingSpace, rowids: Sequence[int]
    ) -> dict[int, str]:
        out: dict[int, str] = {}
        for rowid in rowids:
            row = conn.execute(
                f"SELECT {CHUNK_ID_SQL} FROM {_FROM} WHERE c.id = ? AND {THREAD_ALLOWED_SQL} "
                f"AND {FRESH_CHUNK_VECTOR}",
                (rowid, space.id),
            ).fetchone()
            if row is not None:
                out[rowid] = str(row[0])
        return out

    def nearest_chunks(
        self, vector: Sequence[float], *, space: EmbeddingSpace, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        if limit < 1 or space.count == 0:
            return []
        with self.pool.reading() as conn:
            return vectors.nearest_visible(
                conn,
                space,
                vector,
                channel=channel,
                limit=limit,
                visible=self._visible_chunks,
                exact_scan=_EXACT_SCAN,
            )

    def chunk_distances(
        self, vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace
    ) -> dict[str, float]:
        if not ids or space.count == 0:
            return {}
        table = vectors.table_name(space.id)
        blob = vectors.to_blob(vector)
        out: dict[str, float] = {}
        with self.pool.reading() as conn:
            vectors.load_sqlite_vec(conn)
            for rowid, chunk_id in self._rowids(conn, ids).items():
                row = conn.execute(
                    f"SELECT vec_distance_cosine(v.embedding, ?) FROM {table} v "
                    f"JOIN transcript_chunks c ON c.id = v.rowid WHERE v.rowid = ? "
                    f"AND {FRESH_CHUNK_VECTOR}",
                    (blob, rowid, space.id),
                ).fetchone()
                if row is not None:
                    out[chunk_id] = float(row[0])
        return out

    # -- embedding passes --------------------------------------------------------------------
    def _chunks_to_embed_sql(self, drilled_only: bool) -> str:
        sql = (
            f"FROM {_FROM} LEFT JOIN embeddings e ON e.space_id = ? AND e.target_rowid = c.id "
            f"WHERE {THREAD_ALLOWED_SQL} AND length(trim(c.content)) > 0 "
            "AND (e.content_hash IS NULL OR e.content_hash != c.content_hash)"
        )
        if drilled_only:
            sql += (
                " AND EXISTS (SELECT 1 FROM json_each(c.message_ids) j JOIN hit_log h "
                "ON h.target_id = j.value WHERE h.drilled = 1)"
            )
        return sql

    def transcript_chunk_count(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()
        return int(row[0]) if row else 0

    def chunks_to_embed(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        sql = (
            f"SELECT c.id, {CHUNK_ID_SQL}, c.content, c.content_hash "
            + self._chunks_to_embed_sql(drilled_only)
            + " AND c.id > ? ORDER BY c.id LIMIT ?"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, (space.id, after, limit)).fetchall()
        return [EmbedTarget(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def count_chunks_to_embed(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT count(*) " + self._chunks_to_embed_sql(drilled_only), (space.id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def put_chunk_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        if not items:
            return 0
        with self.pool.transaction() as conn:
            return vectors.put_embeddings(
                conn, space, items, owner_table="transcript_chunks", now=_now()
            )
