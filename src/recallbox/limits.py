"""Named limits for hostile input (DESIGN §8).

* :data:`MAX_JSON_DEPTH` — how deeply tool-call arguments and importer records may nest.
* :data:`MAX_RECORD_BYTES` — the longest importer line (one JSONL record).

Above a limit the API raises a clear error, and an import counts the record as skipped and
goes on (never an aborted import). A 10 MB message is far below both and works everywhere.
"""

from __future__ import annotations

import json
from typing import Any

MAX_JSON_DEPTH = 512
"""Containers (lists, objects) nested inside one another, the outermost counted."""
MAX_RECORD_BYTES = 64 * 1024 * 1024
"""Bytes of one importer line, its newline excluded."""
DEPTH_REASON = f"nested deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH} levels)"
SIZE_REASON = f"longer than MAX_RECORD_BYTES ({MAX_RECORD_BYTES // (1024 * 1024)} MiB)"


class TooDeep(ValueError):
    """A JSON value nests deeper than :data:`MAX_JSON_DEPTH`."""


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply ``value`` nests (a scalar is 0, ``[]`` is 1), counting no further than
    ``limit + 1``. Iterative: any depth is measured without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > limit:
            return depth
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children if isinstance(child, dict | list | tuple))
    return deepest


def check_depth(value: Any, what: str) -> None:
    """Raise :class:`TooDeep` when ``value`` nests deeper than :data:`MAX_JSON_DEPTH`."""
    if json_depth(value) > MAX_JSON_DEPTH:
        raise TooDeep(f"{what} is {DEPTH_REASON}")


def may_nest_too_deep(text: str | bytes) -> bool:
    """Whether the JSON ``text`` could nest deeper than :data:`MAX_JSON_DEPTH`: every container
    opens with ``[`` or ``{``, so a text with no more of them than the limit cannot (brackets
    inside strings only make the bound looser). Counting is far cheaper than walking the parsed
    value, and almost every record is answered by it."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") > MAX_JSON_DEPTH
    return text.count(b"[") + text.count(b"{") > MAX_JSON_DEPTH


def loads_bounded(text: str | bytes) -> Any:
    """``json.loads`` that refuses values nested deeper than :data:`MAX_JSON_DEPTH`.

    Raises:
        json.JSONDecodeError: not valid JSON.
        TooDeep: valid, but nested too deeply (the parser's own recursion limit included).
    """
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise TooDeep(f"the record is {DEPTH_REASON}") from exc
    if may_nest_too_deep(text):
        check_depth(value, "the record")
    return value
