"""SQLiteStore: threads, generations and messages in one apsw database file."""

from __future__ import annotations

import hashlib
import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import apsw

from recallbox.errors import NotFound, SchemaMismatch
from recallbox.storage.base import (
    CandidateStream,
    NewMessage,
    ReadableMessage,
)
from recallbox.storage.sqlite import fts, literal
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.imports import ImportLedgerMixin
from recallbox.storage.sqlite.retrieval import RetrievalMixin
from recallbox.storage.sqlite.schema import (
    LATEST_VERSION,
    MIGRATION_TABLE_SQL,
    MIGRATIONS,
    THREAD_ALLOWED_SQL,
)
from recallbox.storage.sqlite.sessions import SessionWindowMixin
from recallbox.storage.sqlite.signals import SignalMixin
from recallbox.storage.sqlite.transcripts import TranscriptSearchMixin
from recallbox.text.cjk import segment
from recallbox.types import DoctorReport, Generation, Message, Policy, Thread

ID_RANDOM_BYTES = 8
MESSAGE_ID_PREFIX = "m_"
GENERATION_ID_PREFIX = "g_"

MESSAGE_COLUMNS = (
    "m.id, m.uid, t.channel, g.uid, g.number, m.seq, m.role, m.kind, m.content, m.tool_calls, "
    "m.tool_call_id, m.model_visible, m.pending, m.superseded_by, m.created_at, m.metadata, "
    "m.raw_content"
)
MESSAGE_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)


def new_id(prefix: str) -> str:
    """An opaque random id (64 random bits, hex)."""
    return prefix + secrets.token_hex(ID_RANDOM_BYTES)


def format_time(value: datetime) -> str:
    """ISO-8601 UTC with microseconds: sorts lexically in time order."""
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def parse_time(value: str) -> datetime:
    """Inverse of :func:`format_time`."""
    return datetime.fromisoformat(value)


def dump_json(value: Any) -> str:
    """JSON text for storage; falls back to ASCII escapes when a string cannot be UTF-8."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"))
    return text


def content_hash(content: str, args_text: str) -> str:
    """A stable hash of what a message says (dedupe, change detection)."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(content.encode("utf-8", "surrogatepass"))
    digest.update(b"\x00")
    digest.update(args_text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def text_columns(row: NewMessage) -> tuple[object, ...]:
    """The stored values of ``content, content_seg, args_text, raw_content, tool_calls,
    tool_calls_raw`` for ``row``, in that order."""
    return (
        row.content,
        segment(row.content),
        row.args_text,
        row.raw_content.encode("utf-8", "surrogatepass") if row.raw_content is not None else None,
        dump_json(row.tool_calls) if row.tool_calls is not None else None,
        row.tool_calls_raw,
    )


def row_to_message(row: Sequence[Any]) -> Message:
    """Build a :class:`Message` from a ``SELECT {MESSAGE_COLUMNS}`` row."""
    raw = row[16]
    return Message(
        id=row[1],
        channel=row[2],
        generation_id=row[3],
        generation=row[4],
        seq=row[5],
        role=row[6],
        kind=row[7],
        content=row[8],
        tool_calls=json.loads(row[9]) if row[9] is not None else None,
        tool_call_id=row[10],
        model_visible=bool(row[11]),
        pending=bool(row[12]),
        superseded_by=row[13],
        created_at=parse_time(row[14]),
        metadata=json.loads(row[15]),
        raw_content=bytes(raw).decode("utf-8", "surrogatepass") if raw is not None else None,
    )


class SQLiteStore(
    RetrievalMixin, SignalMixin, ImportLedgerMixin, SessionWindowMixin, TranscriptSearchMixin
):
    """The default backend: one SQLite file (or ``":memory:"``) through apsw."""

    capabilities: frozenset[str] = frozenset({"fts5", "trigram", "bigram_cjk"})

    def __init__(self, path: str) -> None:
        self.path = path
        self.pool = ConnectionPool(path)
        try:
            self.migrate()
        except BaseException:
            self.pool.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.pool.transaction():
            yield

    def schema_version(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0) if row else 0

    def migrate(self) -> None:
        with self.pool.transaction() as conn:
            conn.execute(MIGRATION_TABLE_SQL)
            current = self._applied_version(conn)
        if current > LATEST_VERSION:
            raise SchemaMismatch(
                f"database {self.path!r} has schema version {current}, written by a newer "
                f"recallbox (this one knows up to {LATEST_VERSION}); upgrade recallbox "
                "(pip install -U recallbox) to open it"
            )
        for version, name, statements in MIGRATIONS:
            with self.pool.transaction() as conn:
                if self._applied_version_is(conn, version):
                    continue
                for statement in statements:
                    conn.execute(statement)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, format_time(datetime.now(UTC))),
                )

    @staticmethod
    def _applied_version(conn: apsw.Connection) -> int:
        row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0) if row else 0

    @staticmethod
    def _applied_version_is(conn: apsw.Connection, version: int) -> bool:
        row = conn.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (version,)
        ).fetchone()
        return row is not None

    # -- threads ---------------------------------------------------------------------------
    def _thread_from_row(self, row: Sequence[Any]) -> Thread:
        return Thread(
            channel=row[0],
            title=row[1],
            quarantined=bool(row[2]),
            created_at=parse_time(row[3]),
            generation_count=int(row[4]),
            message_count=int(row[5]),
        )

    _THREAD_SELECT = (
        "SELECT t.channel, t.title, t.quarantined, t.created_at, "
        "(SELECT max(number) FROM generations g WHERE g.thread_id = t.id), "
        "(SELECT count(*) FROM messages m WHERE m.thread_id = t.id) FROM threads t"
    )

    def get_thread(self, channel: str) -> Thread | None:
        with self.pool.reading() as conn:
            row = conn.execute(self._THREAD_SELECT + " WHERE t.channel = ?", (channel,)).fetchone()
        return self._thread_from_row(row) if row else None

    def list_threads(self) -> list[Thread]:
        with self.pool.reading() as conn:
            rows = conn.execute(self._THREAD_SELECT + " ORDER BY t.id").fetchall()
        return [self._thread_from_row(r) for r in rows]

    def _thread_id(self, conn: apsw.Connection, channel: str) -> int | None:
        row = conn.execute("SELECT id FROM threads WHERE channel = ?", (channel,)).fetchone()
        return int(row[0]) if row else None

    def _ensure_thread_id(self, conn: apsw.Connection, channel: str, title: str | None) -> int:
        thread_id = self._thread_id(conn, channel)
        if thread_id is not None:
            return thread_id
        now = format_time(datetime.now(UTC))
        conn.execute(
            "INSERT INTO threads (channel, title, created_at, last_activity) VALUES (?, ?, ?, ?)",
            (channel, title, now, now),
        )
        thread_id = int(conn.last_insert_rowid())
        conn.execute(
            "INSERT INTO generations (uid, thread_id, number, opened_at) VALUES (?, ?, 1, ?)",
            (new_id(GENERATION_ID_PREFIX), thread_id, now),
        )
        return thread_id

    def ensure_thread(self, channel: str, title: str | None) -> Thread:
        with self.pool.transaction() as conn:
            self._ensure_thread_id(conn, channel, title)
        thread = self.get_thread(channel)
        assert thread is not None
        return thread

    def set_title(self, channel: str, title: str | None) -> None:
        with self.pool.transaction() as conn:
            self._ensure_thread_id(conn, channel, title)
            conn.execute("UPDATE threads SET title = ? WHERE channel = ?", (title, channel))

    def set_quarantined(self, channel: str, quarantined: bool) -> None:
        with self.pool.transaction() as conn:
            if self._thread_id(conn, channel) is None:
                raise NotFound(f"unknown channel {channel!r}")
            conn.execute(
                "UPDATE threads SET quarantined = ? WHERE channel = ?", (int(quarantined), channel)
            )

    # -- generations -----------------------------------------------------------------------
    def _generation_from_row(self, row: Sequence[Any]) -> Generation:
        return Generation(
            id=row[0], number=int(row[1]), channel=row[2], opened_at=parse_time(row[3])
        )

    def generations(self, channel: str) -> list[Generation]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                "SELECT g.uid, g.number, t.channel, g.opened_at FROM generations g "
                "JOIN threads t ON t.id = g.thread_id WHERE t.channel = ? ORDER BY g.number",
                (channel,),
            ).fetchall()
        return [self._generation_from_row(r) for r in rows]

    def current_generation(self, channel: str) -> Generation:
        gens = self.generations(channel)
        if not gens:
            raise NotFound(f"unknown channel {channel!r}")
        return gens[-1]

    # -- messages --------------------------------------------------------------------------
    def append(self, channel: str, rows: Sequence[NewMessage]) -> list[Message]:
        ids: list[str] = []
        with self.pool.transaction() as conn:
            thread_id = self._ensure_thread_id(conn, channel, None)
            gen_row = conn.execute(
                "SELECT id, number FROM generations WHERE thread_id = ? "
                "ORDER BY number DESC LIMIT 1",
                (thread_id,),
            ).fetchone()
            seq_row = conn.execute(
                "SELECT next_seq FROM threads WHERE id = ?", (thread_id,)
            ).fetchone()
            assert gen_row is not None and seq_row is not None
            generation_id, number = int(gen_row[0]), int(gen_row[1])
            seq = int(seq_row[0])
            latest = ""
            for row in rows:
                created = format_time(row.created_at)
                if row.opens_generation:
                    conn.execute(
                        "UPDATE generations SET closed_at = ? WHERE id = ?",
                        (created, generation_id),
                    )
                    number += 1
                    conn.execute(
                        "INSERT INTO generations (uid, thread_id, number, opened_at) "
                        "VALUES (?, ?, ?, ?)",
                        (new_id(GENERATION_ID_PREFIX), thread_id, number, created),
                    )
                    generation_id = int(conn.last_insert_rowid())
                uid = new_id(MESSAGE_ID_PREFIX)
                conn.execute(
                    "INSERT INTO messages (uid, thread_id, generation_id, seq, role, kind, content, "
                    "content_seg, args_text, raw_content, tool_calls, tool_calls_raw, tool_call_id, "
                    "model_visible, pending, created_at, metadata, content_hash) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        uid,
                        thread_id,
                        generation_id,
                        seq,
                        row.role,
                        row.kind,
                        *text_columns(row),
                        row.tool_call_id,
                        int(row.model_visible),
                        int(row.pending),
                        created,
                        dump_json(row.metadata),
                        content_hash(row.content, row.args_text),
                    ),
                )
                ids.append(uid)
                seq += 1
                latest = max(latest, created)
            conn.execute(
                "UPDATE threads SET next_seq = ?, last_activity = max(last_activity, ?) "
                "WHERE id = ?",
                (seq, latest, thread_id),
            )
            return self._messages_by_uid(conn, ids)

    def _messages_by_uid(self, conn: apsw.Connection, ids: Sequence[str]) -> list[Message]:
        out: list[Message] = []
        for uid in ids:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.uid = ?", (uid,)
            ).fetchone()
            assert row is not None
            out.append(row_to_message(row))
        return out

    def iter_messages(self, channel: str, generation: int | None = None) -> Iterator[Message]:
        sql = f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE t.channel = ?"
        params: tuple[Any, ...] = (channel,)
        if generation is not None:
            sql += " AND g.number = ?"
            params = (channel, generation)
        sql += " ORDER BY g.number, m.seq"
        with self.pool.reading() as conn:
            rows = conn.execute(sql, params).fetchall()
        for row in rows:
            yield row_to_message(row)

    def messages(self, channel: str, generation: int | None = None) -> list[Message]:
        return list(self.iter_messages(channel, generation))

    def get_message(self, message_id: str) -> Message | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS} FROM {MESSAGE_FROM} WHERE m.uid = ?", (message_id,)
            ).fetchone()
        return row_to_message(row) if row else None

    def _update_message(self, message_id: str, column: str, value: Any) -> Message:
        with self.pool.transaction() as conn:
            changed = conn.execute(
                f"UPDATE messages SET {column} = ? WHERE uid = ? RETURNING uid", (value, message_id)
            ).fetchall()
            if not changed:
                raise NotFound(f"unknown message id {message_id!r}")
            return self._messages_by_uid(conn, [message_id])[0]

    def set_pending(self, message_id: str, pending: bool) -> Message:
        return self._update_message(message_id, "pending", int(pending))

    def set_superseded(self, message_id: str, by: str | None) -> Message:
        return self._update_message(message_id, "superseded_by", by)

    # -- privacy policy --------------------------------------------------------------------
    def set_thread_source(self, channel: str, source: str | None, identity: str | None) -> None:
        with self.pool.transaction() as conn:
            self._ensure_thread_id(conn, channel, None)
            conn.execute(
                "UPDATE threads SET source = ?, source_identity = ? WHERE channel = ?",
                (source, identity, channel),
            )

    def thread_allowed(self, channel: str) -> bool:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT 1 FROM threads t WHERE t.channel = ? AND {THREAD_ALLOWED_SQL}", (channel,)
            ).fetchone()
        return row is not None

    def set_source_excluded(self, name: str, excluded: bool, identity: str | None = None) -> None:
        with self.pool.transaction() as conn:
            if excluded:
                conn.execute(
                    "INSERT INTO excluded_sources (name, identity, added_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET identity = "
                    "coalesce(excluded.identity, excluded_sources.identity)",
                    (name, identity, format_time(datetime.now(UTC))),
                )
            else:
                conn.execute("DELETE FROM excluded_sources WHERE name = ?", (name,))

    def policy(self) -> Policy:
        with self.pool.reading() as conn:
            channels = [
                str(r[0])
                for r in conn.execute(
                    "SELECT channel FROM threads WHERE quarantined = 1 ORDER BY channel"
                ).fetchall()
            ]
            sources = [
                str(r[0]) for r in conn.execute("SELECT name FROM excluded_sources ORDER BY name")
            ]
        return Policy(quarantined=tuple(channels), excluded_sources=tuple(sources))

    # -- health ----------------------------------------------------------------------------
    def doctor(self, *, repair: bool = False) -> DoctorReport:
        repaired: list[str] = []
        if repair:
            with self.pool.transaction() as conn:
                repaired = fts.repair_all(conn)
        with self.pool.reading() as conn:
            indexes = tuple(fts.check_all(conn))
        return DoctorReport(
            indexes=indexes, schema_version=self.schema_version(), repaired=tuple(repaired)
        )

    # -- thread search (DESIGN §3.2, §3.3) ---------------------------------------------------
    def literal_candidates(
        self,
        term: str,
        *,
        channel: str | None,
        case_sensitive: bool,
        limit: int,
        recent: int = 0,
    ) -> CandidateStream:
        return literal.literal_candidates(
            self.pool,
            term,
            channel=channel,
            case_sensitive=case_sensitive,
            limit=limit,
            recent=recent,
        )

    def readable_message(self, message_id: str) -> ReadableMessage | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {MESSAGE_COLUMNS}, m.tool_calls_raw FROM {MESSAGE_FROM} "
                f"WHERE m.uid = ? AND {THREAD_ALLOWED_SQL}",
                (message_id,),
            ).fetchone()
        if row is None:
            return None
        return ReadableMessage(message=row_to_message(row[:17]), tool_calls_raw=row[17])
