"""What the knowledge and memory buckets share (DESIGN §3.5, §5): items, follow-ups, the budget.

An item is a head line of ours (``[section_id=… …]``, ``[memory_key=… …]``), the stored excerpt
escaped (``recallbox.text.render.cut_stored``: no stored line can pass for a line of ours) and
cut to :data:`~recallbox.text.windows.WINDOW_CHARS`, and the call that fetches the exact slice:
``recall_context(query, source="<source>")``. Items are taken best first while they fit the
budget; the ones left out are counted in a last line.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.text.render import cut_stored, one_line
from recallbox.text.windows import WINDOW_CHARS

#: Longest stored name (a source, a scope) inside one of our head lines.
NAME_MAX_CHARS = 200


def quoted(value: str) -> str:
    """``value`` as a double-quoted string literal of a call (``\\`` and ``"`` escaped)."""
    flat = one_line(value, NAME_MAX_CHARS)
    return '"' + flat.replace("\\", "\\\\").replace('"', '\\"') + '"'


def follow_up(source: str) -> str:
    """The call that fetches the exact entries of ``source`` for the same query."""
    return f"recall_context(query, source={quoted(source)})"


def name(value: str) -> str:
    """A stored name on one of our lines: one line, clipped."""
    return one_line(value, NAME_MAX_CHARS)


def item(head: str, excerpt: str, source: str) -> str:
    """One bucket item: ``head``, the escaped ``excerpt`` (at most ``WINDOW_CHARS``, its final
    line breaks dropped), the follow-up call."""
    body = cut_stored(excerpt.rstrip("\n"), WINDOW_CHARS)
    return f"{head}\n{body}\n{follow_up(source)}"


def _notice(count: int) -> str:
    return f"{count} more hit(s) not shown; narrow the query to see them."


def fit_items(items: Sequence[str], budget_chars: int) -> str:
    """``items`` best first while they fit ``budget_chars``, then a line counting the rest;
    ``""`` when nothing fits (or there is nothing)."""
    shown: list[str] = []
    used = 0
    for index, text in enumerate(items):
        left = len(items) - index - 1
        reserve = len(_notice(left)) + 1 if left else 0
        cost = len(text) + (2 if shown else 0)
        if used + cost + reserve > budget_chars:
            break
        shown.append(text)
        used += cost
    out = "\n\n".join(shown)
    if len(shown) < len(items):
        notice = _notice(len(items) - len(shown))
        out = f"{out}\n{notice}" if out else notice
    return out if len(out) <= budget_chars else ""
