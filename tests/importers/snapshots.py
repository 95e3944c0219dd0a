"""A content view of a whole store, to compare two imports (ids and wall-clock times left out)."""

from __future__ import annotations

from typing import Any

import recallbox

Snapshot = dict[str, tuple[Any, ...]]


def stored_rows(box: recallbox.Box, channel: str) -> list[tuple[Any, ...]]:
    """A thread's messages as stored, ids left out (a superseded one names its replacement by
    the replacement's source line)."""
    messages = box.messages(channel)
    line_of = {m.id: m.metadata.get("line_start") for m in messages}
    return [
        (
            m.generation,
            m.metadata.get("line_start"),
            m.role,
            m.kind,
            m.model_visible,
            line_of.get(m.superseded_by) if m.superseded_by else None,
            m.content,
            m.tool_calls,
            m.tool_call_id,
        )
        for m in messages
    ]


def snapshot(box: recallbox.Box) -> Snapshot:
    """Every thread: title, generations and its messages as stored (ids left out)."""
    return {
        thread.channel: (
            thread.title,
            thread.generation_count,
            thread.last_activity,
            tuple(stored_rows(box, thread.channel)),
        )
        for thread in box.threads()
    }
