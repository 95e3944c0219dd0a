"""Injection moments: the session-start assembly and the first-message recall (DESIGN §7).

Everything here is deterministic, offline and bounded:

* :func:`build_resume_context` — a resume context from a thread's stored messages
  (:mod:`recallbox.injection_resume`);
* :func:`first_message_keywords` / :func:`first_message_query` — what the first-message recall
  searches for (:mod:`recallbox.text.keywords`); :func:`fit_tokens` cuts its result to
  ``max_tokens``;
* :class:`TimeBox` — runs the recall with a deadline; a late result is dropped, and the caller
  never waits longer than the deadline;
* :func:`assemble_session_start` — the Claude Code ``SessionStart`` output: the resume context
  first, then the memory injection in the room left, within :data:`HOOK_OUTPUT_MAX_CHARS`;
* :func:`resume_context` and :func:`first_message_recall` — the two verbs, over a store: the
  thread is read through one gated read (``readable_history``), so an unknown and a denied
  channel give the same minimal checkpoint; the first-message recall runs once per generation
  (a hit-log row, seen by every process), inside a :class:`TimeBox` whose deadline also stops
  the recall's reads.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol, TypeVar

from recallbox.domains.message_view import clip
from recallbox.errors import InvalidArgument
from recallbox.hitlog import FIRST_MESSAGE_DOMAIN, HitRecorder
from recallbox.injection_resume import (
    RESUME_CONTEXT_SHARE,
    RESUME_HEADER,
    RESUME_MIN_BUDGET_CHARS,
    build_resume_context,
    resume_budget_chars,
)
from recallbox.recall_types import BucketedRecall
from recallbox.storage.base import Deadline
from recallbox.text.keywords import FIRST_MESSAGE_MAX_KEYWORDS, first_message_keywords
from recallbox.text.normalize import normalize_text
from recallbox.text.render import CAP_MARK
from recallbox.text.tokens import NON_CJK_CHARS_PER_TOKEN, estimate_tokens
from recallbox.types import Generation, Message

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
    "first_message_recall",
    "fit_tokens",
    "memory_budget_tokens",
    "resume_budget_chars",
    "resume_context",
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
#: The recall budget of a first-message recall: ``max_tokens`` as characters, within the cap.
FIRST_MESSAGE_MIN_BUDGET_CHARS = 1_000
FIRST_MESSAGE_MAX_BUDGET_CHARS = 12_000
FIRST_MESSAGE_MAX_TIMEOUT_S = 60.0
LAYER_NONE = "none"
logger = logging.getLogger(__name__)


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


class InjectionStore(Protocol):
    """What the two verbs read of a store."""

    def readable_history(self, channel: str) -> list[Message]: ...

    def thread_allowed(self, channel: str) -> bool: ...

    def current_generation(self, channel: str) -> Generation: ...

    def hit_recorded(self, domain: str, target_id: str) -> bool: ...


def resume_context(
    store: InjectionStore,
    channel: object,
    context_window: int = 200_000,
    budget_chars: int | None = None,
) -> str:
    """The resume context of ``channel`` from its stored messages (DESIGN §7.1).

    One gated read: an unknown and a denied channel both give the minimal checkpoint. Never
    raises (a read that fails gives the minimal checkpoint too, logged).
    """
    name = normalize_text(channel) if isinstance(channel, str) else str(channel)
    messages: list[Message] = []
    try:
        if name.strip():
            messages = store.readable_history(name)
    except Exception:  # deterministic and never raising: the hook must not break the agent
        logger.warning("resume_context: could not read thread %.80r", name, exc_info=True)
    return build_resume_context(
        messages, channel=name, context_window=context_window, budget_chars=budget_chars
    )


def _seconds(timeout_s: object) -> float:
    if (
        isinstance(timeout_s, bool)
        or not isinstance(timeout_s, int | float)
        or not 0 < timeout_s <= FIRST_MESSAGE_MAX_TIMEOUT_S
    ):
        raise InvalidArgument(
            f"timeout_s must be a number of seconds in (0, {FIRST_MESSAGE_MAX_TIMEOUT_S:g}], "
            f"got {clip(timeout_s)}"
        )
    return float(timeout_s)


def _tokens(max_tokens: object) -> int:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise InvalidArgument(f"max_tokens must be a positive int, got {clip(max_tokens)}")
    return max_tokens


def first_message_budget(max_tokens: int) -> int:
    """The recall budget for ``max_tokens`` (characters, within the recall's limits)."""
    chars = max_tokens * NON_CJK_CHARS_PER_TOKEN
    return max(FIRST_MESSAGE_MIN_BUDGET_CHARS, min(FIRST_MESSAGE_MAX_BUDGET_CHARS, chars))


RecallRun = Callable[[str, int, float, Deadline], BucketedRecall]
"""``(query, budget_chars, timeout_s, cancel) -> result``: the recall, not recording hits."""


def first_message_recall(
    store: InjectionStore,
    recorder: HitRecorder,
    timebox: TimeBox,
    run: RecallRun,
    channel: object,
    message: object,
    timeout_s: object = FIRST_MESSAGE_TIMEOUT_S,
    max_tokens: object = FIRST_MESSAGE_MAX_TOKENS,
) -> BucketedRecall | None:
    """The first-message recall of ``channel`` (DESIGN §7.2): its result, or ``None`` when it
    is not run (unknown or denied channel, already run for this generation, no keywords) or
    came too late (dropped). The caller waits at most ``timeout_s``.

    The generation's hit-log row is recorded before the recall runs, so a second call — from
    this process or (once the row is written) another — gets ``None``.

    Raises:
        InvalidArgument: a bad ``timeout_s`` or ``max_tokens``.
    """
    seconds, tokens = _seconds(timeout_s), _tokens(max_tokens)
    if not isinstance(channel, str) or not channel.strip():
        return None
    name = normalize_text(channel)
    if not store.thread_allowed(name):
        return None
    generation = store.current_generation(name).id
    if recorder.pending(FIRST_MESSAGE_DOMAIN, generation) or store.hit_recorded(
        FIRST_MESSAGE_DOMAIN, generation
    ):
        return None
    query = first_message_query(message)
    recorder.hits(query, domain=FIRST_MESSAGE_DOMAIN, layer=LAYER_NONE, target_ids=[generation])
    if not query:
        return None
    cancel = Deadline(seconds)
    budget = first_message_budget(tokens)
    return timebox.run(
        lambda: run(query, budget, seconds, cancel), seconds, on_timeout=cancel.cancel
    )
