"""Fitting a domain's rendered items into its bucket budget (one rule for every domain).

Items go in best first while they fit; the rest are counted in one last line, whose room is
kept free while items are added. A bucket that cannot hold even that line is ``""``.
"""

from __future__ import annotations

from collections.abc import Sequence

#: What separates two items of a bucket.
ITEM_SEPARATOR = "\n\n"


def more_hits_notice(count: int) -> str:
    """The last line of a bucket that left ``count`` hits out."""
    return f"{count} more hit(s) not shown; narrow the query to see them."


def fit_items(items: Sequence[str], budget_chars: int) -> str:
    """``items`` best first while they fit ``budget_chars``, then a line counting the rest;
    ``""`` when nothing fits (or there is nothing)."""
    shown: list[str] = []
    used = 0
    for index, text in enumerate(items):
        left = len(items) - index - 1
        reserve = len(more_hits_notice(left)) + 1 if left else 0
        cost = len(text) + (len(ITEM_SEPARATOR) if shown else 0)
        if used + cost + reserve > budget_chars:
            break
        shown.append(text)
        used += cost
    out = ITEM_SEPARATOR.join(shown)
    if len(shown) < len(items):
        notice = more_hits_notice(len(items) - len(shown))
        out = f"{out}\n{notice}" if out else notice
    return out if len(out) <= budget_chars else ""
