"""The verbatim text of a ranked hit: at most 800 characters around its best match.

``Hit.text`` is a slice of the stored text, never rewritten and never longer than
:data:`HIT_TEXT_MAX_CHARS` (no ``…`` markers are added: the slice is the evidence, and the id
fetches the whole). The slice starts :data:`HIT_TEXT_LEAD_CHARS` before the best match and is
shifted back near the end so it stays full length whenever the text allows — the same window
rule as thread search (DESIGN §3.2). The best match is the occurrence of a query term whose
window holds the most distinct query terms (identifier literals count double), the earliest
on a tie; a text with no occurrence (a hit found through its vector) starts at the beginning.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from recallbox.text.cjk import cjk_runs, has_cjk

#: Longest ``Hit.text`` (DESIGN §3.1 ``WINDOW_CHARS``).
HIT_TEXT_MAX_CHARS = 800
#: How far before the best match the slice starts (DESIGN §3.1 ``WINDOW_LEAD_CHARS``).
HIT_TEXT_LEAD_CHARS = 200
#: Occurrences of one term considered when choosing the best match.
MAX_OCCURRENCES_PER_TERM = 64
#: A word longer than this also matches by its prefix (stemmed index: "running" found "runs").
STEM_PREFIX_MIN_CHARS = 5
STEM_PREFIX_CHARS = 4


def _needles(term: str) -> list[str]:
    if has_cjk(term):
        return [run for run in cjk_runs(term) if run]
    needles = [term]
    if len(term) > STEM_PREFIX_MIN_CHARS and term.isalpha():
        needles.append(term[: max(STEM_PREFIX_CHARS, len(term) - 3)])
    return needles


def _occurrences(text: str, term: str) -> list[int]:
    for needle in _needles(term):
        found = [
            m.start()
            for _, m in zip(
                range(MAX_OCCURRENCES_PER_TERM),
                re.finditer(re.escape(needle), text, re.IGNORECASE),
                strict=False,
            )
        ]
        if found:
            return found
    return []


def window_bounds(length: int, offset: int) -> tuple[int, int]:
    """``(start, end)`` of the slice for a match at ``offset`` in a text of ``length``."""
    start = max(0, min(offset, length) - HIT_TEXT_LEAD_CHARS)
    end = min(length, start + HIT_TEXT_MAX_CHARS)
    return max(0, end - HIT_TEXT_MAX_CHARS), end


def excerpt(text: str, terms: Sequence[str], literals: Sequence[str] = ()) -> str:
    """At most :data:`HIT_TEXT_MAX_CHARS` of ``text``, verbatim, around the best match."""
    if len(text) <= HIT_TEXT_MAX_CHARS:
        return text
    weights = {term: 2 if term in literals else 1 for term in terms}
    hits = sorted((offset, term) for term in weights for offset in _occurrences(text, term))
    if not hits:
        return text[:HIT_TEXT_MAX_CHARS]
    # Window bounds grow monotonically with the anchor offset: slide two pointers over the
    # sorted occurrences, counting the terms inside the current window.
    counts: dict[str, int] = {}
    weight = lo = hi = 0
    best_offset, best_weight = hits[0][0], -1
    for offset, _ in hits:
        start, end = window_bounds(len(text), offset)
        while hi < len(hits) and hits[hi][0] < end:
            term = hits[hi][1]
            counts[term] = counts.get(term, 0) + 1
            weight += weights[term] if counts[term] == 1 else 0
            hi += 1
        while lo < hi and hits[lo][0] < start:
            term = hits[lo][1]
            counts[term] -= 1
            weight -= weights[term] if counts[term] == 0 else 0
            lo += 1
        if weight > best_weight:
            best_offset, best_weight = offset, weight
    start, end = window_bounds(len(text), best_offset)
    return text[start:end]
