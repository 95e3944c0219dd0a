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
#: Kept free under the 12 000 cap by every text that can fill it when it travels as an MCP tool
#: result: the MCP SDK stamps each result with the spec's ``serverInfo`` ``_meta`` (80
#: characters of JSON for recallbox 0.1.0), and the *whole* result must stay within the cap.
MCP_RESULT_META_RESERVE_CHARS = 200
#: The longest text an MCP tool result carries (``search_memory`` and ``recall`` are asked for
#: this much; ``read_message`` and ``expand`` pages never exceed it).
MCP_TEXT_MAX_CHARS = THREAD_SEARCH_MAX_CHARS - MCP_RESULT_META_RESERVE_CHARS
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


def bounded_thread_search(
    answer: str, literal: str, max_chars: int = THREAD_SEARCH_MAX_CHARS
) -> str:
    """Merge the literal part and the other-memory answer under ``max_chars``
    (:data:`THREAD_SEARCH_MAX_CHARS` unless a caller asks for less, as the MCP server does).

    When ``literal + SEP + answer`` fits, that is the result (just ``literal`` when ``answer``
    is empty). Otherwise the result is ``literal[:L] + SEP + answer[:A] + MARK`` and exactly
    ``max_chars`` long: the literal stays whole (``L = len(literal)``) unless it alone leaves
    no room, in which case it is cut too and ``A = 0``.

    Args:
        answer: the other-memory part (may be empty).
        literal: the literal part of the thread search.
        max_chars: the cap (at least ``len(SEP) + len(MARK)``).

    Returns:
        The merged text, never longer than ``max_chars``.
    """
    if not answer and len(literal) <= max_chars:
        return literal
    if answer and len(literal) + len(SEP) + len(answer) <= max_chars:
        return literal + SEP + answer
    room = max_chars - len(SEP) - len(MARK)
    kept = min(len(literal), room)
    return literal[:kept] + SEP + answer[: room - kept] + MARK
