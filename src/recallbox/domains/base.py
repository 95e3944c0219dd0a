"""What a recall domain is (DESIGN §4, §5): the :class:`Domain` protocol and its search context.

A domain searches one corpus of the store and renders its bucket of ``recall()``. It owns its
ranking and its rendering; it never sees SQL, a driver or an embedder (the query vector is
handed in, already in the right embedding space). Domains are listed in
``recallbox.domains.registry``; search and recall iterate that registry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from recallbox.storage.base import EVERYTHING, EmbeddingSpace, SearchFilter, Store
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit


@dataclass(frozen=True, slots=True)
class QueryVector:
    """The query's embedding and the space whose stored vectors it may be compared with."""

    vector: Sequence[float]
    space: EmbeddingSpace


@dataclass(frozen=True, slots=True)
class SearchContext:
    """Everything a domain search reads besides the query.

    ``where`` narrows what the store's visibility rule lets through (channel, scope, per-call
    excluded sources). ``query_vector`` is ``None`` when the vector leg does not run (no
    embedder, ``allow_embed=False``, a failed embedding, or no vectors stored for the domain);
    ``use_keyword=False`` skips the keyword leg (measurements).
    """

    store: Store
    where: SearchFilter = EVERYTHING
    query_vector: QueryVector | None = None
    use_keyword: bool = True


class Domain(Protocol):
    """One recall domain: a search and the rendering of its bucket."""

    @property
    def name(self) -> str:
        """Its name in ``DOMAINS`` (``"sessions"``, ``"transcripts"``, …)."""

    @property
    def owner(self) -> str | None:
        """The corpus whose vectors its vector leg compares (what the embedding passes embed
        for it); ``None`` for a domain without vectors."""

    @property
    def threshold(self) -> float:
        """The minimum fused score of a hit (DESIGN §4.2)."""

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """Ranked hits for ``query``, best first (ties by id), at most ``limit``; ``[]`` when
        nothing matches. Runs on one read snapshot of the store."""

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """The bucket text of ``hits`` (best first) within ``budget_chars``; ``""`` when
        nothing can be shown. Every item carries its complete id; every cut is said."""
