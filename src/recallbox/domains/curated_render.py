"""What the knowledge and memory buckets share (DESIGN §3.5, §5): items, follow-ups, the budget.

An item is a head line of ours (``[section_id=… …]``, ``[memory_key=… …]``), the stored excerpt
escaped (``recallbox.text.render.cut_stored``: no stored line can pass for a line of ours) and
cut to :data:`~recallbox.text.windows.WINDOW_CHARS`, and the call that fetches the exact slice:
``recall_context(query, source="<source>")``. Items are taken best first while they fit the
budget; the ones left out are counted in a last line.
"""

from __future__ import annotations

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
