"""``search_memory`` as a whole (DESIGN §3.2): the literal part and, with a channel, the
other-memory part, run concurrently on a small pool and merged under the 12 000 cap.

The other-memory part is an *answerer*, ``(query, channel) -> text`` (by default
``recallbox.domains.threads.keyword_answer``). It runs on :class:`AnswerPool`'s threads while
the literal search runs on the caller's; an answer that fails, is not text or comes later than
``OTHER_MEMORY_TIMEOUT_S`` after the search started is dropped (the empty string), and the
literal part stands alone.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait

from recallbox.domains.messages import check_channel
from recallbox.domains.threads import OTHER_MEMORY_TIMEOUT_S, Answerer, LiteralStore, search_literal
from recallbox.text.normalize import normalize_text
from recallbox.text.windows import bounded_thread_search

#: Threads the answerer runs on (one search_memory call uses one).
OTHER_MEMORY_WORKERS = 2
THREAD_NAME_PREFIX = "recallbox-answer"
logger = logging.getLogger(__name__)

__all__ = ["OTHER_MEMORY_TIMEOUT_S", "OTHER_MEMORY_WORKERS", "AnswerPool", "search_memory"]


class AnswerPool:
    """The threads other-memory answers run on: started on first use, stopped by
    :meth:`close` (which gives a running answer its timeout to end)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._running: set[Future[str]] = set()

    def submit(self, answerer: Answerer, query: str, channel: str) -> Future[str]:
        """Start ``answerer(query, channel)`` on a pool thread."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=OTHER_MEMORY_WORKERS, thread_name_prefix=THREAD_NAME_PREFIX
                )
            future = self._pool.submit(answerer, query, channel)
            self._running.add(future)
        future.add_done_callback(self._done)
        return future

    @property
    def running(self) -> int:
        """How many answers are still running."""
        with self._lock:
            return len(self._running)

    def _done(self, future: Future[str]) -> None:
        with self._lock:
            self._running.discard(future)

    def collect(self, future: Future[str] | None, started: float) -> str:
        """The answer if it came within the timeout (counted from ``started``) and is text;
        otherwise the empty string."""
        if future is None:
            return ""
        remaining = max(0.0, started + OTHER_MEMORY_TIMEOUT_S - time.monotonic())
        try:
            answer = future.result(timeout=remaining)
        except Exception:  # a late or failing answerer leaves the literal part alone
            future.cancel()
            logger.debug("other-memory answer dropped", exc_info=True)
            return ""
        return answer if isinstance(answer, str) else ""

    def close(self) -> None:
        """Stop the pool; wait up to the timeout for answers still running."""
        with self._lock:
            pool, self._pool = self._pool, None
            running = list(self._running)
        if pool is None:
            return
        pool.shutdown(wait=False, cancel_futures=True)
        wait(running, timeout=OTHER_MEMORY_TIMEOUT_S)


def search_memory(
    store: LiteralStore, answers: AnswerPool, answerer: Answerer, query: str, channel: str | None
) -> str:
    """The ``search_memory`` text for ``query``: the literal part over ``channel`` (every
    thread when ``None``), then, with a channel, the other-memory answer, merged by
    ``bounded_thread_search``. Never longer than ``THREAD_SEARCH_MAX_CHARS``.

    Raises:
        InvalidArgument: ``channel`` is empty.
    """
    if channel is None:
        return search_literal(store, query, None)
    channel = check_channel(channel)
    started = time.monotonic()
    text = normalize_text(query).strip()
    future = answers.submit(answerer, text, channel) if text else None
    literal = search_literal(store, query, channel)
    return bounded_thread_search(answers.collect(future, started), literal)
