"""Text normalisation applied to every stored text and every query.

The rule (DESIGN §3.2), documented once:

* NUL and every other C0 control character (U+0000–U+001F) except tab (U+0009) and newline
  (U+000A) becomes a space. Carriage return is a C0 control too and also becomes a space, so
  stored text has one line ending.
* A lone surrogate (U+D800–U+DFFF, which cannot be encoded as UTF-8) becomes U+FFFD.

Nothing else changes: no Unicode normalisation form, no case folding, no trimming. Where the
normalised text differs from the original, the store keeps the original for the audit view.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT_CHAR = "\ufffd"
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def normalize_text(text: str) -> str:
    """Return ``text`` with C0 controls (except tab/newline) as spaces and lone surrogates as U+FFFD."""
    text = _CONTROL_RE.sub(" ", text)
    if text.isascii():  # the usual case: one pass less (an ASCII text holds no surrogate)
        return text
    return _SURROGATE_RE.sub(REPLACEMENT_CHAR, text)


def needs_normalization(text: str) -> bool:
    """True when :func:`normalize_text` would change ``text``."""
    if _CONTROL_RE.search(text):
        return True
    return not text.isascii() and _SURROGATE_RE.search(text) is not None


def normalize_json(value: Any) -> Any:
    """Normalise every string (keys included) inside a JSON value.

    One stack frame per nesting level (no comprehension frames), so a value as deep as
    ``MAX_JSON_DEPTH`` stays well inside Python's recursion limit.
    """
    if isinstance(value, str):
        return normalize_text(value)
    if isinstance(value, list):
        items = []
        for item in value:
            items.append(normalize_json(item))  # noqa: PERF401 - a comprehension adds a frame
        return items
    if isinstance(value, dict):
        fields = {}
        for key, item in value.items():
            fields[normalize_text(str(key))] = normalize_json(item)
        return fields
    return value


def escape_for_audit(text: str) -> str:
    """Show the characters normalisation replaced as visible escapes (``\\x00``, ``\\ud800``)."""

    def _escape(match: re.Match[str]) -> str:
        code = ord(match.group(0))
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return _SURROGATE_RE.sub(_escape, _CONTROL_RE.sub(_escape, text))
