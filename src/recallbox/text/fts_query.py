"""User text to a safe FTS5 ``MATCH`` expression, and the terms the ranking rechecks (DESIGN §4.1).

User text never reaches ``MATCH`` raw. :func:`build_fts_query`:

1. normalises the text (``recallbox.text.normalize``: NUL and other C0 controls become spaces,
   lone surrogates U+FFFD);
2. splits it on whitespace and drops the bare operators ``AND``, ``OR``, ``NOT`` and ``NEAR``;
3. strips quotes, brackets and sentence punctuation from both ends of each word (``"deploy,"``
   → ``deploy``) and an English possessive ``'s`` (``Caroline's`` → ``Caroline``), and drops a
   word with no letter or digit left;
4. drops the words of :data:`~recallbox.text.stopwords.STOPWORDS_EN` unless that leaves nothing,
   and repeated words (compared case-insensitively);
5. quotes each remaining word as an FTS5 phrase (inner ``"`` doubled); a word holding CJK text
   is segmented first (``recallbox.text.cjk``), so a CJK run becomes a phrase of its bigrams;
6. OR-joins the phrases. Nothing left means an empty expression, which the caller answers with
   no hits instead of running a query.

A word containing ``_``, ``-``, ``.`` or ``/`` is an **identifier**: it is matched as a phrase
like any word (the tokenizer splits it, so ``search_memory`` matches "search memory") and is
also returned in :attr:`FtsQuery.literals`, so the ranking can put rows that contain it
literally (case-insensitively) above rows that only contain its parts.

No input string raises here; the result is always a well-formed expression or ``""``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from recallbox.text.cjk import has_cjk, segment
from recallbox.text.normalize import normalize_text
from recallbox.text.stopwords import STOPWORDS_EN

#: FTS5 operators that are dropped when they appear as a bare query word.
FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
#: A query word containing one of these characters is an identifier (rechecked literally).
IDENTIFIER_CHARS = "_-./"
#: At most this many distinct words of a query are used (a pasted page stays a fast query).
MAX_QUERY_TERMS = 128

# Stripped from the start of a word: quotes, brackets, FTS5's `*` and `^` (a leading `.` stays:
# `./src`, `.bashrc`); from its end also sentence punctuation.
_LEAD_CHARS = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb([{<*^"
_TRAIL_CHARS = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb)]}>.,;:!?\u2026*^"
_POSSESSIVE_RE = re.compile(r"(?<=\w)['\u2019]s?$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """A sanitised keyword query.

    ``expression`` is the ``MATCH`` string (``""`` when nothing searchable is left): the
    ``phrases`` OR-joined, one quoted phrase per word of ``terms`` (query order). ``literals``
    are the identifier words to recheck.
    """

    expression: str
    terms: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for."""
        return not self.expression


def quote_phrase(text: str) -> str:
    """An FTS5 string literal: ``text`` in double quotes with inner quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def _has_token_char(word: str) -> bool:
    return any(char.isalnum() for char in word)


def clean_word(word: str) -> str:
    """A query word without surrounding quotes/brackets/punctuation or a possessive ``'s``."""
    core = word.lstrip(_LEAD_CHARS).rstrip(_TRAIL_CHARS)
    if core and not is_identifier(core):
        core = _POSSESSIVE_RE.sub("", core)
    return core


def is_identifier(word: str) -> bool:
    """True when ``word`` contains ``_``, ``-``, ``.`` or ``/`` (DESIGN §4.1)."""
    return any(char in IDENTIFIER_CHARS for char in word)


def query_words(query: str) -> list[str]:
    """The cleaned, distinct, non-operator words of ``query`` that hold a letter or digit.

    Stop words are still included; :func:`build_fts_query` decides whether to drop them.
    """
    words: list[str] = []
    seen: set[str] = set()
    for raw in normalize_text(query).split():
        if raw in FTS_OPERATORS:
            continue
        core = clean_word(raw)
        key = core.casefold()
        if not core or key in seen or not _has_token_char(core):
            continue
        seen.add(key)
        words.append(core)
    return words


def build_fts_query(query: str) -> FtsQuery:
    """Build the ``MATCH`` expression for ``query`` (see the module docstring); never raises."""
    if not isinstance(query, str):
        return FtsQuery("")
    words = query_words(query)
    content = [w for w in words if w.casefold() not in STOPWORDS_EN]
    kept = (content or words)[:MAX_QUERY_TERMS]
    if not kept:
        return FtsQuery("")
    phrases = tuple(quote_phrase(segment(w) if has_cjk(w) else w) for w in kept)
    literals = tuple(w for w in kept if is_identifier(w))
    return FtsQuery(" OR ".join(phrases), tuple(kept), literals, phrases)
