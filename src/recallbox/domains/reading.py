"""``read_message`` (DESIGN §3.3): one stored message as text, paged under 12 000 characters.

The message is read through the privacy gate: an unknown id and an id of a denied thread give
the same :class:`~recallbox.errors.NotFound` with the same text (existence is not revealed).
Opening a message records a drill in the hit-log, which the lazy embedding pass follows.
"""

from __future__ import annotations

from typing import Protocol

from recallbox.domains.message_view import VIEWS, page, render_audit, render_model
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import HitLog, ThreadStore

#: One text for an unknown id and for an id of a quarantined thread.
UNKNOWN_MESSAGE = "unknown message id; use a message_id shown by search_memory"


class ReadingStore(ThreadStore, HitLog, Protocol):
    """What reading a message needs: the gated read and the hit-log."""


def check_view(view: object) -> str:
    """``"audit"`` or ``"model"``, else ``InvalidArgument``."""
    if view not in VIEWS:
        raise InvalidArgument(f"view must be one of {', '.join(VIEWS)}; got {view!r}")
    return str(view)


def check_offset(offset: object) -> int:
    """A non-negative ``int``, else ``InvalidArgument``."""
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidArgument(f"offset must be a non-negative integer, got {offset!r}")
    return offset


def read_message(store: ReadingStore, message_id: object, view: object, offset: object) -> str:
    """The page of message ``message_id`` at ``offset`` in ``view`` (see ``Box.read_message``).

    Raises:
        InvalidArgument: unknown view, or an offset that is negative or past the end.
        NotFound: unknown id, or an id of a denied thread (the same error).
    """
    view, offset = check_view(view), check_offset(offset)
    found = store.readable_message(message_id) if isinstance(message_id, str) else None
    if found is None or not isinstance(message_id, str):
        raise NotFound(UNKNOWN_MESSAGE)
    store.record_drill(message_id)  # feeds the lazy embedding pass (DESIGN §4.2)
    text = render_audit(found) if view == "audit" else render_model(found.message)
    if offset > 0 and offset >= len(text):
        raise InvalidArgument(
            f"offset {offset} is past the end of message {message_id} "
            f"({len(text)} characters); use an offset below {len(text)}"
        )
    return page(text, message_id, offset)
