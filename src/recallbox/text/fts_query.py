"""User text to a typed keyword query, and the terms the ranking rechecks (DESIGN §4.1).

User text never reaches a backend's query language: :func:`build_fts_query` makes a
:class:`~recallbox.storage.queries.LexicalQuery` of phrases, which each backend renders itself
(FTS5 ``MATCH`` on SQLite, quoted, so it is always well formed). It:

1. normalises the text (``recallbox.text.normalize``: NUL and other C0 controls become spaces,
   lone surrogates U+FFFD);
2. splits it on whitespace and drops the bare operators ``AND``, ``OR``, ``NOT`` and ``NEAR``;
3. strips quotes, brackets and sentence punctuation from both ends of each word (``"deploy,"``
   → ``deploy``) and an English possessive ``'s`` (``Caroline's`` → ``Caroline``), and drops a
   word with no letter or digit left;
4. drops the words of :data:`~recallbox.text.stopwords.STOPWORDS_EN` unless that leaves nothing,
   and repeated words (compared case-insensitively);
5. makes each remaining word a phrase; a word holding CJK text is segmented first
   (``recallbox.text.cjk``), so a CJK run becomes a phrase of its bigrams;
6. asks for rows holding any phrase. Nothing left means an empty query, which the caller
   answers with no hits instead of running a query — unless the query holds words made only
   of symbols (``🚀``, ``=>``): the tokenizer holds no token for them, so they come back in
   :attr:`FtsQuery.symbols` for a literal leg (``recallbox.domains.sessions``).

A word containing ``_``, ``-``, ``.`` or ``/`` is an **identifier**: it is matched as a phrase
like any word (the tokenizer splits it, so ``search_memory`` matches "search memory") and is
also returned in :attr:`FtsQuery.literals`, so the ranking can put rows that contain it
literally (case-insensitively) above rows that only contain its parts.

No input string raises here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from recallbox.storage.queries import LexicalQuery
from recallbox.text.cjk import has_cjk, segment
from recallbox.text.normalize import normalize_text
from recallbox.text.stopwords import STOPWORDS_EN

#: Query operators (FTS5's) that are dropped when they appear as a bare query word.
FTS_OPERATORS = frozenset({"AND", "OR", "NOT", "NEAR"})
#: A query word containing one of these characters is an identifier (rechecked literally).
IDENTIFIER_CHARS = "_-./"
#: At most this many distinct words of a query are used (a pasted page stays a fast query).
MAX_QUERY_TERMS = 128
#: At most this many symbol-only words are kept for the literal leg.
MAX_SYMBOL_TERMS = 8

# Stripped from the start of a word: quotes, brackets, FTS5's `*` and `^` (a leading `.` stays:
# `./src`, `.bashrc`); from its end also sentence punctuation.
_LEAD_CHARS = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb([{<*^"
_TRAIL_CHARS = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb)]}>.,;:!?\u2026*^"
_QUOTE_CHARS = "\"'`\u2018\u2019\u201c\u201d\u00ab\u00bb"
_POSSESSIVE_RE = re.compile(r"(?<=\w)['\u2019]s?$", re.IGNORECASE)


#: The query with nothing to search for.
NOTHING = LexicalQuery()


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """A sanitised keyword query.

    ``lexical`` is what a store searches: one phrase per word of ``terms`` (query order).
    ``terms`` are the kept words (excerpts centre on them); ``literals`` the identifier words
    to recheck. ``symbols``: when no word holds a letter or digit, the words made only of
    symbols (``🚀``), searched literally instead (excerpts centre on them); ``text`` the
    normalised query it was built from (the ranking signals read the participants and dates
    it names, #21; not compared).
    """

    lexical: LexicalQuery = NOTHING
    terms: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    symbols: tuple[str, ...] = ()
    text: str = field(default="", compare=False)

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for."""
        return self.lexical.is_empty


def phrase_of(word: str) -> tuple[str, ...]:
    """The phrase a query word becomes: itself, or its CJK bigrams and other parts in order."""
    return tuple(segment(word).split()) if has_cjk(word) else (word,)


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


def symbol_words(query: str) -> tuple[str, ...]:
    """The distinct words of ``query`` with no letter or digit (``🚀``, ``=>``), without
    surrounding quotes, FTS5 operators and trailing sentence punctuation (``***`` is none)."""
    edges = _QUOTE_CHARS + "*^"
    stripped = (
        w.lstrip(edges).rstrip(edges + ".,;:!?\u2026") for w in normalize_text(query).split()
    )
    words = [w for w in stripped if w and not _has_token_char(w)]
    return tuple(dict.fromkeys(words))[:MAX_SYMBOL_TERMS]


def build_fts_query(query: str) -> FtsQuery:
    """Build the keyword query for ``query`` (see the module docstring); never raises."""
    if not isinstance(query, str):
        return FtsQuery()
    text = normalize_text(query).strip()
    words = query_words(query)
    content = [w for w in words if w.casefold() not in STOPWORDS_EN]
    kept = (content or words)[:MAX_QUERY_TERMS]
    if not kept:
        return FtsQuery(symbols=symbol_words(query), text=text)
    lexical = LexicalQuery(tuple(phrase_of(w) for w in kept))
    literals = tuple(w for w in kept if is_identifier(w))
    return FtsQuery(lexical, tuple(kept), literals, text=text)
