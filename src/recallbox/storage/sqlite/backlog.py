"""The background indexer: moves queued messages into the literal index, behind the writes.

Writes only queue rows (``literal_index.py``); one daemon thread per store drains the queue in
transactions of about :data:`~recallbox.storage.sqlite.literal_index.INDEX_BATCH_BYTES` of
text, so the write lock is never held long and a writer waits at most one batch. The thread
starts when a write queues rows (:meth:`BacklogIndexer.wake`) or when the store opens on a file that still
has a backlog, and ends once the backlog is empty. :meth:`BacklogIndexer.drain` indexes
everything on the calling thread (benchmarks, tests, a command that is about to exit);
:meth:`BacklogIndexer.stop` ends the thread after its current batch (``close()``): what is left
stays queued in the file for the next process, and searches scan it meanwhile.

An in-memory database has one shared connection: there the queue is drained on the writer's
thread right after its transaction (nothing could run beside it anyway).

An indexing error (a full disk, a lock held too long by another process) ends the thread
quietly, logged at debug level; the rows stay queued, the next write retries. A wait for a
lock another process holds ends as soon as :meth:`BacklogIndexer.stop` is called, so closing a
store (a read-only command exiting) never waits behind another process's write.
"""

from __future__ import annotations

import logging
import threading

import apsw

from recallbox.errors import StoreUnavailable
from recallbox.storage.sqlite.connection import ConnectionPool, wait_when_busy
from recallbox.storage.sqlite.literal_index import INDEX_BATCH_ROWS, backlog_size, index_backlog

logger = logging.getLogger(__name__)
#: How long an idle indexer thread waits for new rows before it ends.
INDEXER_IDLE_S = 2.0
#: Without writes for this long, the indexer starts (writes usually come in bursts).
INDEXER_QUIET_S = 0.25
#: Past this backlog the indexer takes turns with the writers instead of waiting for quiet
#: (what a search scans exactly, unindexed, stays bounded).
INDEXER_LAG_MAX = 20_000
#: How often a giving-way indexer looks again for waiting writers.
INDEXER_YIELD_S = 0.001
#: How long closing a store waits for the indexer to finish its batch.
INDEXER_STOP_WAIT_S = 5.0


class BacklogIndexer:
    """Drains ``literal_backlog`` of one store (see the module docs)."""

    def __init__(self, pool: ConnectionPool) -> None:
        self.pool = pool
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wanted = threading.Event()
        self._halt = threading.Event()  # set by stop(): ends every wait at once
        self._stopping = False

    def pending(self) -> int:
        """How many messages wait for the literal index."""
        with self.pool.reading() as conn:
            return backlog_size(conn)

    def index_batch(self, limit: int = INDEX_BATCH_ROWS) -> int:
        """Index one batch in its own write transaction; returns the rows taken."""
        with self.pool.transaction() as conn:
            return index_backlog(conn, limit)

    def drain(self) -> int:
        """Index the whole backlog on this thread; returns the rows taken."""
        total = 0
        while taken := self.index_batch():
            total += taken
        return total

    def wake(self) -> None:
        """Rows were queued: index them soon (a thread for a file, right now in memory)."""
        if self._stopping:
            return
        if self.pool.is_memory:
            if not self.pool.in_transaction():
                self.drain()
            return
        with self._lock:
            self._wanted.set()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="recallbox-literal-indexer", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        self.pool.mark_background()
        try:
            # A lock another process holds is waited for until stop(), not for the whole busy
            # timeout: a command that read and is closing must not sit 30 s behind an import.
            wait_when_busy(self.pool.connection(), give_up=self._halt.is_set)
            while True:
                self._wanted.wait(INDEXER_IDLE_S)
                with self._lock:
                    if self._stopping or not self._wanted.is_set():
                        self._thread = None
                        return
                    self._wanted.clear()
                self._drain_politely()
        except (StoreUnavailable, apsw.Error) as exc:
            # Trigger: the file is locked by another process, full, or closed under us.
            # Why: indexing is an optimisation; searches scan what is still queued.
            # Outcome: the rows stay queued; the next write (or open) starts a new thread.
            logger.debug("literal indexer stopped: %s", exc)
            with self._lock:
                self._thread = None
        finally:
            self.pool.release_thread_connection()

    def _drain_politely(self) -> None:
        """Index the backlog, giving way to this process's writers.

        Trigger: writes keep coming (an import, a busy agent). Why: indexing costs more than
        writing, so an indexer that took turns with every write would halve the write rate.
        Outcome: while the backlog is under :data:`INDEXER_LAG_MAX` rows the indexer waits
        for :data:`INDEXER_QUIET_S` without writes; past it, it takes turns, a writer first.
        """
        while not self._stopping:
            pending = self.pending()
            if pending == 0:
                return
            quiet = self.pool.seconds_since_write()
            if pending <= INDEXER_LAG_MAX and quiet < INDEXER_QUIET_S:
                self._halt.wait(INDEXER_QUIET_S - quiet)
                continue
            while self.pool.writers_waiting() and not self._stopping:
                self._halt.wait(INDEXER_YIELD_S)
            self.index_batch()

    def stop(self) -> None:
        """End the thread after its current batch and wait for it, at most
        :data:`INDEXER_STOP_WAIT_S`."""
        with self._lock:
            self._stopping = True
            self._wanted.set()
            self._halt.set()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(INDEXER_STOP_WAIT_S)
            if thread.is_alive():
                # Trigger: the thread waits for a write lock that is not coming (a writer
                # interrupted by Ctrl-C at the wrong instant, another process holding the
                # file). Why: closing must not hang the process on its way out. Outcome: the
                # daemon thread is left behind; its batch rolls back, the rows stay queued.
                logger.debug("literal indexer still busy after %.1f s; not waited for",
                             INDEXER_STOP_WAIT_S)  # fmt: skip
