"""Injection moments: the session-start assembly and the first-message recall (DESIGN §7).

The pure builders; reading the thread, the privacy gate and the once-per-generation record are
the Box's (phase 2). Everything here is deterministic, offline and bounded:

* :func:`build_resume_context` — a resume context from a thread's stored messages
  (:mod:`recallbox.injection_resume`);
* :func:`first_message_keywords` / :func:`first_message_query` — what the first-message recall
  searches for (:mod:`recallbox.text.keywords`); :func:`fit_tokens` cuts its result to
  ``max_tokens``;
* :class:`TimeBox` — runs the recall with a deadline; a late result is dropped, and the caller
  never waits longer than the deadline;
* :func:`assemble_session_start` — the Claude Code ``SessionStart`` output: the resume context
  first, then the memory injection in the room left, within :data:`HOOK_OUTPUT_MAX_CHARS`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

from recallbox.injection_resume import (
    RESUME_CONTEXT_SHARE,
    RESUME_HEADER,
    RESUME_MIN_BUDGET_CHARS,
    build_resume_context,
    resume_budget_chars,
)
from recallbox.text.keywords import FIRST_MESSAGE_MAX_KEYWORDS, first_message_keywords
from recallbox.text.render import CAP_MARK
from recallbox.text.tokens import NON_CJK_CHARS_PER_TOKEN, estimate_tokens

__all__ = [
    "FIRST_MESSAGE_MAX_KEYWORDS",
    "FIRST_MESSAGE_MAX_TOKENS",
    "FIRST_MESSAGE_TIMEOUT_S",
    "HOOK_OUTPUT_MAX_CHARS",
    "RESUME_CONTEXT_SHARE",
    "RESUME_HEADER",
    "RESUME_MIN_BUDGET_CHARS",
    "TimeBox",
    "assemble_session_start",
    "build_resume_context",
    "first_message_keywords",
    "first_message_query",
    "fit_tokens",
    "memory_budget_tokens",
    "resume_budget_chars",
]

T = TypeVar("T")

#: Claude Code keeps at most 10 000 characters of hook output in the context; stay under it.
HOOK_OUTPUT_MAX_CHARS = 9_000
SESSION_START_SEP = "\n\n"
MEMORY_CUT_MARK = (
    '\n…memory injection truncated; recall_context(query, source="MEMORY.md") fetches the rest'
)
FIRST_MESSAGE_TIMEOUT_S = 0.15
FIRST_MESSAGE_MAX_TOKENS = 8_000
#: Workers of a :class:`TimeBox`: a late call keeps one busy until it ends (or is interrupted).
TIMEBOX_WORKERS = 2


def first_message_query(message: object) -> str:
    """The recall query of a first user message: its keywords, space-separated ("" for none)."""
    return " ".join(first_message_keywords(message))


def fit_tokens(text: str, max_tokens: int, *, marker: str = CAP_MARK) -> str:
    """``text`` when ``estimate_tokens(text) <= max_tokens``, else its longest start that fits
    with ``marker`` (a cut at a line end when one is in the last quarter)."""
    if estimate_tokens(text) <= max_tokens:
        return text
    room = max_tokens - estimate_tokens(marker)
    if room <= 0:
        return ""
    lo, hi = 0, min(len(text), room * NON_CJK_CHARS_PER_TOKEN)
    while lo < hi:  # the longest prefix within ``room`` tokens (the estimate grows with length)
        mid = (lo + hi + 1) // 2
        if estimate_tokens(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    newline = text.rfind("\n", 0, lo)
    cut = newline if newline >= lo * 3 // 4 else lo
    return text[:cut] + marker


def memory_budget_tokens(resume: str, max_chars: int = HOOK_OUTPUT_MAX_CHARS) -> int:
    """The ``budget_tokens`` for the memory injection that follows ``resume`` at session start.

    ``room // 4`` tokens: text within that estimate is at most ``room`` characters long
    (``estimate_tokens`` counts a CJK character as one token and four others as one).
    """
    room = max_chars - len(resume) - len(SESSION_START_SEP)
    return max(0, room // NON_CJK_CHARS_PER_TOKEN)


def assemble_session_start(
    resume: str, memory: str, *, max_chars: int = HOOK_OUTPUT_MAX_CHARS
) -> str:
    """The session-start output: ``resume`` first, then ``memory`` in the room left.

    Build ``resume`` with ``budget_chars=min(resume_budget_chars(window), max_chars)`` and
    ``memory`` with :func:`memory_budget_tokens` so nothing here has to cut; if a part still
    does not fit, the resume context is capped and the memory injection is cut at a line end
    with a line saying how to fetch the rest.

    Returns:
        At most ``max_chars`` characters.
    """
    if len(resume) > max_chars:
        resume = resume[: max(0, max_chars - len(CAP_MARK))] + CAP_MARK
        return resume[:max_chars]
    if not memory:
        return resume
    head = resume + SESSION_START_SEP if resume else ""
    room = max_chars - len(head)
    if len(memory) <= room:
        return head + memory
    keep = room - len(MEMORY_CUT_MARK)
    if keep <= 0:
        return resume
    newline = memory.rfind("\n", 0, keep)
    cut = newline if newline > 0 else keep
    return head + memory[:cut] + MEMORY_CUT_MARK


class TimeBox:
    """Runs a call with a deadline; a result that comes later is dropped, never delivered.

    The caller waits at most ``timeout_s``: a call still queued at the deadline is cancelled,
    and one already running is left to finish in its worker (a started thread cannot be
    stopped) after ``on_timeout`` — e.g. ``Connection.interrupt`` — has been called to cut it
    short. Its result, or its exception, goes nowhere. The worker pool is created on first use
    and has :data:`TIMEBOX_WORKERS` threads.
    """

    def __init__(self, workers: int = TIMEBOX_WORKERS) -> None:
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    max_workers=self._workers, thread_name_prefix="recallbox-timebox"
                )
            return self._pool

    def run(
        self,
        call: Callable[[], T],
        timeout_s: float,
        *,
        on_timeout: Callable[[], object] | None = None,
    ) -> T | None:
        """``call()``'s result if it ends within ``timeout_s`` seconds and does not raise, else
        ``None``."""
        if not timeout_s > 0:
            return None
        future: Future[T] = self._executor().submit(call)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            if not future.cancel() and on_timeout is not None:
                with contextlib.suppress(Exception):  # cutting a late call short: best effort
                    on_timeout()
            future.add_done_callback(_discard)
            return None
        except Exception:
            return None  # a failed recall injects nothing

    def close(self) -> None:
        """Stop taking calls; running ones finish in the background."""
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
                self._pool = None


def _discard(future: Future[Any]) -> None:
    """Retrieve a late result or exception so it is dropped without a trace."""
    if not future.cancelled():
        future.exception()
