"""What a tool-output view must keep whole, and where it may cut (DESIGN §6).

* **Identifiers** — URLs, UUIDs, Windows and POSIX paths (absolute, home-relative and relative
  ones with a ``/``), run ids (``pg-primary-9``, ``run_42``: words joined by ``-``/``_`` with a
  digit in them) and SHAs (7–64 lower-case hex characters with a digit and a letter).
  :func:`identifier_spans` finds them; a view never cuts inside one.
* **Error and warning lines** — ``ERROR``, ``FATAL``, ``Traceback``, ``…Error``/``…Exception``,
  ``error:``, a non-zero exit code or status, the usual shell failures; ``WARN``/``warning:``.
* **Safe cuts** — :func:`safe_end` and :func:`safe_start` move a cut to a line end when one is
  near, else to a whitespace, else out of the identifier it falls in. An identifier contains
  no whitespace, so a cut next to whitespace never splits one.

All of it is regular expressions over plain text: no parsing, no model.
"""

from __future__ import annotations

import re

#: Longer tokens are not treated as identifiers (a cut may fall inside a 5 MB base64 blob).
IDENTIFIER_MAX_CHARS = 2_048
#: How far a cut moves to reach a line end or a whitespace before it falls back.
SNAP_CHARS = 400

_URL = r"(?P<url>[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>()\[\]{}`]+)"
_UUID = r"(?P<uuid>\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b)"
_WINDOWS_PATH = r"(?P<winpath>\b[A-Za-z]:\\[^\s'\"<>|*?`]+)"
_PATH = r"(?P<path>(?<![\w.@%+~/:-])[\w.@%+~-]*(?:/[\w.@%+~-]+)+/?)"
_RUN_ID = r"(?P<runid>\b[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+\b)"
_SHA = r"(?P<sha>\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b)"
IDENTIFIER_RE = re.compile("|".join((_URL, _UUID, _WINDOWS_PATH, _PATH, _RUN_ID, _SHA)))

ERROR_RE = re.compile(
    r"\b(?:ERROR|FATAL|CRITICAL|PANIC|FAILED|FAILURE|FAIL|Traceback)\b"
    r"|(?:Error|Exception)\b"
    r"|\b(?:error|fatal|panic|failed|failure)\b(?=\s*[:!\]])"
    r"|\bexit(?:ed)?(?: with)? (?:code|status)\s*[:=]?\s*[1-9]"
    r"|\bnon-zero exit|\breturned non-zero"
    r"|Segmentation fault|command not found|No such file or directory|Permission denied"
    r"|Connection refused"
)
#: Plain literals every :data:`ERROR_RE` match contains: a fast first pass over a long text,
#: the precise pattern then runs on the lines it finds.
ERROR_HINT_RE = re.compile(
    "ERROR|FATAL|CRITICAL|PANIC|FAIL|Traceback|Error|Exception|error|fatal|panic|failed|failure"
    "|exit|non-zero|Segmentation fault|command not found|No such file|Permission denied"
    "|Connection refused"
)
WARNING_HINT_RE = re.compile("WARN|Warn|warn|DEPRECATED|Deprecation")
WARNING_RE = re.compile(
    r"\b(?:WARN|WARNING|Warning|DEPRECATED|DeprecationWarning)\b|\bwarning\b(?=\s*[:!\]])"
)
# Sentence punctuation after a URL or path is not part of it ("see /a/b.py.").
_TRAILING = ".,;:!?"
_WHITESPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029\u00a0"


def identifier_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of every identifier in ``text``, left to right, never overlapping."""
    spans = []
    for found in IDENTIFIER_RE.finditer(text):
        token = found.group(0).rstrip(_TRAILING)
        if not token or len(token) > IDENTIFIER_MAX_CHARS:
            continue
        if found.lastgroup == "runid" and not any(c.isdigit() for c in token):
            continue
        if found.lastgroup == "path" and (len(token) < 3 or not any(c.isalpha() for c in token)):
            continue
        spans.append((found.start(), found.start() + len(token)))
    return spans


def identifiers(text: str) -> list[str]:
    """Every identifier of ``text`` (see :func:`identifier_spans`), in order."""
    return [text[start:end] for start, end in identifier_spans(text)]


def _spans_near(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """Identifier spans (absolute) of ``text`` that overlap ``[lo, hi)``."""
    base = max(0, lo - IDENTIFIER_MAX_CHARS)
    window = text[base : hi + IDENTIFIER_MAX_CHARS]
    return [
        (base + start, base + end)
        for start, end in identifier_spans(window)
        # a match at the window's edge may be the end of a longer token: not one of ours
        if not (start == 0 and base > 0) and base + start < hi and base + end > lo
    ]


def _identifier_at(text: str, pos: int) -> tuple[int, int] | None:
    """The identifier a cut at ``pos`` would split (``start < pos < end``), if any."""
    for start, end in _spans_near(text, pos, pos + 1):
        if start < pos < end:
            return start, end
    return None


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _cut_points(text: str, lo: int, hi: int, *, backwards: bool) -> int | None:
    """The first cut ``lo < i <= hi`` (scanning in the given direction) between two
    characters that are not both word characters and not inside an identifier."""
    spans = _spans_near(text, lo, hi + 1)
    order = range(hi, lo, -1) if backwards else range(lo + 1, hi + 1)
    for i in order:
        if i >= len(text) or (_is_word(text[i - 1]) and _is_word(text[i])):
            continue
        if not any(start < i < end for start, end in spans):
            return i
    return None


def safe_end(text: str, end: int, floor: int) -> int:
    """Where a piece ``text[…:cut]`` may end: ``floor <= cut <= end``, never inside an identifier.

    A line end within :data:`SNAP_CHARS` before ``end`` wins, then a whitespace, then any
    boundary between a word character and another character outside an identifier; failing all
    three, the start of the identifier ``end`` falls in (or ``end`` itself, inside a run of
    word characters that is no identifier).
    """
    end = max(floor, min(end, len(text)))
    if end >= len(text) or end == floor:
        return end
    lo = max(floor, end - SNAP_CHARS)
    newline = text.rfind("\n", lo, end)
    if newline >= 0:
        return newline + 1
    for i in range(end, lo, -1):
        if text[i - 1] in _WHITESPACE:
            return i
    found = _cut_points(text, lo, end, backwards=True)
    if found is not None:
        return found
    around = _identifier_at(text, end)
    return end if around is None else max(floor, around[0])


def safe_start(text: str, start: int, ceiling: int) -> int:
    """Where a piece ``text[cut:…]`` may start: ``start <= cut <= ceiling``, never inside one.

    The mirror of :func:`safe_end`: just after a line end within :data:`SNAP_CHARS` after
    ``start``, else after a whitespace, else at another boundary outside an identifier.
    """
    start = min(ceiling, max(start, 0))
    if start == 0 or start >= len(text) or text[start - 1] == "\n" or start == ceiling:
        return start
    hi = min(ceiling, start + SNAP_CHARS)
    newline = text.find("\n", start, hi)
    if newline >= 0:
        return newline + 1
    for i in range(start, hi + 1):
        if text[i - 1] in _WHITESPACE:
            return i
    found = _cut_points(text, start - 1, hi, backwards=False)
    if found is not None:
        return found
    around = _identifier_at(text, start)
    return start if around is None else min(ceiling, around[1])
