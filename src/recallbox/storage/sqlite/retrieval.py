"""The SQLite side of :class:`~recallbox.storage.retrieval.RetrievalStore` (a mixin of the store).

Every read here applies the search exclusions and the quarantine gate in SQL
(:data:`SEARCHABLE`). Vectors are used only while their recorded content hash equals the
message's, so a changed text never ranks by its old vector.

Nearest-neighbour search is exact for the rows a caller may see:

* a channel restricts the scan inside the index (the ``vec0`` partition key);
* the other exclusions (pending, superseded, …) are applied to the KNN result, with ``k``
  grown until ``limit`` visible rows are found or the index is exhausted, and an exact filtered
  scan past sqlite-vec's ``k`` limit — so an excluded row never takes a visible row's place
  (:func:`recallbox.storage.sqlite.vectors.nearest_visible`, shared with the chunk search).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import apsw

from recallbox.storage.retrieval import (
    EmbeddingSpace,
    EmbedTarget,
    KeywordScope,
    RowFrequencies,
    SearchRow,
)
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.schema import THREAD_ALLOWED_SQL

if TYPE_CHECKING:
    from recallbox.storage.sqlite.connection import ConnectionPool

#: The §3.2/§4.5 exclusions of one message (``messages m``).
MESSAGE_SEARCHABLE = (
    "m.kind = 'message' AND m.model_visible = 1 AND m.pending = 0 AND m.superseded_by IS NULL"
)
#: The exclusions and the privacy gate (quarantine, excluded sources), over
#: ``messages m JOIN threads t``.
SEARCHABLE = f"{MESSAGE_SEARCHABLE} AND {THREAD_ALLOWED_SQL}"
#: Rows that may get a vector: searchable kinds with text that the privacy gate allows (a
#: denied text is never handed to an embedder, which may be a remote service).
EMBEDDABLE = (
    f"m.kind = 'message' AND m.model_visible = 1 AND {THREAD_ALLOWED_SQL} "
    "AND length(trim(m.content, char(32, 9, 10))) > 0"
)
#: A vector counts only while it describes the current text.
FRESH_VECTOR = (
    "EXISTS (SELECT 1 FROM embeddings e WHERE e.space_id = ? AND e.target_rowid = m.id "
    "AND e.content_hash = m.content_hash)"
)
#: Ids per ``IN (...)`` list (well under SQLite's variable limit).
SQL_IN_CHUNK = 500

#: Nearest messages past sqlite-vec's ``k`` limit.
_EXACT_SCAN = vectors.ExactScanSql(
    id_sql="m.uid",
    join_sql="JOIN messages m ON m.id = v.rowid JOIN threads t ON t.id = m.thread_id",
    where_sql=f"{SEARCHABLE} AND {FRESH_VECTOR}",
)

#: The FTS5 auxiliary function that reports a row's token count and phrase frequencies.
PHRASE_FREQS_FUNCTION = "recallbox_phrase_freqs"

_FROM = "messages m JOIN threads t ON t.id = m.thread_id"


def _phrase_freqs(api: apsw.FTS5ExtensionApi, *_args: object) -> str:
    """``"<tokens> <f_1> … <f_n>"`` for the current row (FTS5's own counts, as bm25() sees)."""
    counts = [str(api.column_size(-1))]
    counts.extend(str(sum(map(len, api.phrase_locations(p)))) for p in range(api.phrase_count))
    return " ".join(counts)


_registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def register_functions(conn: apsw.Connection) -> None:
    """Register :data:`PHRASE_FREQS_FUNCTION` on ``conn`` once."""
    if conn not in _registered:
        conn.register_fts5_function(PHRASE_FREQS_FUNCTION, _phrase_freqs)
        _registered.add(conn)


def decode_varint(blob: bytes, pos: int = 0) -> tuple[int, int]:
    """One SQLite varint of ``blob`` at ``pos``: ``(value, next position)``."""
    value = 0
    for i in range(8):
        byte = blob[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | blob[pos + 8], pos + 9


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _chunks(items: Sequence[str], size: int = SQL_IN_CHUNK) -> list[Sequence[str]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _marks(count: int) -> str:
    return ", ".join("?" * count)


class RetrievalMixin:
    """Ranked keyword search, vectors and hit-log for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- keyword leg -----------------------------------------------------------------------
    def keyword_messages_ranked(
        self, expression: str, *, channel: str | None, limit: int
    ) -> list[tuple[str, float]]:
        if not expression or limit < 1:
            return []
        sql = (
            f"SELECT m.uid, -bm25(messages_fts) AS s FROM messages_fts "
            f"JOIN messages m ON m.id = messages_fts.rowid JOIN threads t ON t.id = m.thread_id "
            f"WHERE messages_fts MATCH ? AND {SEARCHABLE}"
        )
        params: list[object] = [expression]
        if channel is not None:
            sql += " AND t.channel = ?"
            params.append(channel)
        sql += " ORDER BY s DESC, m.uid LIMIT ?"
        params.append(limit)
        with self.pool.reading() as conn:
            return [(str(r[0]), float(r[1])) for r in conn.execute(sql, params)]

    def keyword_scope(self, phrases: Sequence[str], *, channel: str) -> KeywordScope | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT t.id FROM threads t WHERE t.channel = ? AND {THREAD_ALLOWED_SQL}",
                (channel,),
            ).fetchone()
            if row is None:
                return None
            thread_id = int(row[0])
            # Every row of the thread is in the index (FTS5's row count and token total).
            # ``messages_fts_docsize.sz`` holds one varint per column: the row's token count.
            rows = tokens = 0
            for (size,) in conn.execute(
                "SELECT d.sz FROM messages m JOIN messages_fts_docsize d ON d.id = m.id "
                "WHERE m.thread_id = ?",
                (thread_id,),
            ):
                rows += 1
                tokens += decode_varint(bytes(size))[0] if size else 0
            if not phrases or not rows:
                return KeywordScope(rows, tokens, (0,) * len(phrases), ())
            register_functions(conn)
            df = [0] * len(phrases)
            matches: list[RowFrequencies] = []
            for uid, searchable, packed in conn.execute(
                f"SELECT m.uid, {MESSAGE_SEARCHABLE}, {PHRASE_FREQS_FUNCTION}(messages_fts) "
                "FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid "
                "WHERE messages_fts MATCH ? AND m.thread_id = ?",
                (" OR ".join(phrases), thread_id),
            ):
                length, *freqs = (int(x) for x in str(packed).split())
                for i, freq in enumerate(freqs):
                    df[i] += freq > 0
                if searchable:
                    matches.append(RowFrequencies(str(uid), length, tuple(freqs)))
        return KeywordScope(rows, tokens, tuple(df), tuple(matches))

    def search_rows(self, ids: Sequence[str]) -> dict[str, SearchRow]:
        out: dict[str, SearchRow] = {}
        with self.pool.reading() as conn:
            for chunk in _chunks(list(dict.fromkeys(ids))):
                rows = conn.execute(
                    f"SELECT m.uid, t.channel, m.role, m.content, m.content_hash, m.created_at, "
                    f"g.uid, m.seq FROM {_FROM} JOIN generations g ON g.id = m.generation_id "
                    f"WHERE m.uid IN ({_marks(len(chunk))}) AND {SEARCHABLE}",
                    tuple(chunk),
                )
                for r in rows:
                    out[str(r[0])] = SearchRow(
                        id=str(r[0]),
                        channel=str(r[1]),
                        role=str(r[2]),
                        content=str(r[3]),
                        content_hash=str(r[4]),
                        created_at=datetime.fromisoformat(str(r[5])),
                        generation=str(r[6]),
                        seq=int(r[7]),
                    )
        return out

    # -- embedding spaces ------------------------------------------------------------------
    def embedding_spaces(self, owner: str) -> list[EmbeddingSpace]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                "SELECT s.id, s.owner, s.model_id, s.dim, "
                "(SELECT count(*) FROM embeddings e WHERE e.space_id = s.id) "
                "FROM embedding_spaces s WHERE s.owner = ? ORDER BY s.id",
                (owner,),
            ).fetchall()
        return [EmbeddingSpace(int(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]

    def ensure_embedding_space(self, owner: str, model_id: str, dim: int) -> EmbeddingSpace:
        with self.pool.transaction() as conn:
            row = conn.execute(
                "SELECT id FROM embedding_spaces WHERE owner = ? AND model_id = ? AND dim = ?",
                (owner, model_id, dim),
            ).fetchone()
            if row is None:
                conn.execute(
                    "INSERT INTO embedding_spaces (owner, model_id, dim, created_at) "
                    "VALUES (?, ?, ?, ?)",
                    (owner, model_id, dim, _now()),
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

    # -- vector leg ------------------------------------------------------------------------
    def _visible(
        self, conn: apsw.Connection, space: EmbeddingSpace, rowids: Sequence[int]
    ) -> dict[int, str]:
        """rowid → uid for the searchable rows with a fresh vector among ``rowids``."""
        out: dict[int, str] = {}
        for start in range(0, len(rowids), SQL_IN_CHUNK):
            chunk = rowids[start : start + SQL_IN_CHUNK]
            rows = conn.execute(
                f"SELECT m.id, m.uid FROM {_FROM} WHERE m.id IN ({_marks(len(chunk))}) "
                f"AND {SEARCHABLE} AND {FRESH_VECTOR}",
                (*chunk, space.id),
            )
            out.update((int(r[0]), str(r[1])) for r in rows)
        return out

    def nearest_messages(
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
                visible=self._visible,
                exact_scan=_EXACT_SCAN,
            )

    def message_distances(
        self, vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace
    ) -> dict[str, float]:
        if not ids or space.count == 0:
            return {}
        table = vectors.table_name(space.id)
        blob = vectors.to_blob(vector)
        out: dict[str, float] = {}
        with self.pool.reading() as conn:
            vectors.load_sqlite_vec(conn)
            for chunk in _chunks(list(dict.fromkeys(ids))):
                rows = conn.execute(
                    f"SELECT m.uid, vec_distance_cosine(v.embedding, ?) FROM {_FROM} "
                    f"JOIN {table} v ON v.rowid = m.id "
                    f"WHERE m.uid IN ({_marks(len(chunk))}) AND {SEARCHABLE} AND {FRESH_VECTOR}",
                    (blob, *chunk, space.id),
                )
                out.update((str(r[0]), float(r[1])) for r in rows)
        return out

    # -- embedding passes ------------------------------------------------------------------
    def _to_embed_sql(self, drilled_only: bool) -> str:
        sql = (
            f"FROM {_FROM} LEFT JOIN embeddings e ON e.space_id = ? AND e.target_rowid = m.id "
            f"WHERE {EMBEDDABLE} AND (e.content_hash IS NULL OR e.content_hash != m.content_hash)"
        )
        if drilled_only:
            sql += (
                " AND EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled = 1 AND h.target_id = m.uid)"
            )
        return sql

    def messages_to_embed(
        self, space: EmbeddingSpace, *, after: int, limit: int, drilled_only: bool = False
    ) -> list[EmbedTarget]:
        sql = (
            "SELECT m.id, m.uid, m.content, m.content_hash "
            + self._to_embed_sql(drilled_only)
            + " AND m.id > ? ORDER BY m.id LIMIT ?"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, (space.id, after, limit)).fetchall()
        return [EmbedTarget(int(r[0]), str(r[1]), str(r[2]), str(r[3])) for r in rows]

    def count_to_embed(self, space: EmbeddingSpace, *, drilled_only: bool = False) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT count(*) " + self._to_embed_sql(drilled_only), (space.id,)
            ).fetchone()
        return int(row[0]) if row else 0

    def put_embeddings(
        self, space: EmbeddingSpace, items: Sequence[tuple[EmbedTarget, Sequence[float]]]
    ) -> int:
        if not items:
            return 0
        with self.pool.transaction() as conn:
            return vectors.put_embeddings(conn, space, items, owner_table="messages", now=_now())

    # -- hit-log ---------------------------------------------------------------------------
    def record_drill(self, target_id: str, *, domain: str = "sessions") -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "INSERT INTO hit_log (at, query, domain, layer, target_id, drilled) "
                "VALUES (?, NULL, ?, NULL, ?, 1)",
                (_now(), domain, target_id),
            )

    def record_hits(
        self, query: str, *, domain: str, layer: str, target_ids: Sequence[str]
    ) -> None:
        if not target_ids:
            return
        now = _now()
        with self.pool.transaction() as conn:
            conn.executemany(
                "INSERT INTO hit_log (at, query, domain, layer, target_id, drilled) "
                "VALUES (?, ?, ?, ?, ?, 0)",
                [(now, query, domain, layer, target_id) for target_id in target_ids],
            )
