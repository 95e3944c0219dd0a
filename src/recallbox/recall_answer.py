"""The default other-memory answerer of ``search_memory`` (DESIGN §3.2): a recall.

With a channel, ``search_memory`` adds, after its literal part, the §5 recall over the memory,
knowledge and sessions domains (those registered), with ``allow_embed=False``, the budget
:data:`OTHER_MEMORY_MAX_CHARS` (so the merge never cuts it mid-item) and the time limit
``OTHER_MEMORY_TIMEOUT_S`` — with teeth: the store stops the domains' reads at the deadline.
It leaves out the message ids the literal part shows, prints each hit's rank (never a min-max
score), and records its hit rows only when its answer is used. It is the empty string when it
finds nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from recallbox.domains.other_memory import Answer, answer_budget
from recallbox.domains.registry import REGISTRY
from recallbox.domains.threads import OTHER_MEMORY_TIMEOUT_S
from recallbox.recall_types import BucketedRecall
from recallbox.text.windows import THREAD_SEARCH_MAX_CHARS

#: The other-memory part's budget: what the 12 000 cap leaves after the literal part and SEP.
OTHER_MEMORY_MAX_CHARS = answer_budget(THREAD_SEARCH_MAX_CHARS)
#: The domains it recalls from (the registered ones among these, in ``DOMAINS`` order).
OTHER_MEMORY_DOMAINS: tuple[str, ...] = ("memory", "knowledge", "sessions")

RecallCall = Callable[..., BucketedRecall]
"""``recallbox.recall.recall`` with the store, embedder and pool bound."""


def _nothing() -> None:
    return None


class RecallAnswerer:
    """The default answerer: ``(query, channel) -> text``, and :meth:`answer` for
    ``search_memory`` (told the literal part's message ids)."""

    def __init__(self, run: RecallCall, record: Callable[[BucketedRecall], None]) -> None:
        self._run = run
        self._record = record

    def __call__(self, query: str, channel: str) -> str:
        """The answer for ``query`` (nothing left out); its hits are recorded."""
        found = self.answer(query, channel, tuple)
        found.commit()
        return found.text

    def answer(
        self,
        query: str,
        channel: str,
        shown: Callable[[], Collection[str]],
        budget_chars: int = OTHER_MEMORY_MAX_CHARS,
    ) -> Answer:
        """The answer leaving out the message ids ``shown()`` returns (``channel`` is not a
        filter: the literal part already covers that thread verbatim), within
        ``budget_chars``."""
        del channel
        domains = [name for name in OTHER_MEMORY_DOMAINS if name in REGISTRY]
        if not domains:
            return Answer("", _nothing)
        result = self._run(
            query,
            domains=domains,
            budget_chars=budget_chars,
            allow_embed=False,
            timeout_s=OTHER_MEMORY_TIMEOUT_S,
            shown=shown,
        )
        if not any(bucket.hits for bucket in result.buckets.values()):
            return Answer("", _nothing)
        return Answer(result.render(), lambda: self._record(result))
