"""The Box verbs of the web inspector's inventories (#20), mixed into ``recallbox.Box``.

Person-facing audit verbs (DESIGN §5): they write nothing and serve no agent; denied documents
and code files come back flagged ``denied``. Each delegates to ``recallbox.domains.inventory``
(the thread timeline to ``recallbox.domains.timeline``).
"""

from __future__ import annotations

from datetime import date

from recallbox.domains import inventory, timeline
from recallbox.hitlog import HitRecorder
from recallbox.inventory_types import (
    CodeFilePage,
    CodeFileStatus,
    DayHits,
    DocumentPage,
    DocumentStatus,
    MemoryForecast,
    ThreadTimeline,
)
from recallbox.recall_types import HitStats
from recallbox.storage.base import Store

#: Days of hit-log rows ``hit_days`` reports by default.
HIT_DAYS_DEFAULT = 30
#: Most recalled targets ``hit_overview`` lists, and where it stops counting never-recalled
#: rows of one corpus, by default.
HIT_OVERVIEW_TOP = 20
HIT_NEVER_LIMIT = 10_000
#: Documents (code files) per page of ``knowledge_page`` (``code_page``) by default.
KNOWLEDGE_PAGE_SIZE = 100


class InspectVerbs:
    """``memory_forecast``, ``knowledge_documents``, ``knowledge_page``, ``code_files``,
    ``code_page``, ``hit_days``, ``hit_overview`` and ``thread_timeline``."""

    store: Store
    hits: HitRecorder

    def memory_forecast(self, today: date | None = None) -> list[MemoryForecast]:
        """Every memory entry with the day it goes dormant and archived if nothing touches it
        (the decay rules of DESIGN §4.3 for future days, decay running daily; nothing written).

        Raises:
            InvalidArgument: ``today`` is not a date.
        """
        return inventory.memory_forecasts(self.store, today)

    def knowledge_documents(self) -> list[DocumentStatus]:
        """Every indexed document with its section count, last sync and stale mark (the file
        changed or vanished since it was indexed); denied ones flagged, their files unread."""
        return inventory.knowledge_documents(self.store)

    def knowledge_page(self, page: int = 1, page_size: int = KNOWLEDGE_PAGE_SIZE) -> DocumentPage:
        """Page ``page`` of the visible indexed documents, only that page's files read for
        the stale marks; documents of excluded sources counted, never listed.

        Raises:
            InvalidArgument: ``page`` or ``page_size`` not a whole number in range.
            NotFound: a page past the last.
        """
        return inventory.knowledge_page(self.store, page, page_size)

    def code_files(self) -> list[CodeFileStatus]:
        """Every indexed code file with its symbol count, last index and stale mark; denied
        ones flagged, their files unread."""
        return inventory.code_files(self.store)

    def code_page(self, page: int = 1, page_size: int = KNOWLEDGE_PAGE_SIZE) -> CodeFilePage:
        """Page ``page`` of the visible indexed code files, symbol counts from the store and
        only that page's files checked for the stale marks; files of excluded sources counted,
        never listed.

        Raises:
            InvalidArgument: ``page`` or ``page_size`` not a whole number in range.
            NotFound: a page past the last.
        """
        return inventory.code_page(self.store, page, page_size)

    def hit_days(self, days: int = HIT_DAYS_DEFAULT, today: date | None = None) -> list[DayHits]:
        """Hit-log rows per UTC day and domain over the last ``days`` days.

        Raises:
            InvalidArgument: ``days`` outside 1–366, or ``today`` not a date.
        """
        self.hits.flush()
        return inventory.hit_days(self.store, days, today)

    def hit_overview(
        self, top: int = HIT_OVERVIEW_TOP, never_limit: int = HIT_NEVER_LIMIT
    ) -> HitStats:
        """:meth:`hit_stats` bounded for a page: never-recalled rows counted only up to
        ``never_limit`` per corpus (``NeverRecalled.capped`` then), and no most-recalled code
        target of an excluded file.

        Raises:
            InvalidArgument: ``top`` or ``never_limit`` not a whole number in range.
        """
        self.hits.flush()
        return inventory.hit_overview(self.store, top, never_limit)

    def thread_timeline(
        self,
        channel: str,
        generation: int | None = None,
        page: int = 1,
        *,
        page_size: int = timeline.PAGE_SIZE_DEFAULT,
        head_chars: int = timeline.SUMMARY_HEAD_DEFAULT,
    ) -> ThreadTimeline:
        """A window of a thread's generations (counts, time spans, the first ``head_chars``
        characters of each opening compaction summary) and page ``page`` of the selected
        generation's messages (default: the current one), whatever the policy; bounded reads,
        never the whole thread.

        Raises:
            InvalidArgument: a bad channel, generation, page, page_size or head_chars.
            NotFound: unknown channel or generation, or a page past the last.
        """
        return timeline.thread_timeline(
            self.store, channel, generation, page, page_size=page_size, head_chars=head_chars
        )
