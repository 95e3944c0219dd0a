"""The ``sessions`` domain (DESIGN §4.5): every searchable message of every thread, one hit each.

One search runs both legs over the store and fuses them (``recallbox.ranking.fusion``):

* keyword: the typed keyword query (``recallbox.text.fts_query``) ranked by BM25, ``s``,
  with the statistics of the corpus searched — the whole index for a search of every thread
  (FTS5's ``bm25()``), the thread for a ``channel`` search (its row count, average length and
  document frequencies, ``recallbox.ranking.bm25``) — best :data:`KEYWORD_CANDIDATES` rows;
* vector: the :data:`VECTOR_CANDIDATES` nearest rows to the query vector, plus the similarity
  of every keyword candidate that has a vector, so a row is scored on the same legs whichever
  leg found it.

Candidate pools do not depend on ``limit`` (up to the pool size), so a smaller ``limit`` returns
a prefix of a larger one. The store applies the visibility rule (pending, superseded,
invisible, machine events, compaction summaries, denied threads) in every read, and the whole
search runs on one read snapshot; this module never sees those rows. No SQL here and no
embedder call: the query vector is handed in.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.domains.base import SearchContext
from recallbox.domains.hybrid import fuse_legs
from recallbox.domains.sessions_render import render_sessions_bucket
from recallbox.ranking.bm25 import scope_scores
from recallbox.ranking.fusion import THRESHOLD_SESSIONS, Fused
from recallbox.storage.base import CORPUS_MESSAGE, KeywordIndex, SearchFilter, SearchRow
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.types import Hit

DOMAIN = "sessions"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over).
KEYWORD_CANDIDATES = 200
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 200


def keyword_leg(
    store: KeywordIndex, query: FtsQuery, *, where: SearchFilter, pool: int
) -> dict[str, float]:
    """``{id: s}`` of the best ``pool`` keyword matches in scope, ``s`` the BM25 score.

    Trigger: a ``channel`` search. Why: inside one thread, words in most of its rows (the
    speakers' names, the project's name) carry no information, yet the IDF of the whole index
    rates them as rare and lets them outweigh the words that matter; measured on LoCoMo, scoped
    statistics lift hybrid turn recall@10 by about 2 points. Outcome: BM25 over the thread as
    the corpus — still exact BM25, of the corpus actually searched.
    """
    if query.is_empty:
        return {}
    if where.channel is None:
        return dict(store.keyword_ranked(CORPUS_MESSAGE, query.lexical, where=where, limit=pool))
    scope = store.keyword_scope(CORPUS_MESSAGE, query.lexical, where=where)
    if scope is None:
        return {}
    scores = scope_scores(
        scope.rows, scope.tokens, scope.df, [(m.length, m.freqs) for m in scope.matches]
    )
    ranked = sorted(
        zip((m.id for m in scope.matches), scores, strict=True), key=lambda p: (-p[1], p[0])
    )
    return dict(ranked[:pool])


def _hit(row: SearchRow, fused: Fused, query: FtsQuery) -> Hit:
    return Hit(
        id=row.id,
        score=fused.score,
        text=excerpt(row.content, query.terms, query.literals),
        domain=DOMAIN,
        channel=row.channel,
        created_at=row.created_at,
        keyword=fused.keyword,
        vector=fused.vector,
        role=row.role,
        best_message_id=row.id,  # a sessions hit is a message: read_message(hit.id)
        explain=fused.explain(),
    )


def search(ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
    """Rank the messages in scope for ``query``; best first, at most ``limit``.

    ``ctx.use_keyword=False`` (and an empty ``query``) skips the keyword leg;
    ``ctx.query_vector=None`` skips the vector leg. With neither, nothing is found.
    """
    store, where = ctx.store, ctx.where
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        if ctx.use_keyword and not query.is_empty:
            pool = max(limit, KEYWORD_CANDIDATES)
            keyword = keyword_leg(store, query, where=where, pool=pool)
        fused, rows = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda ids: store.search_rows(ids, where=where),
            text_of=lambda row: row.content,
            literals=query.literals,
            where=where,
            pool=max(limit, VECTOR_CANDIDATES),
            limit=limit,
            threshold=THRESHOLD_SESSIONS,
        )
    return [_hit(rows[f.id], f, query) for f in fused]


class SessionsDomain:
    """The ``sessions`` entry of the registry."""

    name = DOMAIN
    owner: str | None = CORPUS_MESSAGE
    threshold = THRESHOLD_SESSIONS

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """Hits grouped by thread with their windows (``recallbox.domains.sessions_render``)."""
        return render_sessions_bucket(ctx.store, hits, budget_chars, where=ctx.where)


SESSIONS = SessionsDomain()
