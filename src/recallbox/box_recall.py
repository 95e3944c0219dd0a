"""The Box verbs of #12: ``recall``, tool outputs, injection moments, hit-log statistics.

A mixin of :class:`recallbox.box.Box` (kept apart so ``box.py`` stays a readable façade); each
verb validates and delegates, like every Box verb (the architecture test checks both classes).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from recallbox.domains import tool_outputs
from recallbox.embeddings import Embedder
from recallbox.hitlog import HIT_LOG_MAX_ROWS, HitRecorder
from recallbox.injection import TimeBox, fit_tokens
from recallbox.injection import first_message_recall as run_first_message
from recallbox.injection import resume_context as build_resume
from recallbox.recall import RECALL_MAX_BUDGET_CHARS, RecallPool, record_recall
from recallbox.recall import recall as run_recall
from recallbox.recall_types import BucketedRecall, HitStats
from recallbox.storage.base import Deadline, Store
from recallbox.types import StoredOutput

#: Most recalled targets ``hit_stats`` lists.
HIT_STATS_TOP = 10


class RecallVerbs:
    """``recall``, ``store_tool_output``, ``expand``, ``resume_context``,
    ``first_message_recall`` and ``hit_stats`` (DESIGN §5–§7, §9)."""

    store: Store
    embedder: Embedder | None
    hits: HitRecorder
    _recalls: RecallPool
    _timebox: TimeBox

    def recall(
        self,
        query: str,
        domains: Sequence[str] | None = None,
        budget_chars: int = RECALL_MAX_BUDGET_CHARS,
        allow_embed: bool = False,
        excluded: Sequence[str] = (),
        scope: str | None = None,
    ) -> BucketedRecall:
        """One bucket per requested domain (``None``: all five), in ``DOMAINS`` order, each
        searched concurrently within its time limit; ``render()`` is at most ``budget_chars``.

        Read-only but for the hit-log (one row per returned hit). A domain that fails or runs
        late gets ``error`` and never fails the recall; a domain not available in this version
        gets ``error="not available"``. ``allow_embed`` permits one embedder call, shared by
        every domain. ``excluded`` denies more sources for this call; ``scope`` narrows the
        knowledge and code domains (knowledge: plus the global library).

        Raises:
            InvalidArgument: a non-string query, an unknown domain, a budget outside
                [1 000, 12 000], a bad ``excluded`` or ``scope``.
        """
        result = self._recall(
            query, domains, budget_chars, allow_embed=allow_embed, excluded=excluded, scope=scope
        )
        record_recall(self.hits, result)
        return result

    def _recall(
        self, query: str, domains: object, budget_chars: object, **options: Any
    ) -> BucketedRecall:
        """The recall without recording (the other-memory part and the first-message recall
        record only a result they use)."""
        return run_recall(
            self.store,
            self.embedder,
            self._recalls,
            query,
            domains=domains,
            budget_chars=budget_chars,
            **options,
        )

    def store_tool_output(
        self,
        text: str,
        *,
        channel: str | None = None,
        source: str | None = None,
        tool: str | None = None,
        can_expand: bool = True,
    ) -> StoredOutput:
        """A bounded, reversible view of a tool output (DESIGN §6).

        Head, tail and the lines with errors, warnings and identifiers, verbatim, never
        splitting a run id, SHA, path or URL; every elision named with the ``expand`` call
        that shows it. When anything is elided and ``can_expand`` is true, the original is kept
        (no time-to-live) under ``StoredOutput.handle``, denied wherever ``channel``'s thread
        or ``source`` is denied. With ``can_expand=False`` no handle is made.

        Raises:
            InvalidArgument: a non-string text, channel, source or tool.
        """
        return tool_outputs.store_tool_output(
            self.store, text, channel=channel, source=source, tool=tool, can_expand=can_expand
        )

    def expand(self, handle: str, offset: int = 0) -> str:
        """A page (≤ 12 000 characters) of the original under ``handle`` from ``offset``; a
        page that does not reach the end closes with the ``expand`` call for the next one.

        Raises:
            NotFound: an unknown handle, or one whose thread or source is denied (the same).
            InvalidArgument: a negative offset, or one past the end.
        """
        page = tool_outputs.expand(self.store, handle, offset)
        self.hits.drill(handle, verb="expand", domain=tool_outputs.TOOL_OUTPUT_DOMAIN)
        return page

    def resume_context(
        self, channel: str, context_window: int = 200_000, budget_chars: int | None = None
    ) -> str:
        """Where ``channel`` stood, built mechanically from its stored messages (DESIGN §7.1):
        a checkpoint, the last compaction's summary, recent conclusions, key tool actions and
        the last 30 turns, trimmed to ``budget_chars`` (default: 2 % of ``context_window``
        tokens, as characters). Deterministic; never raises; an unknown and a denied channel
        give the same minimal checkpoint. Records nothing."""
        return build_resume(self.store, channel, context_window, budget_chars)

    def first_message_recall(
        self, channel: str, message: str, timeout_s: float = 0.15, max_tokens: int = 8_000
    ) -> str:
        """Once per generation of ``channel``: a recall on the keywords of its first user
        ``message``, at most ``max_tokens`` (``estimate_tokens``), or ``""`` — when already run
        for this generation (by any process), when the channel is unknown or denied, when
        nothing is found, or when the recall is slower than ``timeout_s`` (it is dropped; the
        caller never waits longer).

        Raises:
            InvalidArgument: a bad ``timeout_s`` or ``max_tokens``.
        """
        run = partial(_first_message_run, self)
        found = run_first_message(
            self.store, self.hits, self._timebox, run, channel, message, timeout_s, max_tokens
        )
        if found is None or not any(b.hits for b in found.buckets.values()):
            return ""
        record_recall(self.hits, found)
        return fit_tokens(found.render(), max_tokens)

    def hit_stats(self, *, top: int = HIT_STATS_TOP) -> HitStats:
        """The hit-log summarised (``recallbox stats hits``): rows per domain, the most
        recalled targets, what was never recalled, rows dropped while the database was busy,
        and the consumers' watermarks (person-facing)."""
        self.hits.flush()
        return self.store.hit_stats(top=top, max_rows=HIT_LOG_MAX_ROWS)


def _first_message_run(
    box: RecallVerbs, query: str, budget: int, timeout_s: float, cancel: Deadline
) -> BucketedRecall:
    return box._recall(query, None, budget, timeout_s=timeout_s, cancel=cancel)
