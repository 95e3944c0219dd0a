"""The ``knowledge`` domain (DESIGN §4, §4.5): sections of markdown documents, one hit each.

A search runs the shared two legs and fusion (``recallbox.domains.hybrid``) over the section
corpus: BM25 over the whole section index, the nearest section vectors,
:data:`~recallbox.ranking.fusion.THRESHOLD_KNOWLEDGE`. ``SearchFilter.scope="P"`` reads P's
sections plus the global library (the store's scope condition); ``excluded`` denies more
documents for the call. A hit names its document (``source``), line range, scope and heading;
its bucket item names the call that returns the exact matching entries of the document,
``recall_context(query, source="<source>")``. Writing sections is ``knowledge_sync``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.domains import curated_render
from recallbox.domains.base import SearchContext
from recallbox.domains.buckets import fit_items
from recallbox.domains.hybrid import fuse_legs
from recallbox.ranking.fusion import THRESHOLD_KNOWLEDGE, Fused
from recallbox.storage.base import CORPUS_SECTION, SectionRow
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit

DOMAIN = "knowledge"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200
#: How an item names the global library's scope.
GLOBAL_SCOPE_LABEL = "global"


def _hit(row: SectionRow, fused: Fused, query: FtsQuery) -> Hit:
    return Hit(
        id=row.id,
        score=fused.score,
        text=excerpt(row.content, query.terms, query.literals),
        domain=DOMAIN,
        source=row.source,
        lines=(row.start_line, row.end_line),
        keyword=fused.keyword,
        vector=fused.vector,
        scope=row.scope,
        explain=fused.explain(),
    )


def search(ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
    """Rank the live, allowed sections in scope for ``query``: one hit per section, best first.

    Candidate pools do not depend on ``limit``, so a smaller ``limit`` returns a prefix of a
    larger one.
    """
    store, where = ctx.store, ctx.where
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        if ctx.use_keyword and not query.is_empty:
            pool = max(limit, KEYWORD_CANDIDATES)
            keyword = dict(
                store.keyword_ranked(CORPUS_SECTION, query.lexical, where=where, limit=pool)
            )
        fused, rows = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda ids: store.section_rows(ids, where=where),
            text_of=lambda row: row.content,
            literals=query.literals,
            where=where,
            pool=max(limit, VECTOR_CANDIDATES),
            limit=limit,
            threshold=THRESHOLD_KNOWLEDGE,
        )
    return [_hit(rows[f.id], f, query) for f in fused]


def item_head(hit: Hit, rank: int) -> str:
    """``[section_id=<id> source=<source>:<a>-<b> scope=<scope> rank=<n>]``."""
    lines = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines is not None else ""
    scope = curated_render.name(hit.scope) if hit.scope is not None else GLOBAL_SCOPE_LABEL
    source = curated_render.name(hit.source or "")
    return f"[section_id={hit.id} source={source}{lines} scope={scope} rank={rank}]"


def render_knowledge_bucket(hits: Sequence[Hit], budget_chars: int) -> str:
    """The knowledge bucket: one item per section, best first — the head line (id, source and
    lines, scope, rank), at most :data:`~recallbox.text.windows.WINDOW_CHARS` of its text
    escaped, and its ``recall_context`` call; ``""`` for no hits."""
    items = [
        curated_render.item(item_head(hit, rank), hit.text, hit.source or "")
        for rank, hit in enumerate(hits, start=1)
    ]
    return fit_items(items, budget_chars)


class KnowledgeDomain:
    """The ``knowledge`` entry of the registry."""

    name = DOMAIN
    owner: str | None = CORPUS_SECTION
    threshold = THRESHOLD_KNOWLEDGE

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """See :func:`render_knowledge_bucket`."""
        del ctx
        return render_knowledge_bucket(hits, budget_chars)


KNOWLEDGE = KnowledgeDomain()
