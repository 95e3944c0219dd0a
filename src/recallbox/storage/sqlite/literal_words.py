"""The word index of thread search: a literal of several words found by its words' positions.

The trigram index finds a literal of common words slowly: every trigram of "zibo warning
votu" is in most messages, so FTS5 reads position lists over most of the history to learn
that three words are rarely next to each other. This index keeps the words themselves, in
order, so the same question is a phrase of a few rare items.

**The stream.** A text is folded (:func:`fold`) and cut into *words*: maximal runs of ASCII
letters and digits and of other characters folded to ``\\x80``; the rest (ASCII punctuation,
spaces, controls) are *separators*. Its stream is, in order, one token per word (``w`` + the
word, its first :data:`WORD_MAX_CHARS` characters and :data:`CUT_MARK` when longer) and,
between two words, one *boundary* token (``b`` + the last :data:`EDGE_CHARS` characters of the
word before, the separators between — their first and last four when longer than
:data:`SEPARATOR_MAX_CHARS`, each written as a character outside ASCII — and the first
:data:`EDGE_CHARS` characters of the word after). The stream is the text of a contentless
FTS5 table with the ``ascii`` tokenizer and positions (``detail=full``).

**The query.** Inside any text holding a literal, the literal's own words and separators are
cut as in the literal, except at its two ends, where the text's word may go on: the first
word of the literal may be the tail of a longer word, the last one the head of one. So every
token of the literal's stream that does not depend on what lies outside it — each word with a
separator of the literal on both sides, each boundary whose edges the literal holds (an end
word of at least :data:`EDGE_CHARS` characters has the same edge whatever follows) — is in
the text's stream, at consecutive positions; and a last word longer than :data:`EDGE_CHARS`
that runs to the end of the literal is the head of the next one: a prefix token.
:func:`word_phrase` is that run as one FTS5 phrase (the plan may try it without the prefix
first: ``literal_plan.py``). A row holding the literal always matches
it (a superset: other words with the same edges, a long word cut, a match across two
argument leaves only add rows the caller rechecks).

**Folding keeps the superset for every case-insensitive match.** ASCII letters are
lower-cased; every other character becomes ``\\x80``, except the four that match an ASCII
letter under Python's case-insensitive matching (``K`` KELVIN SIGN, ``İ``, ``ı``, ``ſ``),
which become that letter. Whatever the recheck treats as equal folds to the same text.
"""

from __future__ import annotations

import re

EDGE_CHARS = 3
WORD_MAX_CHARS = 24
CUT_MARK = "\u00b7"  # after a word cut at WORD_MAX_CHARS (outside ASCII: a token character)
SEPARATOR_MAX_CHARS = 8
SEPARATOR_KEPT_CHARS = 4  # of a longer separator run: its first and last four characters
SEPARATOR_BASE = 0x100  # separator byte c is written as chr(SEPARATOR_BASE + c)
WORDS_TABLE = "messages_words"

_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_SPLIT = re.compile(r"([a-z0-9\x80]+)")
#: Characters outside ASCII that Python's case-insensitive matching equates with an ASCII
#: letter (``re`` with ``IGNORECASE``; checked against every code point by a test).
ASCII_FOLDS = {"\u212a": "k", "\u0130": "i", "\u0131": "i", "\u017f": "s"}
_SEPARATORS = {c: chr(SEPARATOR_BASE + c) for c in range(0x80)}


def fold(text: str) -> str:
    """``text`` with ASCII letters lower-cased and every other character ``\\x80`` (but the
    four of :data:`ASCII_FOLDS`, which become their ASCII letter); one character each."""
    if not text.isascii():
        for char, ascii_char in ASCII_FOLDS.items():
            text = text.replace(char, ascii_char)
        text = _NON_ASCII.sub("\x80", text)
    return text.lower()


def _word(word: str) -> str:
    return "w" + word if len(word) <= WORD_MAX_CHARS else "w" + word[:WORD_MAX_CHARS] + CUT_MARK


def _boundary(before: str, separator: str, after: str) -> str:
    if len(separator) > SEPARATOR_MAX_CHARS:
        separator = separator[:SEPARATOR_KEPT_CHARS] + separator[-SEPARATOR_KEPT_CHARS:]
    return "b" + before[-EDGE_CHARS:] + separator.translate(_SEPARATORS) + after[:EDGE_CHARS]


def word_stream(text: str) -> str:
    """The indexed text of ``text``: its stream's tokens, in order."""
    parts = _SPLIT.split(fold(text))
    words = parts[1::2]
    if not words:
        return ""
    tokens = [""] * (2 * len(words) - 1)
    tokens[0::2] = [_word(word) for word in words]
    tokens[1::2] = [
        _boundary(before, separator, after)
        for before, separator, after in zip(words[:-1], parts[2:-1:2], words[1:], strict=True)
    ]
    return " ".join(tokens)


def word_tokens(term: str) -> tuple[list[str], bool]:
    """The tokens of ``term``'s stream that any text holding it has, in order and consecutive,
    and whether the last one is a prefix (the head of the text's word)."""
    parts = _SPLIT.split(fold(term))
    count = len(parts) // 2
    tokens: list[str | None] = []
    prefix = False
    for index in range(count):
        word = parts[2 * index + 1]
        opened = index > 0 or parts[0] != ""  # a separator of the term comes before it
        closed = index < count - 1 or parts[-1] != ""  # ... and after it
        if index > 0:
            before = parts[2 * index - 1]
            known = (index > 1 or parts[0] != "" or len(before) >= EDGE_CHARS) and (
                closed or len(word) >= EDGE_CHARS
            )
            tokens.append(_boundary(before, parts[2 * index], word) if known else None)
        if opened and closed:
            tokens.append(_word(word))
        elif opened and len(word) > EDGE_CHARS:  # the last word runs on: its head is known
            tokens.append("w" + word[:WORD_MAX_CHARS])
            prefix = True
        else:
            tokens.append(None)
    while tokens and tokens[-1] is None:
        tokens.pop()
        prefix = False
    while tokens and tokens[0] is None:
        tokens.pop(0)
    return [token for token in tokens if token is not None], prefix and bool(tokens)


def word_phrase(term: str) -> str | None:
    """The FTS5 phrase of :func:`word_tokens` (``None`` when ``term`` has no such token)."""
    tokens, prefix = word_tokens(term)
    if not tokens:
        return None
    return '"' + " ".join(tokens) + '"' + (" *" if prefix else "")
