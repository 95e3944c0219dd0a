"""What the PostgreSQL keyword index is fed: FTS5's tokens as a ``tsvector``, queries as a ``tsquery``.

PostgreSQL has no FTS5, so the ranked keyword leg (DESIGN §4.1) is rebuilt from parts whose
output is FTS5's own (``docs/postgres.md``):

* a document's tokens are :func:`recallbox.text.fts_tokenize.fts_tokens` of its CJK-segmented
  text, the very tokens ``porter unicode61 remove_diacritics 2`` puts in the SQLite index;
* they are stored as a ``tsvector`` **literal** (lexeme ``'term'`` and its positions ``1…D``),
  never through ``to_tsvector``, so PostgreSQL's own parser and dictionaries never re-split or
  normalise them; a term is :func:`~recallbox.text.fts_tokenize.bounded_term` (PostgreSQL's
  lexemes hold at most :data:`LEXEME_MAX_BYTES` bytes, and must be valid UTF-8);
* the document length ``D`` (FTS5's column size) is stored beside it.

A ``tsvector`` holds positions up to :data:`TSVECTOR_MAX_POSITION`, at most
:data:`TSVECTOR_MAX_POSITIONS` of them per lexeme and :data:`TSVECTOR_MAX_BYTES` in all, and
silently clamps or drops what does not fit. A document that would not fit **exactly** gets no
``tsvector``: its terms and their positions go to an overflow table instead
(:attr:`KeywordDocument.exact` is False), so term frequencies and phrase matches stay exact.

A query phrase (one quoted word of :func:`recallbox.text.fts_query.build_fts_query`) becomes the
list of its terms; :func:`tsquery_literal` OR-joins them as ``'a' <-> 'b'`` phrases.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recallbox.text.fts_tokenize import bounded_term, fts_tokens

#: PostgreSQL's longest lexeme, in bytes ("word is too long … max 2046 bytes").
LEXEME_MAX_BYTES = 2046
#: Highest position a ``tsvector`` stores (larger ones are clamped to it).
TSVECTOR_MAX_POSITION = 16_383
#: Positions a ``tsvector`` keeps per lexeme (more are dropped).
TSVECTOR_MAX_POSITIONS = 256
#: Lexeme-and-position bytes a ``tsvector`` may hold (``MAXSTRPOS``).
TSVECTOR_MAX_BYTES = (1 << 20) - 1
#: Safety margin under :data:`TSVECTOR_MAX_BYTES` for the size estimate.
TSVECTOR_SIZE_MARGIN = 4096


@dataclass(frozen=True, slots=True)
class KeywordDocument:
    """One document as the keyword index stores it.

    ``length`` is FTS5's token count. ``terms`` maps each distinct (bounded) term to its
    1-based positions, in first-occurrence order. ``exact`` says the ``tsvector`` holds all of
    it; otherwise :attr:`tsvector` is None and ``terms`` go to the overflow table.
    """

    length: int
    terms: tuple[tuple[str, tuple[int, ...]], ...]
    exact: bool

    @property
    def tsvector(self) -> str | None:
        """The ``tsvector`` literal (``''`` for no tokens), or None when it would not fit."""
        if not self.exact:
            return None
        return " ".join(
            f"{lexeme_literal(term)}:{','.join(map(str, positions))}"
            for term, positions in self.terms
        )


def lexeme_literal(term: str) -> str:
    """``term`` quoted for ``tsvector``/``tsquery`` input (``'``, ``\\`` escaped)."""
    return "'" + term.replace("\\", "\\\\").replace("'", "''") + "'"


def _term_bytes(term: str) -> int:
    return len(term.encode("utf-8"))


def _fits(terms: dict[str, list[int]], length: int) -> bool:
    if length > TSVECTOR_MAX_POSITION:
        return False
    size = 0
    for term, positions in terms.items():
        if len(positions) > TSVECTOR_MAX_POSITIONS:
            return False
        # PostgreSQL's layout: the lexeme padded to 2 bytes, a position count, 2 bytes each.
        size += _term_bytes(term) + 1 + 2 + 2 * len(positions)
    return size <= TSVECTOR_MAX_BYTES - TSVECTOR_SIZE_MARGIN


def document_terms(tokens: Iterable[str]) -> tuple[int, dict[str, list[int]]]:
    """``(length, {term: positions})`` of a token sequence (positions from 1)."""
    terms: dict[str, list[int]] = {}
    bounded: dict[str, str] = {}  # each distinct token is bounded once
    length = 0
    for length, token in enumerate(tokens, start=1):
        term = bounded.get(token)
        if term is None:
            # An ASCII token of at most the limit is its own term (the common case, at C speed).
            fits = token.isascii() and len(token) <= LEXEME_MAX_BYTES
            term = bounded[token] = token if fits else bounded_term(token, LEXEME_MAX_BYTES)
        terms.setdefault(term, []).append(length)
    return length, terms


def keyword_document(segmented: str) -> KeywordDocument:
    """The index entry of a document whose CJK-segmented text is ``segmented``."""
    length, terms = document_terms(fts_tokens(segmented))
    return KeywordDocument(
        length=length,
        terms=tuple((term, tuple(positions)) for term, positions in terms.items()),
        exact=_fits(terms, length),
    )


def phrase_terms(phrase_text: str) -> tuple[str, ...]:
    """The terms of one query phrase (the text inside its quotes), as the index stores them."""
    return tuple(bounded_term(token, LEXEME_MAX_BYTES) for token in fts_tokens(phrase_text))


def tsquery_literal(phrases: Sequence[Sequence[str]]) -> str:
    """An OR of the non-empty ``phrases``, each ``'a' <-> 'b' …`` (``''`` when all are empty)."""
    parts = [
        "(" + " <-> ".join(lexeme_literal(term) for term in phrase) + ")"
        for phrase in phrases
        if phrase
    ]
    return " | ".join(parts)
