"""Identifier segmentation for the code index's ``*_seg`` columns (DESIGN §2, issue #11).

A code search for ``search_memory`` must find ``searchMemory``, ``SearchMemory`` and
``Box.search_memory`` alike, so identifiers are split into lower-case words on both the indexed
and the query side: on every character that is not a letter or digit (``_``, ``.``, ``-``,
``/``, ``::``, ``$``, ...) and on camelCase boundaries.

CamelCase boundaries: a lower-case letter followed by an upper-case one (``searchMemory`` →
``search|Memory``), the last capital of an upper-case run followed by a lower-case letter
(``HTTPServer`` → ``HTTP|Server``), and a digit followed by a capital that starts a word
(``v2Api`` → ``v2|Api``, ``HTTP2Response`` → ``HTTP2|Response``, but ``A0A`` stays whole).
Digits stay with the word before them (``utf8Decode`` → ``utf8 decode``, ``base64`` whole).

Invariants (property-tested): the words, joined, are the input's letters and digits
case-folded (marks that folding adds dropped), in order; segmenting is idempotent; snake_case and camelCase spellings of the
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
    previous = letter = ""
    for index, char in enumerate(name):
        if not char.isalnum():
            _flush(current, words)
            previous = letter = ""
            continue
        if current and _is_boundary(previous, letter, char, name[index + 1 : index + 2]):
            _flush(current, words)
        current.append(char)
        previous = char
        if char.isalpha():
            letter = char
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


def _is_boundary(previous: str, letter: str, char: str, following: str) -> bool:
    """Whether an upper-case ``char`` starts a word (``letter``: the last letter before it).

    Only a capital that case folding changes can start one: a capital without a lower-case
    form (``𝛢``, MATHEMATICAL ITALIC CAPITAL ALPHA) stays a capital in the folded words, so
    splitting before it would split the segmented text again (``a𝛢`` → ``a 𝛢``).
    """
    if not char.isupper() or char.casefold() == char:
        return False
    if previous.islower():
        return True
    if previous.isdigit():  # v2Api, HTTP2Response; not A0A
        return letter.islower() or following.islower()
    # The last capital of an upper-case run starts a new word when a lower-case letter follows.
    return previous.isupper() and following.islower()


def _flush(current: list[str], words: list[str]) -> None:
    if current:
        # Case folding can add a combining mark (İ → i̇); keep letters and digits only.
        word = "".join(char for char in "".join(current).casefold() if char.isalnum())
        if word:
            words.append(word)
        current.clear()


__all__ = ["segment_code_text", "segment_identifier", "split_identifier"]
