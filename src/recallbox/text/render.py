"""Rendering stored text for a model: the one escape rule and the cuts every renderer shares.

The invariant (DESIGN §3.5): when a verb renders stored text for a model, no line of that
text can pass for a line recallbox writes itself — an evidence header (``The following is …``),
a hit or bucket header (``[message_id=…]``), the separator (``--- other memory ---``) or a
footer (``Continue with …``, ``Expand any hit …``). Any line of stored text that starts with one
of :data:`ESCAPED_PREFIXES` gets one leading ``\\``. Because ``\\`` is itself one of the
prefixes, the rule is reversible: in escaped text every line that starts with ``\\`` carries
exactly one added ``\\``, and :func:`unescape_stored` removes it.

"Line" means what ``str.splitlines`` means: a line starts at the beginning of the text and
after every ``\\n``, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``–``\\x1e``, ``\\x85``, U+2028 and
U+2029, so a carriage return or a Unicode line separator cannot smuggle a header in either.

Stored values stay unescaped; only the rendering escapes. The escapes, like ``…``, count in
every cap. Escape each piece of stored text separately and put it at the start of a line of the
output (after a line recallbox wrote): the start of a piece is always treated as a line start.

The API, in the order a renderer uses it:

* :func:`escape_stored` / :func:`unescape_stored` / :func:`escaped_length`;
* :func:`cut_stored` — escape, then cut to a cap with a marker (escapes and marker counted);
* :func:`one_line` — stored text inside a line of ours: line breaks flattened, clipped;
* :func:`cap` — the last safety net on a whole rendered output;
* :func:`page_text` — a page of a long original, with the continuation line (``read_message``
  and ``expand``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from recallbox.errors import InvalidArgument

ESCAPE = "\\"
#: Stored lines starting with one of these get one leading ``\`` when rendered for a model.
ESCAPED_PREFIXES: tuple[str, ...] = (
    "[",
    "\\",
    "The following is",
    "--- ",
    "Continue with ",
    "Expand any hit",
)
ELLIPSIS = "…"
#: The marker :func:`cap` ends a cut output with.
CAP_MARK = "\n…truncated"

# Every character ``str.splitlines`` breaks a line at.
LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_LINE_START = f"(?:^|(?<=[{LINE_BREAKS}]))"
_PREFIX_RE = re.compile(
    _LINE_START + "(?=" + "|".join(re.escape(p) for p in ESCAPED_PREFIXES) + ")"
)
_ESCAPED_RE = re.compile(_LINE_START + re.escape(ESCAPE))
_BREAK_RUN_RE = re.compile(f"[{LINE_BREAKS}]+")


def escape_stored(text: str) -> str:
    """``text`` with one ``\\`` added in front of every line that starts with an escaped prefix.

    Args:
        text: stored text (a message, a section, a tool output, …), one piece of it.

    Returns:
        The text to put in a model-facing output; :func:`unescape_stored` gives ``text`` back.
    """
    return _PREFIX_RE.sub(lambda _: ESCAPE, text)


def unescape_stored(text: str) -> str:
    """The inverse of :func:`escape_stored`: one ``\\`` removed from every line starting with one."""
    return _ESCAPED_RE.sub("", text)


def escape_count(text: str) -> int:
    """How many ``\\`` :func:`escape_stored` adds to ``text``."""
    return sum(1 for _ in _PREFIX_RE.finditer(text))


def escaped_length(text: str) -> int:
    """``len(escape_stored(text))``: what ``text`` costs in a cap once rendered."""
    return len(text) + escape_count(text)


def _is_line_start(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] in LINE_BREAKS


def cut_stored(text: str, max_chars: int, *, marker: str = ELLIPSIS) -> str:
    """``escape_stored(text)``, cut to at most ``max_chars`` characters ending with ``marker``.

    When the escaped text fits it is returned whole (no marker). Otherwise it is cut so that
    the kept part plus ``marker`` is at most ``max_chars`` long; the cut never leaves an added
    ``\\`` without the character it escapes. A ``marker`` longer than ``max_chars`` is itself
    cut to ``max_chars``.

    Args:
        text: one piece of stored text (unescaped).
        max_chars: the cap, escapes and marker included.
        marker: what a cut ends with (``…`` by default).

    Returns:
        At most ``max_chars`` characters.
    """
    escaped = escape_stored(text)
    if len(escaped) <= max_chars:
        return escaped
    keep = max(0, max_chars - len(marker))
    if keep == 0:
        return marker[: max(0, max_chars)]
    kept = escaped[:keep]
    if kept.endswith(ESCAPE) and _is_line_start(escaped, keep - 1):
        kept = kept[:-1]  # a dangling added escape: drop it with the character it escaped
    return kept + marker


# The line breaks ``json.dumps(..., ensure_ascii=False)`` leaves raw (it escapes the rest).
_JSON_RAW_BREAKS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_JSON_RAW_BREAK_RE = re.compile("[" + "".join(_JSON_RAW_BREAKS) + "]")


def json_text(value: object, **options: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, **options)`` with no line break left inside a
    string: JSON escapes ``\\n``, ``\\r`` and the other controls but not U+0085, U+2028 and
    U+2029, which :meth:`str.splitlines` breaks at, so stored JSON could start a line of its
    own in a rendering. Those three are written as their ``\\u`` escapes (the same JSON value).
    """
    text = json.dumps(value, ensure_ascii=False, **options)
    return _JSON_RAW_BREAK_RE.sub(lambda m: _JSON_RAW_BREAKS[m.group(0)], text)


def one_line(text: str, max_chars: int) -> str:
    """Stored text for use inside one line of ours: line breaks become spaces, clipped with ``…``.

    Nothing of it can start a line, so it needs no escape.
    """
    flat = _BREAK_RUN_RE.sub(" ", text)
    if len(flat) <= max_chars:
        return flat
    return flat[: max(0, max_chars - len(ELLIPSIS))] + ELLIPSIS


def cap(text: str, max_chars: int, *, marker: str = CAP_MARK) -> str:
    """``text`` when it fits ``max_chars``, else its start and ``marker``, exactly ``max_chars`` long.

    The last safety net on a whole rendered output: renderers budget their parts so this never
    cuts, and the cap still holds if one of them is wrong.
    """
    if len(text) <= max_chars:
        return text
    keep = max(0, max_chars - len(marker))
    return (text[:keep] + marker)[:max_chars]


@dataclass(frozen=True, slots=True)
class TextPage:
    """One page of a long original as rendered (``read_message``, ``expand``).

    ``offset`` and ``next_offset`` count characters of the original (unescaped);
    ``next_offset`` is ``None`` on the last page. ``text`` is the whole page: header, the
    escaped slice and, unless it is the last page, the continuation line.
    """

    text: str
    offset: int
    next_offset: int | None
    total_chars: int


def page_text(
    original: str,
    offset: int,
    *,
    max_chars: int,
    header: str,
    continuation: Callable[[int], str],
) -> TextPage:
    """The page of ``original`` starting at ``offset``, at most ``max_chars`` characters.

    The page is ``header``, a newline, the escaped slice, and — when the slice does not reach
    the end — a newline and ``continuation(next_offset)``. The slice is as long as the cap
    allows (escapes counted), and at least one character so paging always advances.

    Args:
        original: the full stored text.
        offset: where the page starts, in characters of ``original``.
        max_chars: the cap on the whole page.
        header: the evidence header the page starts with (not counted by ``offset``).
        continuation: the closing line for a given next offset.

    Raises:
        InvalidArgument: a negative offset, or one past the end of a non-empty original.
    """
    total = len(original)
    if offset < 0 or (offset > 0 and offset >= total):
        raise InvalidArgument(f"offset must be between 0 and {max(total - 1, 0)}, got {offset}")
    head = header + "\n"
    rest = original[offset:]
    if len(head) + len(rest) <= max_chars and len(head) + escaped_length(rest) <= max_chars:
        return TextPage(head + escape_stored(rest), offset, None, total)
    # The longest continuation line: the largest offset has the most digits.
    room = max(1, max_chars - len(head) - len("\n" + continuation(total)))
    size = min(room, len(rest))
    while size > 1 and escaped_length(rest[:size]) > room:
        size -= max(1, escaped_length(rest[:size]) - room)
    end = offset + max(size, 1)
    text = head + escape_stored(original[offset:end]) + "\n" + continuation(end)
    return TextPage(text, offset, end, total)
