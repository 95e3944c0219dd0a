"""``search_memory`` as a whole (DESIGN §3.2): the literal part and, with a channel, the
other-memory part, run concurrently on a small pool and merged under the 12 000 cap.

The other-memory part is an *answerer*, ``(query, channel) -> text``. It runs on
:class:`AnswerPool`'s threads while the literal search runs on the caller's; an answer that
fails, is not text or comes later than ``OTHER_MEMORY_TIMEOUT_S`` after the search started is
dropped (the empty string), and the literal part stands alone. The default answerer (the
recall over memory, knowledge and sessions, ``recallbox.recall_answer``) is a
:class:`ShowingAnswerer`: it is told the message ids the literal part shows, leaves them out,
and records its hit rows only when its answer is used. A plain answerer gets neither (it is
exempt from the de-duplication).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from recallbox.domains.messages import check_channel
from recallbox.domains.threads import (
    OTHER_MEMORY_TIMEOUT_S,
    THREAD_LITERAL_MAX_CHARS,
    Answerer,
    LiteralStore,
    literal_part,
)
from recallbox.errors import InvalidArgument
from recallbox.text.normalize import normalize_text
from recallbox.text.windows import MARK, SEP, THREAD_SEARCH_MAX_CHARS, bounded_thread_search

#: The smallest ``max_chars`` a caller may ask of ``search_memory``: the whole literal part, the
#: separator and the cut mark.
MIN_SEARCH_MEMORY_MAX_CHARS = THREAD_LITERAL_MAX_CHARS + len(SEP) + len(MARK)
#: Threads the answerer runs on (one search_memory call uses one).
OTHER_MEMORY_WORKERS = 2
THREAD_NAME_PREFIX = "recallbox-answer"
logger = logging.getLogger(__name__)

__all__ = [
    "MIN_SEARCH_MEMORY_MAX_CHARS",
    "OTHER_MEMORY_TIMEOUT_S",
    "OTHER_MEMORY_WORKERS",
    "Answer",
    "AnswerPool",
    "MemorySearch",
    "ShowingAnswerer",
    "answer_budget",
    "search_memory",
]


def answer_budget(max_chars: int = THREAD_SEARCH_MAX_CHARS) -> int:
    """The other-memory part's budget under a ``max_chars`` cap: what it leaves after the
    literal part and ``SEP`` (so the merge never cuts a budgeted answer mid-item)."""
    return max_chars - THREAD_LITERAL_MAX_CHARS - len(SEP)


@dataclass(frozen=True, slots=True)
class Answer:
    """A :class:`ShowingAnswerer`'s answer: its text, and what to do once it is used."""

    text: str
    commit: Callable[[], None]


@runtime_checkable
class ShowingAnswerer(Protocol):
    """An answerer told which message ids the literal part shows (DESIGN §3.2)."""

    def __call__(self, query: str, channel: str) -> str: ...

    def answer(
        self,
        query: str,
        channel: str,
        shown: Callable[[], Collection[str]],
        budget_chars: int = ...,
    ) -> Answer:
        """The answer leaving out ``shown()`` (which waits for the literal part), within
        ``budget_chars`` (default: :func:`answer_budget` of the 12 000 cap)."""


@dataclass(frozen=True, slots=True)
class MemorySearch:
    """What ``search_memory`` returned, and the message ids of its literal part's hits."""

    text: str
    literal_ids: tuple[str, ...]


class AnswerPool:
    """The threads other-memory answers run on: started on first use, stopped by
    :meth:`close` (which gives a running answer its timeout to end)."""

    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._running: set[Future[object]] = set()

    def submit(self, call: Callable[[], object]) -> Future[object]:
        """Start ``call()`` (an answer) on a pool thread."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=OTHER_MEMORY_WORKERS, thread_name_prefix=THREAD_NAME_PREFIX
                )
            future = self._pool.submit(call)
            self._running.add(future)
        future.add_done_callback(self._done)
        return future

    @property
    def running(self) -> int:
        """How many answers are still running."""
        with self._lock:
            return len(self._running)

    def _done(self, future: Future[object]) -> None:
        with self._lock:
            self._running.discard(future)

    def collect(self, future: Future[object] | None, started: float) -> str:
        """The answer if it came within the timeout (counted from ``started``) and is text;
        otherwise the empty string. A :class:`Answer` that is used is committed."""
        if future is None:
            return ""
        remaining = max(0.0, started + OTHER_MEMORY_TIMEOUT_S - time.monotonic())
        try:
            answer = future.result(timeout=remaining)
        except Exception:  # a late or failing answerer leaves the literal part alone
            future.cancel()
            logger.debug("other-memory answer dropped", exc_info=True)
            return ""
        if isinstance(answer, Answer):
            if answer.text:
                answer.commit()
            return answer.text
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


def check_max_chars(max_chars: object) -> int:
    """``max_chars`` of ``search_memory``, checked.

    Raises:
        InvalidArgument: not an int from :data:`MIN_SEARCH_MEMORY_MAX_CHARS` to
            :data:`THREAD_SEARCH_MAX_CHARS`.
    """
    if (
        isinstance(max_chars, bool)
        or not isinstance(max_chars, int)
        or not MIN_SEARCH_MEMORY_MAX_CHARS <= max_chars <= THREAD_SEARCH_MAX_CHARS
    ):
        raise InvalidArgument(
            f"max_chars must be an integer from {MIN_SEARCH_MEMORY_MAX_CHARS} to "
            f"{THREAD_SEARCH_MAX_CHARS}"
        )
    return max_chars


def search_memory(
    store: LiteralStore,
    answers: AnswerPool,
    answerer: Answerer,
    query: str,
    channel: str | None,
    max_chars: int = THREAD_SEARCH_MAX_CHARS,
) -> MemorySearch:
    """The ``search_memory`` text for ``query``: the literal part over ``channel`` (every
    thread when ``None``), then, with a channel, the other-memory answer (a showing answerer
    budgeted to :func:`answer_budget` of ``max_chars``), merged by ``bounded_thread_search``.
    Never longer than ``max_chars``.

    Raises:
        InvalidArgument: ``channel`` is empty, or ``max_chars`` is out of range.
    """
    max_chars = check_max_chars(max_chars)
    if channel is None:
        text, ids = literal_part(store, query, None)
        return MemorySearch(text, tuple(ids))
    channel = check_channel(channel)
    started = time.monotonic()
    text = normalize_text(query).strip()
    shown: Future[Collection[str]] = Future()

    def literal_ids() -> Collection[str]:
        return shown.result(timeout=max(0.0, started + OTHER_MEMORY_TIMEOUT_S - time.monotonic()))

    future: Future[object] | None = None
    if text:
        if isinstance(answerer, ShowingAnswerer):
            budget = answer_budget(max_chars)
            future = answers.submit(lambda: answerer.answer(text, channel, literal_ids, budget))
        else:
            future = answers.submit(lambda: answerer(text, channel))
    try:
        literal, ids = literal_part(store, query, channel)
    except BaseException as exc:
        shown.set_exception(exc)
        raise
    shown.set_result(frozenset(ids))
    return MemorySearch(
        bounded_thread_search(answers.collect(future, started), literal, max_chars), tuple(ids)
    )
