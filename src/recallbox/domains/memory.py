"""The ``memory`` domain (DESIGN §4.3, §4.5): curated memory entries, one hit per entry.

A search runs the shared two legs and fusion (``recallbox.domains.hybrid``) over the entry
corpus with :data:`~recallbox.ranking.fusion.THRESHOLD_MEMORY`, which applies to the fused
score; then each candidate's score is multiplied by its state weight (active 1.0, dormant 0.5,
archived 0.25, superseded ×0.1: ``domains.memory_model``) and the candidates are re-sorted.
Weights only reorder: every candidate the threshold kept stays (``Hit.explain`` shows the
fused score and the weight). Every state is recallable; an exclusion of ``MEMORY.md`` denies
every entry. A bucket item names the call that returns the exact matching entries,
``recall_context(query, source="MEMORY.md")``.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.domains import curated_render
from recallbox.domains.base import SearchContext
from recallbox.domains.buckets import fit_items
from recallbox.domains.hybrid import fuse_legs
from recallbox.domains.memory_model import MEMORY_SOURCE, entry_weight
from recallbox.ranking.fusion import THRESHOLD_MEMORY, Fused
from recallbox.storage.base import CORPUS_MEMORY_ENTRY, MemoryRow
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit

DOMAIN = "memory"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200
#: ``Hit.explain`` key of the state weight the fused score was multiplied by.
EXPLAIN_WEIGHT = "state_weight"


def _hit(row: MemoryRow, fused: Fused, weight: float, query: FtsQuery) -> Hit:
    return Hit(
        id=row.entry.key,
        score=fused.score * weight,
        text=excerpt(row.content, query.terms, query.literals),
        domain=DOMAIN,
        source=MEMORY_SOURCE,
        keyword=fused.keyword,
        vector=fused.vector,
        explain={**fused.explain(), EXPLAIN_WEIGHT: weight},
    )


def search(ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
    """Rank the entries for ``query``: one hit per entry, best weighted score first.

    Candidate pools do not depend on ``limit``, so a smaller ``limit`` returns a prefix of a
    larger one.
    """
    store, where = ctx.store, ctx.where
    pool = max(limit, KEYWORD_CANDIDATES, VECTOR_CANDIDATES)
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        if ctx.use_keyword and not query.is_empty:
            keyword = dict(
                store.keyword_ranked(CORPUS_MEMORY_ENTRY, query.lexical, where=where, limit=pool)
            )
        fused, rows = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda keys: store.memory_rows(keys, where=where),
            text_of=lambda row: row.content,
            literals=query.literals,
            where=where,
            pool=pool,
            limit=pool,
            threshold=THRESHOLD_MEMORY,
        )
    weighted = [(f, entry_weight(rows[f.id].entry)) for f in fused]
    weighted.sort(key=lambda pair: (pair[0].literal_misses, -pair[0].score * pair[1], pair[0].id))
    return [_hit(rows[f.id], f, weight, query) for f, weight in weighted[:limit]]


def item_head(row: MemoryRow, rank: int) -> str:
    """``[memory_key=<key> type=<type> state=<state> rank=<n>]`` (and ``superseded_by``)."""
    entry = row.entry
    parts = [f"[memory_key={entry.key}", f"type={entry.type}", f"state={entry.state}"]
    if entry.superseded_by is not None:
        parts.append(f"superseded_by={entry.superseded_by}")
    return " ".join([*parts, f"rank={rank}"]) + "]"


def render_memory_bucket(ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
    """The memory bucket: one item per entry, best first — the head line (key, type, state,
    rank), at most :data:`~recallbox.text.windows.WINDOW_CHARS` of its text escaped, and its
    ``recall_context`` call; ``""`` for no hits. An entry denied since the search is left
    out."""
    rows = ctx.store.memory_rows([hit.id for hit in hits], where=ctx.where)
    shown = [hit for hit in hits if hit.id in rows]
    items = [
        curated_render.item(item_head(rows[hit.id], rank), hit.text, MEMORY_SOURCE)
        for rank, hit in enumerate(shown, start=1)
    ]
    return fit_items(items, budget_chars)


class MemoryDomain:
    """The ``memory`` entry of the registry."""

    name = DOMAIN
    owner: str | None = CORPUS_MEMORY_ENTRY
    threshold = THRESHOLD_MEMORY

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """See :func:`render_memory_bucket`."""
        return render_memory_bucket(ctx, hits, budget_chars)


MEMORY = MemoryDomain()
