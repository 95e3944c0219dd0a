"""PostgresStore: the backend for a PostgreSQL server; composes one mixin per protocol.

| protocol (``storage.base``) | where |
|---|---|
| ``StoreLifecycle``, ``PolicyStore``, ``LiteralSearch``, ``Health`` | here |
| ``ThreadStore`` | ``messages.py`` (the inspector's bounded reads: ``timeline.py``) |
| ``HitLog`` | ``hitlog.py`` |
| ``ToolOutputStore`` | ``tool_outputs.py`` |
| ``KeywordIndex`` | ``keyword_index.py`` (over the corpora of ``corpora.py``) |
| ``VectorIndex`` | ``vector_index.py`` (``vectors.py`` is pgvector) |
| ``ImportLedger`` | ``imports.py`` |
| ``TranscriptChunks`` | ``chunks.py`` |
| ``EpisodeReads`` | ``episodes.py`` |
| ``KnowledgeStore`` | ``sections.py`` |
| ``MemoryStore`` | ``memory.py`` |
| ``SecretStore``, ``VacuumFull`` | ``secrets.py`` (``redact.py``) |
| ``CodeStore`` | ``code.py`` |
| ``StoreTransfer`` (``recallbox migrate``) | ``transfer.py`` |

The visibility rule is written once, in ``visibility.py``; connections, transactions,
snapshots and deadlines are ``connection.py``'s; ``docs/postgres.md`` is the design.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from recallbox.errors import NotFound
from recallbox.storage.codecs import storable
from recallbox.storage.deadline import Deadline
from recallbox.storage.postgres import health, literal, migrations
from recallbox.storage.postgres.chunks import ChunksMixin
from recallbox.storage.postgres.code import CodeMixin
from recallbox.storage.postgres.connection import PgPool
from recallbox.storage.postgres.episodes import EpisodeMixin
from recallbox.storage.postgres.hitlog import HitLogMixin
from recallbox.storage.postgres.imports import ImportLedgerMixin
from recallbox.storage.postgres.keyword_index import KeywordMixin
from recallbox.storage.postgres.memory import MemoryMixin
from recallbox.storage.postgres.messages import ThreadMixin, ensure_thread_id, thread_id
from recallbox.storage.postgres.secrets import SecretsMixin
from recallbox.storage.postgres.sections import KnowledgeMixin
from recallbox.storage.postgres.timeline import TimelineMixin
from recallbox.storage.postgres.tool_outputs import ToolOutputsMixin
from recallbox.storage.postgres.transfer import TransferMixin
from recallbox.storage.postgres.vector_index import VectorMixin
from recallbox.storage.postgres.visibility import THREAD_ALLOWED_SQL
from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.values import CandidateStream
from recallbox.types import DoctorReport, Policy


class PostgresStore(
    ThreadMixin,
    TimelineMixin,
    KeywordMixin,
    VectorMixin,
    ImportLedgerMixin,
    ChunksMixin,
    EpisodeMixin,
    KnowledgeMixin,
    MemoryMixin,
    SecretsMixin,
    HitLogMixin,
    ToolOutputsMixin,
    CodeMixin,
    TransferMixin,
):
    """The backend for a ``postgresql://`` URL (psycopg 3 and its pool, pg_trgm, pgvector)."""

    capabilities: frozenset[str] = frozenset({"tsvector_bm25", "pg_trgm", "pgvector", "bigram_cjk"})

    def __init__(self, url: str) -> None:
        self.url = url
        self.pool = PgPool(url)
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

    @contextmanager
    def read_snapshot(self, deadline: Deadline | None = None) -> Iterator[None]:
        with self.pool.snapshot(deadline):
            yield

    def schema_version(self) -> int:
        with self.pool.reading() as conn:
            row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0) if row else 0

    def migrate(self) -> None:
        migrations.migrate(self.pool)

    # -- privacy policy --------------------------------------------------------------------
    def set_quarantined(self, channel: str, quarantined: bool) -> None:
        with self.pool.transaction() as conn:
            if not storable(channel) or thread_id(conn, channel) is None:
                raise NotFound(f"unknown channel {channel!r}")
            conn.execute(
                "UPDATE threads SET quarantined = %s WHERE channel = %s", (quarantined, channel)
            )

    def set_thread_source(self, channel: str, source: str | None, identity: str | None) -> None:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, None)
            conn.execute(
                "UPDATE threads SET source = %s, source_identity = %s WHERE channel = %s",
                (source, identity, channel),
            )

    def thread_allowed(self, channel: str) -> bool:
        if not storable(channel):
            return False
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT 1 FROM threads t WHERE t.channel = %s AND {THREAD_ALLOWED_SQL}",
                (channel,),
            ).fetchone()
        return row is not None

    def set_source_excluded(self, name: str, excluded: bool, identity: str | None = None) -> None:
        basename = name.rsplit("/", 1)[-1]
        with self.pool.transaction() as conn:
            if excluded:
                conn.execute(
                    "INSERT INTO excluded_sources (exclusion, name, path, identity, added_at) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (exclusion) DO UPDATE SET identity = "
                    "coalesce(excluded.identity, excluded_sources.identity)",
                    (name, basename, name if "/" in name else None, identity, datetime.now(UTC)),
                )
                return
            lifted = conn.execute(
                "DELETE FROM excluded_sources WHERE exclusion = %s RETURNING 1", (name,)
            ).fetchall()
            if not lifted and "/" in name:
                # Trigger: an exclusion made by path before exclusions kept their path.
                # Why: it was stored under its basename only. Outcome: the path lifts it.
                conn.execute(
                    "DELETE FROM excluded_sources WHERE exclusion = %s AND path IS NULL",
                    (basename,),
                )

    def policy(self) -> Policy:
        with self.pool.snapshot() as conn:
            channels = [
                str(r[0])
                for r in conn.execute(
                    "SELECT channel FROM threads WHERE quarantined ORDER BY channel"
                ).fetchall()
            ]
            sources = [
                str(r[0])
                for r in conn.execute(
                    "SELECT exclusion FROM excluded_sources ORDER BY exclusion"
                ).fetchall()
            ]
        return Policy(quarantined=tuple(channels), excluded_sources=tuple(sources))

    # -- thread search (DESIGN §3.2) -------------------------------------------------------
    def literal_candidates(
        self,
        query: LiteralQuery,
        *,
        where: SearchFilter,
        limit: int | None = None,
        recent: int = 0,
    ) -> CandidateStream:
        return literal.literal_candidates(self.pool, query, where=where, limit=limit, recent=recent)

    # -- health ----------------------------------------------------------------------------
    def doctor(self, *, repair: bool = False) -> DoctorReport:
        repaired: list[str] = []
        if repair:
            with self.pool.transaction() as conn:
                repaired = health.repair_all(conn)
        with self.pool.snapshot() as conn:
            indexes = tuple(health.check_all(conn))
        return DoctorReport(
            indexes=indexes, schema_version=self.schema_version(), repaired=tuple(repaired)
        )
