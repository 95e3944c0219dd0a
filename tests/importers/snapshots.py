"""A content view of a whole store, to compare two imports (ids and wall-clock times left out)."""

from __future__ import annotations

from typing import Any

import recallbox

Snapshot = dict[str, tuple[Any, ...]]


def snapshot(box: recallbox.Box) -> Snapshot:
    """Every thread: title, generations and its messages as stored (ids left out)."""
    out: Snapshot = {}
    for thread in box.threads():
        messages = box.messages(thread.channel)
        line = {m.id: m.metadata.get("line_start") for m in messages}
        rows = tuple(
            (
                m.generation,
                m.metadata.get("line_start"),
                m.role,
                m.kind,
                m.model_visible,
                line.get(m.superseded_by) if m.superseded_by else None,
                m.content,
                m.tool_calls,
                m.tool_call_id,
            )
            for m in messages
        )
        out[thread.channel] = (thread.title, thread.generation_count, thread.last_activity, rows)
    return out
