"""A thread's generation timeline for the inspector (#20), read in bounded pieces.

A window of :data:`TIMELINE_WINDOW` generations (their counts, spans and the head of each
opening compaction summary, from ``ThreadStore.generation_spans``) and one page of the
selected generation's messages (``ThreadStore.message_slice``): never the whole thread, so a
10 000-message thread costs what a 100-message one does, plus an index count.

Person-facing audit read (DESIGN §5): no policy applied here; the page decides what text it
may show. Windows are counted back from the newest generation, so the default view (the
current generation) shows the latest :data:`TIMELINE_WINDOW` of them.
"""

from __future__ import annotations

from recallbox.domains.history import check_generation, find_thread
from recallbox.errors import InvalidArgument, NotFound
from recallbox.inventory_types import ThreadTimeline
from recallbox.storage.base import Store

#: Generations the timeline shows at once.
TIMELINE_WINDOW = 20
#: Messages per page of the selected generation, by default and at most.
PAGE_SIZE_DEFAULT = 50
PAGE_SIZE_MAX = 500
#: Characters of each opening compaction summary read, by default and at most.
SUMMARY_HEAD_DEFAULT = 4_000
SUMMARY_HEAD_MAX = 100_000


def _whole(name: str, value: object, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidArgument(f"{name} must be a whole number from {low} to {high}, got {value!r}")
    return value


def window_of(selected: int, total: int, size: int = TIMELINE_WINDOW) -> tuple[int, int]:
    """The first and last generation of the window holding ``selected`` (1..``total``):
    windows of ``size`` counted back from ``total``, the oldest one possibly shorter."""
    block = (total - selected) // size
    last = total - block * size
    return max(1, last - size + 1), last


def thread_timeline(
    store: Store,
    channel: str,
    generation: int | None = None,
    page: int = 1,
    *,
    page_size: int = PAGE_SIZE_DEFAULT,
    head_chars: int = SUMMARY_HEAD_DEFAULT,
) -> ThreadTimeline:
    """The timeline window holding ``generation`` (default: the current one) and page
    ``page`` of that generation's messages, on one read snapshot.

    Raises:
        InvalidArgument: an empty channel, or ``generation``, ``page``, ``page_size`` or
            ``head_chars`` not a whole number in range.
        NotFound: unknown channel, a generation the thread does not have, a page past the last.
    """
    _whole("page", page, 1, 2**62)
    _whole("page_size", page_size, 1, PAGE_SIZE_MAX)
    _whole("head_chars", head_chars, 0, SUMMARY_HEAD_MAX)
    with store.read_snapshot():
        thread = find_thread(store, channel)
        total = max(1, thread.generation_count)
        selected = check_generation(thread, generation) or total
        first, last = window_of(selected, total)
        spans = store.generation_spans(thread.channel, first, last, head_chars=head_chars)
        count = next((s.message_count for s in spans if s.generation.number == selected), 0)
        pages = max(1, -(-count // page_size))
        if page > pages:
            raise NotFound(f"there is no page {page}; generation {selected} has {pages} page(s)")
        offset = (page - 1) * page_size
        messages = store.message_slice(thread.channel, selected, offset, page_size)
    return ThreadTimeline(
        thread=thread,
        spans=spans,
        selected=selected,
        messages=messages,
        page=page,
        pages=pages,
        page_size=page_size,
        earlier=first - 1 if first > 1 else None,
        later=last + 1 if last < total else None,
    )


__all__ = ["TIMELINE_WINDOW", "thread_timeline", "window_of"]
