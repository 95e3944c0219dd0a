"""The JSON view of a tool output: valid JSON, every elision named by its JSON path.

A JSON output (an object or an array, parsed with no duplicate keys and no ``NaN``) is
re-serialised compactly; when that does not fit, it is pruned on a ladder of limits until it
does:

* an array keeps its first items and its last one; the elided items become one marker string
  in their place, ``"…elided: 4980 items of $.items[19:4999]"``;
* a string keeps its start and its end around ``…elided: N characters of $.path…``;
* an object keeps its first keys; the rest become one marker entry whose key is
  ``"…elided"`` and whose value names how many keys, which path, and the first of their names;
* below the depth limit a container becomes one marker string naming its size.

A stored string that itself starts with the marker prefix (or with ``\\``) gets a leading
``\\`` in the view, so the data can never pass for a marker and the rule stays reversible. When even the tightest rung does not fit (or the JSON
does not parse), the caller falls back to the line view. Numbers are re-serialised as Python
reads them (the values are equal; ``1.0e5`` prints as ``100000.0``).
"""

from __future__ import annotations

import json
from typing import Any

from recallbox.text.output_view import Elision, no_expand_line

MARKER_PREFIX = "…elided"
MARKER_KEY = "…elided"
#: (items kept per array, characters kept per string, keys kept per object, depth), loosest first.
LADDER: tuple[tuple[int, int, int, int], ...] = (
    (1_000, 4_000, 1_000, 64),
    (200, 2_000, 300, 48),
    (100, 1_000, 200, 32),
    (50, 600, 100, 24),
    (30, 400, 60, 16),
    (20, 250, 40, 12),
    (10, 150, 20, 8),
    (5, 100, 10, 6),
    (3, 60, 5, 5),
    (1, 24, 3, 4),
    (0, 12, 2, 3),
)
#: A stored string starting with one of these gets a leading ``\`` (reversible, as in render).
ESCAPED_STRING_PREFIXES = (MARKER_PREFIX, "\\")
NAMED_KEYS = 5  # elided keys named in a marker, the rest counted
KEY_NAME_MAX_CHARS = 40


class _Reject(ValueError):
    """The text is not JSON a view can round-trip (duplicate keys, NaN, a scalar)."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _Reject("duplicate keys")
    return dict(pairs)


def _no_constants(name: str) -> Any:
    raise _Reject(name)


def parse(text: str) -> Any | None:
    """The parsed JSON container, or ``None`` when ``text`` is not one a view can keep whole."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        return None


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _key_path(path: str, key: str) -> str:
    if key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=False)}]"


class _Pruner:
    def __init__(self, limits: tuple[int, int, int, int], *, measure: bool) -> None:
        self.items, self.chars, self.keys, self.depth = limits
        self.measure = measure  # serialise what is dropped to count its characters
        self.elisions: list[Elision] = []

    def _mark(self, path: str, what: str, count: int, dropped: Any) -> str:
        chars = 0
        if self.measure:
            chars = len(dropped) if isinstance(dropped, str) else len(_dumps(dropped))
        self.elisions.append(Elision(chars=chars, path=path, what=what, count=count))
        return f"{MARKER_PREFIX}: {count} {what} of {path}"

    def prune(self, value: Any, path: str, depth: int) -> Any:
        if isinstance(value, str):
            return self._string(value, path)
        if isinstance(value, list | dict) and depth >= self.depth and value:
            what = "items" if isinstance(value, list) else "keys"
            return self._mark(path, what, len(value), value)
        if isinstance(value, list):
            return self._array(value, path, depth)
        if isinstance(value, dict):
            return self._object(value, path, depth)
        return value

    def _string(self, value: str, path: str) -> str:
        escaped = "\\" + value if value.startswith(ESCAPED_STRING_PREFIXES) else value
        if len(escaped) <= self.chars:
            return escaped
        head = self.chars * 2 // 3
        tail = self.chars - head
        dropped = escaped[head : len(escaped) - tail]
        marker = self._mark(path, "characters", len(dropped), dropped)
        return escaped[:head] + marker + "…" + (escaped[len(escaped) - tail :] if tail else "")

    def _array(self, value: list[Any], path: str, depth: int) -> list[Any]:
        if len(value) <= max(self.items, 1) + 1:
            return [self.prune(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
        head = max(self.items - 1, 0)
        last = len(value) - 1
        kept = [self.prune(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value[:head])]
        dropped = value[head:last]
        kept.append(self._mark(f"{path}[{head}:{last}]", "items", len(dropped), dropped))
        kept.append(self.prune(value[last], f"{path}[{last}]", depth + 1))
        return kept

    def _object(self, value: dict[str, Any], path: str, depth: int) -> dict[str, Any]:
        keys = list(value)
        shown = keys if len(keys) <= self.keys + 1 else keys[: self.keys]
        out: dict[str, Any] = {}
        for key in shown:
            # a key that could pass for our marker is escaped like a string value
            shown_key = "\\" + key if key.startswith(ESCAPED_STRING_PREFIXES) else key
            out[shown_key] = self.prune(value[key], _key_path(path, key), depth + 1)
        rest = keys[len(shown) :]
        if rest:
            names = ", ".join(
                json.dumps(k, ensure_ascii=False)[:KEY_NAME_MAX_CHARS] for k in rest[:NAMED_KEYS]
            )
            more = f" and {len(rest) - NAMED_KEYS} more" if len(rest) > NAMED_KEYS else ""
            marker = self._mark(path, "keys", len(rest), {k: value[k] for k in rest})
            key = MARKER_KEY
            while key in out or key in value:
                key += "…"
            out[key] = f"{marker}: {names}{more}"
        return out


def header(total: int, tool: str | None, handle: str | None) -> str:
    """The view's first line."""
    tool_part = f"tool={tool}, " if tool else ""
    expand = f"; page the original with expand({handle}, offset=0)" if handle else ""
    return (
        f"[tool output view (JSON): {tool_part}{total} characters; "
        f'elided parts are strings starting "{MARKER_PREFIX}" naming their JSON path{expand}]'
    )


def build_json_view(
    text: str, *, handle: str | None, tool: str | None, max_chars: int
) -> tuple[str, list[Elision]] | None:
    """The JSON view of ``text`` within ``max_chars``, or ``None`` (not JSON, or no rung fits).

    Returns:
        The whole view (header line, then one line of compact JSON, then — without a handle —
        the "no expand tool" line) and what each marker stands for.
    """
    value = parse(text)
    if value is None:
        return None
    first = header(len(text), tool, handle)
    footer_room = len(no_expand_line(len(text))) + 1 if handle is None else 0
    unlimited = (10**9, 10**9, 10**9, 10**9)
    for limits in (unlimited, *LADDER):
        try:
            body = _dumps(_Pruner(limits, measure=False).prune(value, "$", 0))
        except RecursionError:
            continue  # nested deeper than the interpreter allows: a depth-limited rung will do
        if len(first) + 1 + len(body) + footer_room > max_chars:
            continue
        pruner = _Pruner(limits, measure=True)
        body = _dumps(pruner.prune(value, "$", 0))
        lines = [first, body]
        if handle is None:
            lines.append(no_expand_line(sum(e.chars for e in pruner.elisions)))
        return "\n".join(lines), pruner.elisions
    return None
