"""Identifier segmentation for the code index's ``*_seg`` columns (DESIGN §2, issue #11).

A code search for ``search_memory`` must find ``searchMemory``, ``SearchMemory`` and
``Box.search_memory`` alike, so identifiers are split into lower-case words on both the indexed
and the query side: on every character that is not a letter or digit (``_``, ``.``, ``-``,
``/``, ``::``, ``$``, ...) and on camelCase boundaries.

CamelCase boundaries: a lower-case letter or digit followed by an upper-case letter
(``searchMemory`` → ``search|Memory``, ``v2Api`` → ``v2|Api``), and the last capital of an
upper-case run followed by a lower-case letter (``HTTPServer`` → ``HTTP|Server``). Digits stay
with the word before them (``utf8Decode`` → ``utf8 decode``, ``base64`` stays whole).

Invariants (property-tested): the words, joined, are the input's letters and digits
case-folded, in order; segmenting is idempotent; snake_case and camelCase spellings of the
same words segment identically.
"""

from __future__ import annotations

import re

# An identifier-like run inside free text (a signature, a docstring): letters, digits and the
# separators that join the parts of one identifier.
_IDENTIFIER_RUN = re.compile(r"[^\W_][\w$]*(?:(?:\.|::|->|-)[^\W_][\w$]*)*")


def split_identifier(name: str) -> list[str]:
    """Split an identifier into its case-folded words.

    Args:
        name: any string; ``search_memory``, ``searchMemory``, ``Box.search_memory``.

    Returns:
        The words, case-folded, in order (``["box", "search", "memory"]``); ``[]`` when the
        string has no letter or digit.
    """
    words: list[str] = []
    current: list[str] = []
    previous = ""
    for index, char in enumerate(name):
        if not char.isalnum():
            _flush(current, words)
            previous = ""
            continue
        if current and _is_boundary(previous, char, name[index + 1 : index + 2]):
            _flush(current, words)
        current.append(char)
        previous = char
    _flush(current, words)
    return words


def segment_identifier(name: str) -> str:
    """The words of one identifier joined by single spaces (``search_memory`` → ``search memory``)."""
    return " ".join(split_identifier(name))


def segment_code_text(text: str) -> str:
    """Replace every identifier in ``text`` by its words, keeping the rest of the text.

    Used for the ``*_seg`` column of a signature or docstring: ``def searchMemory(query)``
    becomes ``def search memory(query)``. Idempotent.
    """
    return _IDENTIFIER_RUN.sub(lambda match: segment_identifier(match.group(0)), text)


def _is_boundary(previous: str, char: str, following: str) -> bool:
    if not char.isupper():
        return False
    if previous.islower() or previous.isdigit():
        return True
    # The last capital of an upper-case run starts a new word when a lower-case letter follows.
    return previous.isupper() and following.islower()


def _flush(current: list[str], words: list[str]) -> None:
    if current:
        words.append("".join(current).casefold())
        current.clear()


__all__ = ["segment_code_text", "segment_identifier", "split_identifier"]
