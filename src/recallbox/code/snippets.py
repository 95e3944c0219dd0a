"""The excerpt a code hit shows: a symbol's first source lines (issue #11: ``Hit.text``).

A symbol's snippet is its source from its first line (a decorator, or the signature) on,
dedented, cut at a line boundary so it stays within :data:`SNIPPET_MAX_CHARS` characters (the
``…`` that marks a cut included): the signature as written and the first lines of the body.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from recallbox.text.windows import WINDOW_CHARS

#: The longest snippet, the cut marker included (DESIGN §5: every excerpt ≤ 800 characters).
SNIPPET_MAX_CHARS = WINDOW_CHARS
CUT_MARK = "…"


def source_lines(source: bytes) -> list[str]:
    """The lines of a source file, decoded leniently (what snippets are cut from)."""
    return source.decode("utf-8", errors="replace").splitlines()


def symbol_snippet(
    lines: Sequence[str], start_line: int, end_line: int, max_chars: int = SNIPPET_MAX_CHARS
) -> str:
    """Lines ``start_line``..``end_line`` (1-based, inclusive) of ``lines``, dedented, within
    ``max_chars`` (a cut ends with ``…`` after the last whole line that fits)."""
    taken: list[str] = []
    size = 0
    for line in lines[max(0, start_line - 1) : max(0, end_line)]:
        taken.append(line.rstrip())
        size += len(taken[-1]) + 1
        if size > max_chars * 2:  # enough to fill the cap after dedenting
            break
    text = textwrap.dedent("\n".join(taken)).strip("\n")
    if len(text) <= max_chars:
        return text
    room = max_chars - len(CUT_MARK)
    cut = text.rfind("\n", 0, room + 1)
    kept = text[:cut] if cut > 0 else text[:room]
    return kept.rstrip() + CUT_MARK


__all__ = ["CUT_MARK", "SNIPPET_MAX_CHARS", "source_lines", "symbol_snippet"]
