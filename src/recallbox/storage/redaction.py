"""Redaction's pure parts, shared by every backend: a rewrite applied to JSON string leaves.

A backend's ``redact_rows`` (DESIGN §7a) rewrites stored texts in its own SQL; what a rewrite does
to a JSON value (metadata, tool-call arguments) is the same everywhere, so it lives here once.
"""

from __future__ import annotations

from typing import Any

from recallbox.storage.secrets import TextRewrite


def rewrite_leaves(value: Any, rewrite: TextRewrite) -> tuple[Any, int]:
    """``value`` (a JSON value, at most ``MAX_JSON_DEPTH`` deep) with ``rewrite`` applied to
    every string leaf (keys kept)."""
    if isinstance(value, str):
        return rewrite(value)
    count = 0
    if isinstance(value, list):
        for index, child in enumerate(value):
            value[index], n = rewrite_leaves(child, rewrite)
            count += n
    elif isinstance(value, dict):
        for key, child in value.items():
            value[key], n = rewrite_leaves(child, rewrite)
            count += n
    return value, count


def rewrite_calls(calls: Any, rewrite: TextRewrite) -> tuple[Any, int]:
    """Tool calls with ``rewrite`` applied to every string leaf of their arguments."""
    count = 0
    if isinstance(calls, list):
        for call in calls:
            if isinstance(call, dict) and "arguments" in call:
                call["arguments"], n = rewrite_leaves(call["arguments"], rewrite)
                count += n
    return calls, count
