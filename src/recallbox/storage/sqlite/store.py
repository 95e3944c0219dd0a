"""SQLiteStore: the default backend, one apsw database file; composes one mixin per protocol.

| protocol (``storage.base``) | where |
|---|---|
| ``StoreLifecycle``, ``PolicyStore``, ``LiteralSearch``, ``Health`` | here |
| ``ThreadStore`` | ``messages.py`` (the inspector's bounded reads: ``timeline.py``) |
| ``HitLog`` | ``hitlog.py`` |
| ``ToolOutputStore`` | ``tool_outputs.py`` |
| ``KeywordIndex`` | ``keyword.py`` (over the corpora of ``corpora.py``) |
| ``VectorIndex`` | ``vector_index.py`` (same corpora; ``vectors.py`` is sqlite-vec) |
| ``ImportLedger`` | ``imports.py`` |
| ``TranscriptChunks`` | ``chunks.py`` |
| ``EpisodeReads`` | ``episodes.py`` |
| ``KnowledgeStore`` | ``sections.py`` |
| ``MemoryStore`` | ``memory.py`` |
| ``SecretStore``, ``Backup`` | ``secrets.py`` |
| ``CodeStore`` | ``code.py`` |

The visibility rule is written once, in ``visibility.py``; shared row codecs in ``rows.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from recallbox.errors import NotFound
from recallbox.storage.deadline import Deadline
from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.sqlite import fts, literal, migrations, vector_health
from recallbox.storage.sqlite.backlog import BacklogIndexer
from recallbox.storage.sqlite.chunks import ChunksMixin
from recallbox.storage.sqlite.code import CodeMixin
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.episodes import EpisodeMixin
from recallbox.storage.sqlite.hitlog import HitLogMixin
from recallbox.storage.sqlite.imports import ImportLedgerMixin
from recallbox.storage.sqlite.keyword import KeywordMixin
from recallbox.storage.sqlite.memory import MemoryMixin
from recallbox.storage.sqlite.messages import ThreadMixin, ensure_thread_id, thread_id
from recallbox.storage.sqlite.rows import now
from recallbox.storage.sqlite.secrets import SecretsMixin
from recallbox.storage.sqlite.sections import KnowledgeMixin
from recallbox.storage.sqlite.timeline import TimelineMixin
from recallbox.storage.sqlite.tool_outputs import ToolOutputsMixin
from recallbox.storage.sqlite.vector_cache import VectorCache
from recallbox.storage.sqlite.vector_index import VectorMixin
from recallbox.storage.sqlite.vector_window import WindowCopies
from recallbox.storage.sqlite.visibility import THREAD_ALLOWED_SQL
from recallbox.storage.values import CandidateStream
from recallbox.types import DoctorReport, Policy


class SQLiteStore(
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
):
    """The default backend: one SQLite file (or ``":memory:"``) through apsw."""

    capabilities: frozenset[str] = frozenset({"fts5", "trigram", "bigram_cjk"})

    def __init__(self, path: str) -> None:
        self.path = path
        self.pool = ConnectionPool(path)
        self.vector_copies = VectorCache()
        self.vector_windows = WindowCopies()
        self.indexer = BacklogIndexer(self.pool)
        try:
            self.migrate()
            if self.indexer.pending():
                self.indexer.wake()  # rows another process queued and left
        except BaseException:
            self.pool.close()
            raise

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        self.indexer.stop()
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
        migrations.migrate(self.pool, self.path)

    # -- privacy policy --------------------------------------------------------------------
    def set_quarantined(self, channel: str, quarantined: bool) -> None:
        with self.pool.transaction() as conn:
            if thread_id(conn, channel) is None:
                raise NotFound(f"unknown channel {channel!r}")
            conn.execute(
                "UPDATE threads SET quarantined = ? WHERE channel = ?", (int(quarantined), channel)
            )

    def set_thread_source(self, channel: str, source: str | None, identity: str | None) -> None:
        with self.pool.transaction() as conn:
            ensure_thread_id(conn, channel, None)
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
        basename = name.rsplit("/", 1)[-1]
        with self.pool.transaction() as conn:
            if excluded:
                conn.execute(
                    "INSERT INTO excluded_sources (exclusion, name, path, identity, added_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (exclusion) DO UPDATE SET identity = "
                    "coalesce(excluded.identity, excluded_sources.identity)",
                    (name, basename, name if "/" in name else None, identity, now()),
                )
                return
            lifted = conn.execute(
                "DELETE FROM excluded_sources WHERE exclusion = ? RETURNING 1", (name,)
            ).fetchall()
            if not lifted and "/" in name:
                # Trigger: an exclusion made by path before exclusions kept their path.
                # Why: it was stored under its basename only. Outcome: the path lifts it.
                conn.execute(
                    "DELETE FROM excluded_sources WHERE exclusion = ? AND path IS NULL",
                    (basename,),
                )

    def policy(self) -> Policy:
        with self.pool.reading() as conn:
            channels = [
                str(r[0])
                for r in conn.execute(
                    "SELECT channel FROM threads WHERE quarantined = 1 ORDER BY channel"
                ).fetchall()
            ]
            sources = [
                str(r[0])
                for r in conn.execute("SELECT exclusion FROM excluded_sources ORDER BY exclusion")
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
                repaired = fts.repair_all(conn) + vector_health.repair_all(conn)
        with self.pool.transaction() as conn:  # one consistent state, the indexer held off
            indexes = (*fts.check_all(conn), *vector_health.check_all(conn))
        return DoctorReport(
            indexes=indexes, schema_version=self.schema_version(), repaired=tuple(repaired)
        )
