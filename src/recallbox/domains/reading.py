"""``read_message`` and ``message_page`` (DESIGN §3.3): one stored message, paged.

The message is read through the privacy gate: an unknown id and an id of a denied thread give
the same :class:`~recallbox.errors.NotFound` with the same text (existence is not revealed).
The Box records the drill (the hit-log, which the lazy embedding pass follows) once the page
is read. Rendering and paging are ``recallbox.domains.message_view``'s.
"""

from __future__ import annotations

from typing import Protocol

from recallbox.domains.message_view import check_page_request, format_page
from recallbox.domains.message_view import message_page as page_of
from recallbox.errors import NotFound
from recallbox.storage.base import ReadableMessage
from recallbox.types import Page

__all__ = ["READ_DOMAIN", "UNKNOWN_MESSAGE", "format_page", "message_page", "read_message"]

#: One text for an unknown id and for an id of a quarantined thread.
UNKNOWN_MESSAGE = "unknown message id; use a message_id shown by search_memory"
#: The domain drill rows of a message name (the sessions domain's corpus).
READ_DOMAIN = "sessions"


class ReadingStore(Protocol):
    """What reading a message needs: the gated read."""

    def readable_message(self, message_id: str) -> ReadableMessage | None: ...


def message_page(store: ReadingStore, message_id: object, view: str, offset: int) -> Page:
    """The page of message ``message_id`` at ``offset`` in ``view`` (see ``Box.message_page``).

    Raises:
        InvalidArgument: unknown view, or an offset that is negative or past the end.
        NotFound: unknown id, or an id of a denied thread (the same error).
    """
    check_page_request(view, offset)
    found = store.readable_message(message_id) if isinstance(message_id, str) else None
    if found is None or not isinstance(message_id, str):
        raise NotFound(UNKNOWN_MESSAGE)
    return page_of(found, view, offset)


def read_message(store: ReadingStore, message_id: str, view: str, offset: int) -> str:
    """``read_message``'s text: the page, closed by the continuation line when there is more.

    Raises:
        InvalidArgument: unknown view, or an offset that is negative or past the end.
        NotFound: unknown id, or an id of a denied thread (the same error).
    """
    return format_page(message_page(store, message_id, view, offset), message_id)
