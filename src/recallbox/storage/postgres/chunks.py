"""The transcript chunks of the PostgreSQL backend (migration 3): writing, reading, their rows.

The SQLite twin's rules: chunks are an index of imported threads, not history; a changed chunk
is rewritten and one no longer produced is removed with its vectors and their bookkeeping. Row
ids are never reused (a sequence), so a replaced chunk's vector is never taken for its
successor's. Each chunk's keyword document is written with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from recallbox.storage.codecs import chunk_hash, storable
from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import TRANSCRIPT_CHUNKS
from recallbox.storage.postgres.keyword_write import FTS_MARKS, document_of, put_overflow
from recallbox.storage.postgres.rows import maybe_utc
from recallbox.storage.postgres.schema import CHUNKS_KEYWORDS
from recallbox.storage.postgres.visibility import MESSAGE_VISIBLE_SQL, THREAD_ALLOWED_SQL
from recallbox.storage.queries import CORPUS_TRANSCRIPT_CHUNK, SearchFilter
from recallbox.storage.values import ChunkRow, ChunkSource, TranscriptChunk

_CHUNK_COLUMNS = (
    "c.id, c.content_hash, c.first_seq, c.part, c.last_seq, g.number, c.message_ids, c.source, "
    "c.line_start, c.line_end, c.content, c.message_offsets"
)
_CHUNK_FROM = (
    "transcript_chunks c JOIN threads t ON t.id = c.thread_id "
    "JOIN generations g ON g.id = c.generation_id"
)


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


def delete_chunks(conn: Connection, rowids: Sequence[int]) -> None:
    """Remove chunks with their vectors and their bookkeeping."""
    vectors.delete_rows(conn, CORPUS_TRANSCRIPT_CHUNK, "transcript_chunks", rowids)


#: Chunks per ``INSERT`` statement (a long message is thousands of parts).
INSERT_BATCH_CHUNKS = 500
_INSERT_COLUMNS = (
    "thread_id, generation_id, first_seq, part, last_seq, message_ids, message_offsets, source, "
    "line_start, line_end, content, content_hash, fts, fts_len"
)
_INSERT_ROW = (
    "(%s, (SELECT generation_id FROM messages WHERE thread_id = %s AND seq = %s), "
    f"%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {FTS_MARKS})"
)


def insert_chunks(
    conn: Connection, thread_id: int, chunks: Sequence[tuple[TranscriptChunk, str]]
) -> None:
    """Insert ``(chunk, digest)`` rows with their keyword documents, a batch per statement
    (the keyword statistics' triggers run once per statement)."""
    for start in range(0, len(chunks), INSERT_BATCH_CHUNKS):
        batch = chunks[start : start + INSERT_BATCH_CHUNKS]
        values: list[object] = []
        docs = []
        for chunk, digest in batch:
            doc = document_of(chunk.text)
            docs.append(doc)
            values += [
                thread_id, thread_id, chunk.first_seq, chunk.first_seq, chunk.part,
                chunk.last_seq, json.dumps(list(chunk.message_ids)),
                json.dumps(list(chunk.message_offsets)), chunk.source, chunk.line_start,
                chunk.line_end, chunk.text, digest, doc.tsvector, doc.length,
            ]  # fmt: skip
        rows = conn.execute(
            f"INSERT INTO transcript_chunks ({_INSERT_COLUMNS}) VALUES "
            + ", ".join([_INSERT_ROW] * len(batch))
            + " RETURNING id, first_seq, part",
            values,
        ).fetchall()
        ids = {(int(r[1]), int(r[2])): int(r[0]) for r in rows}
        put_overflow(
            conn,
            CHUNKS_KEYWORDS,
            [
                (ids[(chunk.first_seq, chunk.part)], thread_id, doc)
                for (chunk, _), doc in zip(batch, docs, strict=True)
            ],
        )


class ChunksMixin:
    """:class:`~recallbox.storage.base.TranscriptChunks` for :class:`PostgresStore`."""

    pool: PgPool

    # -- writing -----------------------------------------------------------------------------
    def chunk_restart_seq(self, channel: str, seq: int) -> int:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT max(c.first_seq) FROM transcript_chunks c JOIN threads t "
                "ON t.id = c.thread_id WHERE t.channel = %s AND c.first_seq <= %s",
                (channel, seq),
            ).fetchone()
        return int(row[0]) if row and row[0] is not None else seq

    def iter_chunk_sources(self, channel: str, from_seq: int) -> Iterator[ChunkSource]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT m.uid, m.seq, g.number, m.role, m.content, m.tool_calls, "
                "m.metadata::json -> 'source_file', m.metadata::json -> 'line_start', "
                "m.metadata::json -> 'line_end' "
                "FROM messages m JOIN threads t ON t.id = m.thread_id "
                "JOIN generations g ON g.id = m.generation_id "
                f"WHERE t.channel = %s AND m.seq >= %s AND {MESSAGE_VISIBLE_SQL} ORDER BY m.seq",
                (channel, from_seq),
            ).fetchall()
        for row in rows:
            yield ChunkSource(
                id=row[0],
                seq=int(row[1]),
                generation=int(row[2]),
                role=row[3],
                content=row[4],
                tool_calls=json.loads(row[5]) if row[5] is not None else None,
                source=_extracted(row[6]) if isinstance(row[6], str | dict | list) else None,
                line_start=_json_int(row[7]),
                line_end=_json_int(row[8]),
            )

    def replace_transcript_chunks(
        self, channel: str, from_seq: int, chunks: Iterable[TranscriptChunk]
    ) -> int:
        written = 0
        with self.pool.transaction() as conn:
            found = conn.execute("SELECT id FROM threads WHERE channel = %s", (channel,)).fetchone()
            if found is None:
                return 0
            thread_id = int(found[0])
            existing = {
                (int(r[0]), int(r[1])): (int(r[2]), str(r[3]))
                for r in conn.execute(
                    "SELECT first_seq, part, id, content_hash FROM transcript_chunks "
                    "WHERE thread_id = %s AND first_seq >= %s",
                    (thread_id, from_seq),
                ).fetchall()
            }
            replaced: list[int] = []
            new: list[tuple[TranscriptChunk, str]] = []
            for chunk in chunks:
                digest = chunk_hash(chunk)
                old = existing.pop((chunk.first_seq, chunk.part), None)
                if old is not None and old[1] == digest:
                    continue
                if old is not None:
                    replaced.append(old[0])
                new.append((chunk, digest))
            delete_chunks(conn, [*replaced, *(rowid for rowid, _ in existing.values())])
            insert_chunks(conn, thread_id, new)
            written = len(new)
        return written

    # -- reading -----------------------------------------------------------------------------
    def transcript_chunk(self, channel: str, first_seq: int, part: int) -> TranscriptChunk | None:
        if not storable(channel):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} WHERE t.channel = %s "
                f"AND c.first_seq = %s AND c.part = %s AND {THREAD_ALLOWED_SQL}",
                (channel, first_seq, part),
            ).fetchone()
        return _stored_chunk(row) if row else None

    def has_transcript_chunks(self, channel: str) -> bool:
        if not storable(channel):
            return False
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT 1 FROM transcript_chunks c JOIN threads t ON t.id = c.thread_id "
                "WHERE t.channel = %s LIMIT 1",
                (channel,),
            ).fetchone()
        return row is not None

    def transcript_chunks(self, channel: str) -> list[tuple[int, str, TranscriptChunk]]:
        if not storable(channel):
            return []
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM {_CHUNK_FROM} WHERE t.channel = %s "
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
            rows = conn.execute(sql, (*c.keys(ids), *narrow.params)).fetchall()
        return {
            str(r[0]): ChunkRow(
                id=str(r[0]),
                channel=str(r[1]),
                text=str(r[2]),
                content_hash=str(r[3]),
                source=str(r[4]) if r[4] is not None else None,
                line_start=_opt_int(r[5]),
                line_end=_opt_int(r[6]),
                created_at=maybe_utc(r[7]),
                message_ids=tuple(json.loads(r[8])),
                message_offsets=tuple(json.loads(r[9])),
            )
            for r in rows
        }


def _extracted(value: Any) -> str:
    """A JSON string, or an object or array as the JSON text SQLite's ``json_extract`` gives."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _json_int(value: Any) -> int | None:
    """A JSON value as SQLite's ``json_extract`` gives an integer: an integer, or a boolean
    as 1 or 0 (floats, strings and the rest are not)."""
    return int(value) if isinstance(value, int) else None
