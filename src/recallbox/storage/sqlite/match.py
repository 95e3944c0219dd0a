"""Rendering typed queries as FTS5 ``MATCH`` expressions (the only place that writes them).

A phrase of a :class:`~recallbox.storage.queries.LexicalQuery` becomes one FTS5 string (its
words joined by spaces, inner ``"`` doubled), which the index's tokenizer splits exactly as it
split the indexed text; phrases are OR-joined. Quoting makes every expression well formed:
no user text is ever read as FTS5 syntax.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.storage.queries import LexicalQuery


def quote_phrase(text: str) -> str:
    """An FTS5 string literal: the text in double quotes, inner quotes doubled."""
    return '"' + text.replace('"', '""') + '"'


def phrase_strings(query: LexicalQuery) -> list[str]:
    """One quoted FTS5 phrase per phrase of ``query``, in order."""
    return [quote_phrase(" ".join(words)) for words in query.phrases]


def render_match(query: LexicalQuery) -> str:
    """The ``MATCH`` expression for ``query`` (``""`` for an empty query)."""
    return any_of(phrase_strings(query))


def any_of(phrases: Sequence[str]) -> str:
    """Quoted phrases OR-joined."""
    return " OR ".join(phrases)
