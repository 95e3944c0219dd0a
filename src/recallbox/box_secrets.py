"""The Box verbs that erase or copy (DESIGN §7a), mixed into ``recallbox.Box``.

``redact`` and ``purge`` are the only deletes in recallbox and are person-facing: the CLI and
Python only, never an MCP tool or a hook (an architecture test keeps them off agent paths).
The rules live in ``recallbox.domains.secrets``; the erasure in the store's ``SecretStore``.
"""

from __future__ import annotations

import os
import re

from recallbox.domains import secrets
from recallbox.hitlog import HitRecorder
from recallbox.storage.base import Store, require
from recallbox.storage.secrets import Backup
from recallbox.types import PurgeReport

HIT_FLUSH_WAIT_S = 30.0
"""How long a purge or redaction waits to write the buffered hit-log rows first."""


class SecretVerbs:
    """Purge, redact and backup (part of :class:`recallbox.Box`)."""

    store: Store
    hits: HitRecorder

    def redact(
        self,
        message_id: str | None,
        pattern: str | re.Pattern[str],
        *,
        channel: str | None = None,
        handle: str | None = None,
        key: str | None = None,
        source: str | None = None,
    ) -> int:
        """Replace every match of ``pattern`` (a literal ``str``, or a compiled ``re.Pattern``)
        by ``[REDACTED]``; returns the number of replacements.

        Reaches the message ``message_id`` (or every message of ``channel``): content, raw
        original, tool-call argument leaves and raw argument text, metadata string values,
        and the transcript chunks holding it; the memory entry ``key`` (title, body); the
        sections of the knowledge documents ``source`` (matched as :meth:`exclude_source`
        matches); the stored tool output ``handle`` (and those of ``channel``); and the query
        text of every hit-log row. Rewritten rows lose their vectors
        (the lazy pass re-embeds them); the old text is erased from the file and its WAL.

        Raises:
            InvalidArgument: nothing named, a bad pattern (empty, matching the empty string).
            NotFound: an unknown message id, channel or key.
        """
        target = secrets.check_target(
            message_id, channel=channel, handle=handle, key=key, source=source
        )
        self.hits.flush(wait_s=HIT_FLUSH_WAIT_S)  # buffered hit-log rows are erased too
        return secrets.redact(self.store, target, pattern)

    def purge(
        self,
        message_id: str | None = None,
        *,
        channel: str | None = None,
        handle: str | None = None,
        key: str | None = None,
        source: str | None = None,
        vacuum_full: bool = False,
    ) -> PurgeReport:
        """Delete for good: the message ``message_id``, the thread ``channel`` (every
        generation, its chunks and import ledger), the memory entry ``key``, the sections of
        the knowledge documents ``source``, the stored tool output ``handle`` (a thread's go
        with it); with their keyword-index entries, vectors and the
        hit-log rows that target them (blanking the query of the same recall events).

        A byte scan of the database file and its WAL finds no trace afterwards, unless
        ``PurgeReport.wal_truncated`` is ``False`` (another connection kept reading). On
        PostgreSQL the rows are gone for every reader at once, but their old bytes stay in the
        server's table files (``PurgeReport.physical`` is ``False``) until ``vacuum_full=True``
        rewrites every table (``VACUUM FULL``: each table is locked while it is rewritten); the
        server's WAL archives and backups are outside recallbox. A file still on disk (a
        transcript, a document, ``MEMORY.md``) comes back with its next import: exclude it first
        (:meth:`exclude_source`) or delete it.

        Raises:
            InvalidArgument: nothing named, a name that is not a non-empty string, or a
                ``vacuum_full`` that is not a bool.
            NotFound: an unknown message id, channel or key.
        """
        target = secrets.check_target(
            message_id, channel=channel, handle=handle, key=key, source=source
        )
        self.hits.flush(wait_s=HIT_FLUSH_WAIT_S)  # buffered hit-log rows are erased too
        return secrets.purge(self.store, target, vacuum_full=vacuum_full)

    def backup(self, path: str | os.PathLike[str]) -> int:
        """Copy the live database to the new file ``path`` (the online backup API: writers go
        on, the copy is one consistent state, mode 0600); returns its page count.

        Raises:
            InvalidArgument: ``path`` exists, or the store is in memory.
            StoreUnavailable: the backend cannot back up, or ``path`` cannot be created.
        """
        store: Backup = require(self.store, Backup)
        return store.backup(os.fspath(path))
