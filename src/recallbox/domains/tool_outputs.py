"""Reversible tool-output compression (DESIGN §6): ``store_tool_output`` and ``expand``.

``store_tool_output`` is called when a tool result is produced: it builds the bounded view
(``recallbox.text.compress``) and, when the view elides anything and an expand tool exists,
keeps the **original** (never the view) under a new handle, with the thread and source whose
privacy the handle inherits. ``expand`` pages the original back (≤ 12 000 characters a page,
each page starting with its evidence header) through the privacy gate: an unknown handle and a
handle of a quarantined thread or an excluded source raise the same :class:`NotFound`. An
expand page is itself a rendering, so it is never compressed again.
"""

from __future__ import annotations

import secrets
from typing import Protocol

from recallbox.domains.message_view import clip
from recallbox.domains.messages import check_channel
from recallbox.domains.privacy import file_identity, normalize_source_path
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import NewToolOutput
from recallbox.text.compress import HANDLE_RE, build_view, expand_page
from recallbox.types import StoredOutput

HANDLE_PREFIX = "o_"
HANDLE_RANDOM_BYTES = 8
#: The drill rows of ``expand`` name this domain (it is not a recall domain).
TOOL_OUTPUT_DOMAIN = "tool_outputs"
#: One text for an unknown handle and for a handle whose thread or source is denied.
UNKNOWN_HANDLE = "unknown handle; use a handle shown in a tool-output view"


class OutputStore(Protocol):
    """What this module needs of a store (``ToolOutputStore``)."""

    def put_tool_output(self, output: NewToolOutput) -> None: ...

    def tool_output(self, handle: str) -> str | None: ...


def new_handle() -> str:
    """A fresh handle (matches ``recallbox.text.compress.HANDLE_RE``)."""
    return HANDLE_PREFIX + secrets.token_hex(HANDLE_RANDOM_BYTES)


def _check(text: object, channel: object, source: object, tool: object, can_expand: object) -> None:
    if not isinstance(text, str):
        raise InvalidArgument(f"text must be a string, got {type(text).__name__}")
    if channel is not None:
        check_channel(channel)
    if source is not None and not isinstance(source, str):
        raise InvalidArgument(f"source must be a file name or path, got {type(source).__name__}")
    if tool is not None and not isinstance(tool, str):
        raise InvalidArgument(f"tool must be a string, got {type(tool).__name__}")
    if not isinstance(can_expand, bool):
        raise InvalidArgument(f"can_expand must be True or False, got {can_expand!r}")


def store_tool_output(
    store: OutputStore,
    text: str,
    *,
    channel: str | None = None,
    source: str | None = None,
    tool: str | None = None,
    can_expand: bool = True,
) -> StoredOutput:
    """The view of ``text`` and, when it elides anything, the handle its original is kept
    under (see ``Box.store_tool_output``).

    Raises:
        InvalidArgument: a non-string text, channel, source or tool, or an unusable source.
    """
    _check(text, channel, source, tool, can_expand)
    handle = new_handle() if can_expand else None
    view = build_view(text, handle=handle, tool=tool)
    if handle is None or not view.uses_handle:
        return StoredOutput(view.text, None)
    store.put_tool_output(
        NewToolOutput(
            handle=handle,
            content=text,
            channel=check_channel(channel) if channel is not None else None,
            source=normalize_source_path(source) if source is not None else None,
            identity=file_identity(source) if source is not None else None,
            tool=tool,
        )
    )
    return StoredOutput(view.text, handle)


def expand(store: OutputStore, handle: object, offset: object = 0) -> str:
    """The page of the original under ``handle`` starting at ``offset``.

    Raises:
        NotFound: an unknown handle, or one whose thread or source is denied (the same error).
        InvalidArgument: a negative offset, or one past the end.
    """
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise InvalidArgument(f"offset must be a non-negative integer, got {clip(offset)}")
    if not isinstance(handle, str) or not HANDLE_RE.fullmatch(handle):
        raise NotFound(UNKNOWN_HANDLE)
    original = store.tool_output(handle)
    if original is None:
        raise NotFound(UNKNOWN_HANDLE)
    return expand_page(original, handle, offset).text
