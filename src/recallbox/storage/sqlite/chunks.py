"""The transcript chunks of the SQLite backend (migration 3): writing, reading, their rows.

Chunks are an index of imported threads, not history: a changed chunk is rewritten and one no
longer produced is removed (with its vectors and their bookkeeping). Row ids are never reused
(``AUTOINCREMENT``), so the vector of a replaced chunk can never be taken for its successor's.
Their keyword index and vectors are the generic ones of ``keyword.py`` and ``vector_index.py``
(the :data:`~recallbox.storage.sqlite.corpora.TRANSCRIPT_CHUNKS` corpus); every read here that
serves a search applies the visibility rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import Any

import apsw

from recallbox.storage.codecs import chunk_hash as _chunk_hash
from recallbox.storage.queries import CORPUS_TRANSCRIPT_CHUNK, SearchFilter
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import TRANSCRIPT_CHUNKS
from recallbox.storage.sqlite.rows import stored_seg
from recallbox.storage.sqlite.visibility import MESSAGE_VISIBLE_SQL, THREAD_ALLOWED_SQL
from recallbox.storage.values import ChunkRow, ChunkSource, TranscriptChunk

_CHUNK_COLUMNS = (
    "c.id, c.content_hash, c.first_seq, c.part, c.last_seq, g.number, c.message_ids, c.source, "
    "c.line_start, c.line_end, c.content, c.message_offsets"
)
_CHUNK_FROM = (
    "transcript_chunks c JOIN threads t ON t.id = c.thread_id "
    "JOIN generations g ON g.id = c.generation_id"
)



def _delete_chunk(conn: apsw.Connection, rowid: int) -> None:
    """Remove a chunk with its vectors and their bookkeeping."""
    vectors.forget(conn, CORPUS_TRANSCRIPT_CHUNK, [rowid])
    conn.execute("DELETE FROM transcript_chunks WHERE id = ?", (rowid,))


def _opt_int(value: Any) -> int | None:
    return int(value) if value is not None else None


def _stored_chunk(r: Sequence[Any]) -> TranscriptChunk:
    return TranscriptChunk(
        first_seq=int(r[2]),
        part=int(r[3]),
        last_seq=int(r[4]),
        generation=int(r[5]),
        message_ids=tuple(json.loads(r[6])),
        source=str(r[7]) if r[7] is not None else None,
        line_start=_opt_int(r[8]),
        line_end=_opt_int(r[9]),
        text=str(r[10]),
        message_offsets=tuple(json.loads(r[11])),
    )


_CHUNK_ROW_SQL = (
    "(?, (SELECT generation_id FROM messages WHERE thread_id = ? AND seq = ?), "
    "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_CHUNK_ROW_WIDTH = _CHUNK_ROW_SQL.count("?")
#: Chunks per ``INSERT`` statement (SQLite's default limit of bound parameters is 32 766).
#: One statement per batch: FTS5 flushes its pending terms at every statement that writes it.
CHUNKS_PER_STATEMENT = 32_766 // _CHUNK_ROW_WIDTH


def _chunk_values(thread_id: int, chunk: TranscriptChunk, digest: str) -> tuple[object, ...]:
    return (
        thread_id,
        thread_id,
        chunk.first_seq,
        chunk.first_seq,
        chunk.part,
        chunk.last_seq,
        json.dumps(list(chunk.message_ids)),
        json.dumps(list(chunk.message_offsets)),
        chunk.source,
        chunk.line_start,
        chunk.line_end,
        chunk.text,
        stored_seg(chunk.text),
        digest,
    )


def _insert_chunks(conn: apsw.Connection, rows: Sequence[tuple[object, ...]]) -> None:
    """Insert chunk rows (:func:`_chunk_values`), :data:`CHUNKS_PER_STATEMENT` per statement."""
    for start in range(0, len(rows), CHUNKS_PER_STATEMENT):
        part = rows[start : start + CHUNKS_PER_STATEMENT]
        conn.execute(
            "INSERT INTO transcript_chunks (thread_id, generation_id, first_seq, part, "
            "last_seq, message_ids, message_offsets, source, line_start, line_end, "
            "content, content_seg, content_hash) VALUES "
            + ", ".join([_CHUNK_ROW_SQL] * len(part)),
            [value for row in part for value in row],
        )


class ChunksMixin:
    """:class:`~recallbox.storage.base.TranscriptChunks` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- writing -----------------------------------------------------------------------------
    def chunk_restart_seq(self, channel: str, seq: int) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT max(c.first_seq) FROM transcript_chunks c JOIN threads t "
                "ON t.id = c.thread_id WHERE t.channel = ? AND c.first_seq <= ?",
                (channel, seq),
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else seq

    def iter_chunk_sources(self, channel: str, from_seq: int) -> Iterator[ChunkSource]:
        with self.pool.reading() as conn:
            cursor = conn.execute(
                "SELECT m.uid, m.seq, g.number, m.role, m.content, m.tool_calls, "
                "json_extract(m.metadata, '$.source_file'), "
                "json_extract(m.metadata, '$.line_start'), json_extract(m.metadata, '$.line_end') "
                "FROM messages m JOIN threads t ON t.id = m.thread_id "
                "JOIN generations g ON g.id = m.generation_id "
                f"WHERE t.channel = ? AND m.seq >= ? AND {MESSAGE_VISIBLE_SQL} ORDER BY m.seq",
                (channel, from_seq),
            )
            for row in cursor:
                yield ChunkSource(
                    id=row[0],
                    seq=int(row[1]),
                    generation=int(row[2]),
                    role=row[3],
                    content=row[4],
                    tool_calls=json.loads(row[5]) if row[5] is not None else None,
                    source=row[6] if isinstance(row[6], str) else None,
                    line_start=row[7] if isinstance(row[7], int) else None,
                    line_end=row[8] if isinstance(row[8], int) else None,
                )

    def replace_transcript_chunks(
        self, channel: str, from_seq: int, chunks: Iterable[TranscriptChunk]
    ) -> int:
        with self.pool.transaction() as conn:
            found = conn.execute("SELECT id FROM threads WHERE channel = ?", (channel,)).fetchone()
            if found is None:
                return 0
            thread_id = int(found[0])
            existing = {
                (int(r[0]), int(r[1])): (int(r[2]), str(r[3]))
                for r in conn.execute(
                    "SELECT first_seq, part, id, content_hash FROM transcript_chunks "
                    "WHERE thread_id = ? AND first_seq >= ?",
                    (thread_id, from_seq),
                )
            }
            new: list[tuple[object, ...]] = []
            for chunk in chunks:
                digest = _chunk_hash(chunk)
                old = existing.pop((chunk.first_seq, chunk.part), None)
                if old is not None and old[1] == digest:
                    continue
                if old is not None:
                    _delete_chunk(conn, old[0])
                new.append(_chunk_values(thread_id, chunk, digest))
            for rowid, _ in existing.values():
                _delete_chunk(conn, rowid)
            _insert_chunks(conn, new)
        return len(new)

    # -- reading -----------------------------------------------------------------------------
    def transcript_chunk(self, channel: str, first_seq: int, part: int) -> TranscriptChunk | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} WHERE t.channel = ? "
                f"AND c.first_seq = ? AND c.part = ? AND {THREAD_ALLOWED_SQL}",
                (channel, first_seq, part),
            ).fetchone()
        return _stored_chunk(row) if row else None

    def has_transcript_chunks(self, channel: str) -> bool:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM transcript_chunks c JOIN threads t ON t.id = c.thread_id "
                "WHERE t.channel = ? LIMIT 1",
                (channel,),
            ).fetchone()
        return row is not None

    def transcript_chunks(self, channel: str) -> list[tuple[int, str, TranscriptChunk]]:
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} WHERE t.channel = ? "
                "ORDER BY c.first_seq, c.part",
                (channel,),
            ).fetchall()
        return [(int(r[0]), str(r[1]), _stored_chunk(r)) for r in rows]

    def chunk_rows(self, ids: Sequence[str], *, where: SearchFilter) -> dict[str, ChunkRow]:
        c = TRANSCRIPT_CHUNKS
        narrow = c.narrow(where)
        if not ids:
            return {}
        sql = (
            f"SELECT {c.given}, t.channel, c.content, c.content_hash, c.source, c.line_start, "
            "c.line_end, (SELECT m.created_at FROM messages m WHERE m.thread_id = c.thread_id "
            f"AND m.seq = c.first_seq), c.message_ids, c.message_offsets FROM {c.keys_from} "
            f"WHERE {c.rule}{narrow.sql}"
        )
        with self.pool.reading() as conn:
            rows: list[Any] = conn.execute(sql, (c.keys(ids), *narrow.params)).fetchall()
        return {
            str(r[0]): ChunkRow(
                id=str(r[0]),
                channel=str(r[1]),
                text=str(r[2]),
                content_hash=str(r[3]),
                source=str(r[4]) if r[4] is not None else None,
                line_start=_opt_int(r[5]),
                line_end=_opt_int(r[6]),
                created_at=datetime.fromisoformat(str(r[7])) if r[7] is not None else None,
                message_ids=tuple(json.loads(r[8])),
                message_offsets=tuple(json.loads(r[9])),
            )
            for r in rows
        }
