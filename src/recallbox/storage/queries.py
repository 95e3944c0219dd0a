"""Typed queries and the search filter: what domain code asks a store, in no backend's syntax.

A backend renders these itself — FTS5 ``MATCH`` and ``LIKE``/``GLOB`` on SQLite, ``tsquery``
and ``pg_trgm`` on PostgreSQL — so no query language crosses the storage protocol.

**Corpora.** A corpus is one kind of searchable row with its own keyword index, its own
vectors (the embedding spaces whose ``owner`` is the corpus name) and its own visibility rule:
:data:`CORPUS_MESSAGE` (the sessions domain) and :data:`CORPUS_TRANSCRIPT_CHUNK` (the
transcripts domain), :data:`CORPUS_SECTION` (knowledge) and :data:`CORPUS_MEMORY_ENTRY`
(memory); code symbols add theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Messages of every thread (public id: the message id).
CORPUS_MESSAGE = "message"
#: Chunks of imported transcripts (public id: ``<channel>@<first seq>[.<part>]``).
CORPUS_TRANSCRIPT_CHUNK = "transcript_chunk"
#: Sections of knowledge documents (public id: the section id, ``s_<hex>``).
CORPUS_SECTION = "section"
#: Memory entries (public id: the entry key, ``PIT03``).
CORPUS_MEMORY_ENTRY = "memory_entry"
#: Code symbols of every indexed scope (public id: ``<scope>\x1f<symbol id>``, see
#: ``recallbox.storage.values_code.code_key``).
CORPUS_CODE_SYMBOL = "code_symbol"

Phrase = tuple[str, ...]
"""Words that must occur adjacent and in this order (see :class:`LexicalQuery`)."""


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """A ranked keyword query: rows holding **any** of ``phrases``, best BM25 first.

    A phrase is a sequence of words, none holding whitespace; the backend runs each word
    through its ranked index's tokenizer (on SQLite FTS5 ``porter unicode61
    remove_diacritics 2``, so ``search_memory`` is the two tokens ``search memory``) and needs
    the tokens adjacent and in order. CJK text arrives segmented (``recallbox.text.cjk``): a
    CJK run is a phrase of its overlapping bigrams, one word each. Phrase order is query order
    (:class:`~recallbox.storage.values.KeywordScope` reports one document frequency per phrase,
    in this order). Build one with ``recallbox.text.fts_query.build_fts_query``.
    """

    phrases: tuple[Phrase, ...] = ()

    @property
    def is_empty(self) -> bool:
        """True when there is nothing to search for (a store answers ``[]``)."""
        return not self.phrases


@dataclass(frozen=True, slots=True)
class LiteralQuery:
    """Thread search's exact substring query (DESIGN §3.2): ``term`` is text, never syntax.

    ``case_sensitive=False`` asks for rows that may hold ``term`` with case folded (a superset
    of the case-sensitive rows); the caller rechecks every row exactly.
    """

    term: str
    case_sensitive: bool


@dataclass(frozen=True, slots=True)
class RankWindow:
    """Which matching rows a global ranked keyword search scores (the *candidate set*), when
    its query matches more than ``matches`` rows of the corpus; below that every match is
    scored (exact).

    The candidate set, in a backend's row order (insertion order: newest = highest row id):

    1. the newest ``matches`` rows that match the query (any phrase) among the rows the
       privacy gate allows — a row of a quarantined thread or of a source excluded (by the
       stored policy or the filter's ``excluded``) takes no place in it, so it leaks nothing
       (DESIGN §5); matched rows hidden by the rest of the visibility rule or by the filter's
       channel are counted — the rule is applied to the ranked rows;
    2. every older matching row holding a phrase of the query that at most ``rare_rows``
       older allowed rows hold (a rare phrase is always searched in full).

    Each candidate is scored by BM25 over the **whole** corpus (IDF and average length of
    every row, as without a window), so a candidate's score does not depend on the window.
    When fewer than ``limit`` candidates are visible, ``matches`` is multiplied by ``growth``
    and the set rebuilt, until ``limit`` are visible or every match is a candidate. A backend
    returns the best ``limit`` visible candidates by that score, ties by id.
    """

    matches: int
    rare_rows: int
    growth: int = 4

    def __post_init__(self) -> None:
        if self.matches < 1 or self.rare_rows < 0 or self.growth < 2:
            raise ValueError(
                f"a RankWindow needs matches >= 1, rare_rows >= 0, growth >= 2: {self}"
            )


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """How a search narrows what the visibility rule already lets through (never widens it).

    ``channel``: one thread (``None``: every thread). ``scope``: a knowledge or code scope; a
    corpus without scopes raises :class:`~recallbox.errors.UnsupportedFilter` when it is set.
    ``excluded``: exclusions normalised by ``recallbox.domains.privacy.normalize_source_path``
    (a basename, or a path holding ``/``) denied for this call on top of the stored policy,
    matched as stored exclusions are (DESIGN §5, per-call ``excluded``);
    ``excluded_identities``: the file identities of those that name an existing file (hard
    links to them are denied too).
    """

    channel: str | None = None
    scope: str | None = None
    excluded: tuple[str, ...] = ()
    excluded_identities: tuple[str, ...] = ()


#: No narrowing: every row the visibility rule allows.
EVERYTHING = SearchFilter()
