"""Hit windows and the bounded merge of a thread search (DESIGN §3.1, §3.2).

Everything a recall tool returns is cut to a size that is a constant of the interface, never a
function of how much history matched. Two pieces live here because every domain shares them:

* :func:`cut_window` — at most :data:`WINDOW_CHARS` characters of a text around a match,
  starting :data:`WINDOW_LEAD_CHARS` before it, with ``…`` on each side that was cut.
* :func:`bounded_thread_search` — the literal part and the other-memory answer merged into at
  most :data:`THREAD_SEARCH_MAX_CHARS` characters; a cut result is exactly that long and ends
  with :data:`MARK`, and the literal part always comes first and whole when it fits.

Lengths are Python ``str`` lengths (code points).
"""

from __future__ import annotations

from dataclasses import dataclass

THREAD_SEARCH_MAX_CHARS = 12_000
WINDOW_CHARS = 800
WINDOW_LEAD_CHARS = 200
ELLIPSIS = "…"
SEP = "\n\n--- other memory ---\n"
MARK = "…truncated"


@dataclass(frozen=True, slots=True)
class Window:
    """``text[start:end]`` of one field, rendered with ``…`` on each cut side."""

    start: int
    end: int
    rendered: str

    def covers(self, offset: int, length: int) -> bool:
        """True when the match ``[offset, offset + length)`` lies inside this window."""
        return self.start <= offset and offset + length <= self.end


def cut_window(text: str, offset: int, *, lead: int = WINDOW_LEAD_CHARS) -> Window:
    """The window of ``text`` for a match at ``offset``.

    It starts ``lead`` characters before the match (clamped to the text), is at most
    :data:`WINDOW_CHARS` long, and is shifted back near the end so that it stays that long
    whenever the text allows.
    """
    start = max(0, min(offset, len(text)) - lead)
    end = min(len(text), start + WINDOW_CHARS)
    start = max(0, end - WINDOW_CHARS)
    rendered = (
        (ELLIPSIS if start > 0 else "") + text[start:end] + (ELLIPSIS if end < len(text) else "")
    )
    return Window(start=start, end=end, rendered=rendered)


def clip(text: str, max_chars: int) -> str:
    """``text`` itself when it fits, else its first ``max_chars - 1`` characters and ``…``."""
    if len(text) <= max_chars:
        return text
    return text[: max(0, max_chars - len(ELLIPSIS))] + ELLIPSIS


def bounded_thread_search(answer: str, literal: str) -> str:
    """Merge the literal part and the other-memory answer under :data:`THREAD_SEARCH_MAX_CHARS`.

    When ``literal + SEP + answer`` fits, that is the result (just ``literal`` when ``answer``
    is empty). Otherwise the result is ``literal[:L] + SEP + answer[:A] + MARK`` and exactly
    :data:`THREAD_SEARCH_MAX_CHARS` long: the literal stays whole (``L = len(literal)``)
    unless it alone leaves no room, in which case it is cut too and ``A = 0``.

    Args:
        answer: the other-memory part (may be empty).
        literal: the literal part of the thread search.

    Returns:
        The merged text, never longer than :data:`THREAD_SEARCH_MAX_CHARS`.
    """
    if not answer and len(literal) <= THREAD_SEARCH_MAX_CHARS:
        return literal
    if answer and len(literal) + len(SEP) + len(answer) <= THREAD_SEARCH_MAX_CHARS:
        return literal + SEP + answer
    room = THREAD_SEARCH_MAX_CHARS - len(SEP) - len(MARK)
    kept = min(len(literal), room)
    return literal[:kept] + SEP + answer[: room - kept] + MARK
