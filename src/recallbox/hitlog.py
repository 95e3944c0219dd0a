"""Recording the hit-log without ever making a read wait (DESIGN §5).

Agent-facing verbs hand their hit and drill rows to a :class:`HitRecorder`. It buffers them
and writes the buffer with ``store.append_hit_rows``, which never waits for the write lock: when
another writer holds the database (a long import), the rows stay buffered and go out with the
next write that finds the lock free. A buffer that reaches :data:`HIT_LOG_BUFFER_MAX_ROWS`
drops its oldest rows and counts them; the count is stored with the next write and shown by
``recallbox stats hits``. Closing the Box writes what is left, waiting at most
:data:`HIT_LOG_CLOSE_WAIT_S`. Each write also rotates: the log keeps at most
:data:`HIT_LOG_MAX_ROWS` rows, deleting only rows below the watermarks of its consumers
(``decay`` and the lazy embedding pass).

Off with ``recallbox.open(…, hit_log=False)`` (entrypoints: ``RECALLBOX_HIT_LOG=0``, read by
``recallbox.config.hit_log_enabled``): nothing is recorded, so the lazy embedding pass and
``decay`` see no references.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from recallbox.storage.base import HitLog, HitRow

#: The hit-log keeps at most this many rows (rotation; DESIGN §5).
HIT_LOG_MAX_ROWS = 1_000_000
#: Rows held in memory while the database is busy; beyond this the oldest are dropped, counted.
HIT_LOG_BUFFER_MAX_ROWS = 10_000
#: How long closing a Box waits for the write lock to write the buffer.
HIT_LOG_CLOSE_WAIT_S = 2.0
#: The consumers of the log: their watermarks hold rotation back.
CONSUMER_DECAY = "decay"
CONSUMER_EMBED = "embed"
#: The domain of the once-per-generation row of ``first_message_recall`` (DESIGN §7).
FIRST_MESSAGE_DOMAIN = "first_message"
LAYER_LITERAL = "literal"

logger = logging.getLogger(__name__)


def new_event() -> str:
    """An id tying the rows of one recall (or search) together."""
    return uuid.uuid4().hex


def _now() -> datetime:
    return datetime.now(UTC)


class HitRecorder:
    """The Box's hit-log writer: buffered, bounded, never waiting on the write lock.

    Args:
        store: where rows go.
        enabled: ``False`` records nothing.
        max_buffer: rows kept while the database is busy (the oldest beyond are dropped).
    """

    def __init__(
        self, store: HitLog, *, enabled: bool = True, max_buffer: int = HIT_LOG_BUFFER_MAX_ROWS
    ) -> None:
        self.store = store
        self.enabled = enabled
        self.max_buffer = max_buffer
        self._rows: list[HitRow] = []
        self._dropped = 0
        self._lock = threading.Lock()

    # -- recording -----------------------------------------------------------------------
    def hits(
        self,
        query: str,
        *,
        domain: str,
        layer: str,
        target_ids: Iterable[str],
        event: str | None = None,
    ) -> None:
        """One hit row per target a verb returned for ``query``."""
        stamp = _now()
        self._add(
            [
                HitRow(stamp, domain, target, query=query, layer=layer, event=event)
                for target in dict.fromkeys(target_ids)
            ]
        )

    def drill(self, target_id: str, *, verb: str, domain: str) -> None:
        """One drill row: ``verb`` opened ``target_id``."""
        self._add([HitRow(_now(), domain, target_id, verb=verb)])

    def _add(self, rows: Sequence[HitRow]) -> None:
        if not self.enabled or not rows:
            return
        with self._lock:
            self._rows.extend(rows)
            over = len(self._rows) - self.max_buffer
            if over > 0:
                del self._rows[:over]
                self._dropped += over
        self.flush()

    def pending(self, domain: str, target_id: str) -> bool:
        """True when a buffered hit row of ``domain`` names ``target_id`` (not written yet)."""
        with self._lock:
            return any(
                r.domain == domain and r.target_id == target_id and not r.drilled
                for r in self._rows
            )

    @property
    def buffered(self) -> int:
        """Rows waiting for the write lock."""
        with self._lock:
            return len(self._rows)

    # -- writing -------------------------------------------------------------------------
    def flush(self, *, wait_s: float = 0.0) -> bool:
        """Write the buffer (and rotate); ``False`` when it stays buffered (the lock was busy,
        or the calling thread is inside a read snapshot). Never raises."""
        with self._lock:
            rows, dropped = list(self._rows), self._dropped
            self._rows, self._dropped = [], 0
        if not rows and not dropped:
            return True
        try:
            written = self.store.append_hit_rows(
                rows, dropped=dropped, keep_rows=HIT_LOG_MAX_ROWS, wait_s=wait_s
            )
        except Exception:  # telemetry never fails a read (a read-only database included)
            logger.debug("hit-log write failed; rows kept", exc_info=True)
            written = False
        if not written:
            self._requeue(rows, dropped)
        return written

    def _requeue(self, rows: list[HitRow], dropped: int) -> None:
        with self._lock:
            self._rows[:0] = rows
            self._dropped += dropped
            over = len(self._rows) - self.max_buffer
            if over > 0:
                del self._rows[:over]
                self._dropped += over

    def close(self) -> None:
        """Write what is left, waiting at most :data:`HIT_LOG_CLOSE_WAIT_S` for the lock."""
        if self.enabled:
            self.flush(wait_s=HIT_LOG_CLOSE_WAIT_S)
