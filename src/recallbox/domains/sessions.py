"""The ``sessions`` domain (DESIGN §4.5): every searchable message of every thread, one hit each.

One search runs both legs over the store and fuses them (``recallbox.ranking.fusion``):

* keyword: the typed keyword query (``recallbox.text.fts_query``) ranked by BM25, ``s``,
  with the statistics of the corpus searched — the whole index for a search of every thread
  (FTS5's ``bm25()``; over a long history only its candidate window is scored,
  ``hybrid.HISTORY_RANK_WINDOW``), the thread for a ``channel`` search (its row count, average
  length and document frequencies, ``recallbox.ranking.bm25``) — best
  :data:`KEYWORD_CANDIDATES` rows;
  a query with no word the tokenizer indexes (``🚀``: symbols are separators to it) takes
  the literal leg instead (:func:`symbol_leg`: the thread-search candidates, scored by how
  often the content holds the symbols);
* vector: the :data:`VECTOR_CANDIDATES` nearest rows to the query vector, plus the similarity
  of every keyword candidate that has a vector, so a row is scored on the same legs whichever
  leg found it.

The fused hybrid score is the *base*; the ranking signals of ``recallbox.ranking.signals``
(episodes, neighbours, the participants and dates a query names, #21) are combined with it over
the candidates (``recallbox.domains.signal_inputs``), and the first hits carry their episode's
neighbours (``recallbox.domains.hit_context``).

Every candidate's row is read without its whole text (``EpisodeReads.search_heads``: the
ranking needs its first characters only); the hits returned read theirs. Candidate pools do
not depend on ``limit`` (up to the pool size), so a smaller ``limit`` returns a prefix of a
larger one. The store applies the visibility rule (pending, superseded,
invisible, machine events, compaction summaries, denied threads) in every read, and the whole
search runs on one read snapshot; this module never sees those rows. No SQL here and no
embedder call: the query vector is handed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from recallbox.domains.base import SearchContext
from recallbox.domains.hit_context import hit_neighbours
from recallbox.domains.hybrid import HISTORY_RANK_WINDOW, fuse_legs, literal_misses
from recallbox.domains.sessions_render import render_sessions_bucket
from recallbox.domains.signal_inputs import CANDIDATE_LEAD_CHARS, signal_scores
from recallbox.domains.threads import INDEXED_TERM_CHARS, SHORT_QUERY_SCAN_MESSAGES
from recallbox.ranking.bm25 import BM25_B, BM25_K1, SCOPED_BM25_B, SCOPED_BM25_K1, scope_scores
from recallbox.ranking.fusion import THRESHOLD_SESSIONS, Fused
from recallbox.ranking.signals import DEFAULT_WEIGHTS, Scored, Weights, explain_signals
from recallbox.storage.base import (
    CORPUS_MESSAGE,
    EpisodeReads,
    KeywordIndex,
    LiteralQuery,
    LiteralSearch,
    SearchFilter,
    SearchRow,
    Store,
)
from recallbox.text.excerpt import excerpt
from recallbox.text.fts_query import FtsQuery
from recallbox.text.participants import participant_of
from recallbox.types import Hit, Neighbour

DOMAIN = "sessions"
#: Keyword candidates per search (the BM25 pool min-max normalisation runs over). 400 rather
#: than 200 since #21: the signals need the turns around a match in the pool (measured on
#: LoCoMo dev: +0.1 turn R@10 for this pool, +0.2 for the vector one, more for temporal).
KEYWORD_CANDIDATES = 400
#: Nearest-vector candidates per search.
VECTOR_CANDIDATES = 400
#: Candidates whose whole texts are read at once to look for a query's identifier literals,
#: at most; the first read takes :data:`LITERAL_FIRST_ROWS`, the next ones as many as fit
#: :data:`LITERAL_READ_CHARS` at the lengths seen so far (64 long tool outputs held 4.5 MiB).
LITERAL_READ_ROWS = 64
LITERAL_FIRST_ROWS = 8
LITERAL_READ_CHARS = 262_144
#: The pools of the plain hybrid before #21 (the measurement baseline).
PLAIN_CANDIDATES = 200


@dataclass(frozen=True, slots=True)
class Ranking:
    """How :func:`search` ranks (the shipped default; other values are for measurements).

    ``weights`` are the ranking signals' (``None``: the plain hybrid, no signals); the pools
    and the thread-scoped BM25 ``k1``/``b`` are the keyword leg's and the vector leg's.
    """

    weights: Weights | None = DEFAULT_WEIGHTS
    keyword_pool: int = KEYWORD_CANDIDATES
    vector_pool: int = VECTOR_CANDIDATES
    bm25_k1: float = SCOPED_BM25_K1
    bm25_b: float = SCOPED_BM25_B


DEFAULT_RANKING = Ranking()
#: The plain 0.6/0.4 hybrid of FTS5's BM25 constants and the former pools (the baseline).
PLAIN_RANKING = Ranking(
    weights=None,
    keyword_pool=PLAIN_CANDIDATES,
    vector_pool=PLAIN_CANDIDATES,
    bm25_k1=BM25_K1,
    bm25_b=BM25_B,
)


def keyword_leg(
    store: KeywordIndex,
    query: FtsQuery,
    *,
    where: SearchFilter,
    pool: int,
    k1: float = SCOPED_BM25_K1,
    b: float = SCOPED_BM25_B,
    freqs: dict[str, tuple[int, ...]] | None = None,
) -> dict[str, float]:
    """``{id: s}`` of the best ``pool`` keyword matches in scope, ``s`` the BM25 score; for a
    thread-scoped search, ``freqs`` (when given) receives each kept match's phrase frequencies.

    Trigger: a ``channel`` search. Why: inside one thread, words in most of its rows (the
    speakers' names, the project's name) carry no information, yet the IDF of the whole index
    rates them as rare and lets them outweigh the words that matter; measured on LoCoMo, scoped
    statistics lift hybrid turn recall@10 by about 2 points. Outcome: BM25 over the thread as
    the corpus — still exact BM25, of the corpus actually searched, with ``k1``/``b`` suited
    to short chat turns (``SCOPED_BM25_*``, #21).
    """
    if query.is_empty:
        return {}
    if where.channel is None:
        ranked = store.keyword_ranked(
            CORPUS_MESSAGE, query.lexical, where=where, limit=pool, window=HISTORY_RANK_WINDOW
        )
        return dict(ranked)
    scope = store.keyword_scope(CORPUS_MESSAGE, query.lexical, where=where)
    if scope is None:
        return {}
    scores = scope_scores(
        scope.rows,
        scope.tokens,
        scope.df,
        [(m.length, m.freqs) for m in scope.matches],
        k1=k1,
        b=b,
    )
    ranked = sorted(
        zip((m.id for m in scope.matches), scores, strict=True), key=lambda p: (-p[1], p[0])
    )
    kept = dict(ranked[:pool])
    if freqs is not None:
        freqs.update((m.id, m.freqs) for m in scope.matches if m.id in kept)
    return kept


def symbol_leg(
    store: LiteralSearch, symbols: Sequence[str], *, where: SearchFilter, pool: int
) -> dict[str, float]:
    """``{id: s}`` for a symbol-only query: the first ``pool`` visible messages (in
    thread-search order) whose content holds a symbol word, ``s`` the number of occurrences.

    Trigger: a query whose words hold no letter or digit (``🚀``). Why: the ranked index's
    tokenizer treats symbols as separators, so it holds nothing to match, while the literal
    index (trigrams; the bounded scan of the newest messages for a shorter term, as
    ``search_memory`` does) finds them. Outcome: those matches, ranked by count.
    """
    scores: dict[str, float] = {}
    for symbol in symbols:
        recent = SHORT_QUERY_SCAN_MESSAGES if len(symbol) < INDEXED_TERM_CHARS else 0
        rows = store.literal_candidates(
            LiteralQuery(symbol, case_sensitive=True), where=where, limit=pool, recent=recent
        )
        for message in rows:
            count = message.content.count(symbol)
            if count:
                scores[message.id] = scores.get(message.id, 0.0) + count
    return dict(sorted(scores.items(), key=lambda p: (-p[1], p[0]))[:pool])


def _hit(
    row: SearchRow,
    fused: Fused,
    query: FtsQuery,
    scored: Scored | None = None,
    neighbours: tuple[Neighbour, ...] = (),
) -> Hit:
    explain = fused.explain()
    if scored is not None:
        explain.update(explain_signals(scored))
    return Hit(
        id=row.id,
        score=fused.score if scored is None else scored.score,
        text=excerpt(row.content, query.terms or query.symbols, query.literals),
        domain=DOMAIN,
        channel=row.channel,
        created_at=row.created_at,
        keyword=fused.keyword,
        vector=fused.vector,
        role=row.role,
        best_message_id=row.id,  # a sessions hit is a message: read_message(hit.id)
        explain=explain,
        participant=participant_of(row.role, row.content),
        neighbours=neighbours,
    )


def search(
    ctx: SearchContext, query: FtsQuery, *, limit: int, ranking: Ranking = DEFAULT_RANKING
) -> list[Hit]:
    """Rank the messages in scope for ``query``; best first, at most ``limit``.

    ``ctx.use_keyword=False`` (and an empty ``query``) skips the keyword leg;
    ``ctx.query_vector=None`` skips the vector leg. With neither, nothing is found. A store
    without :class:`~recallbox.storage.base.EpisodeReads` ranks by the fused score alone.
    ``ranking`` is for measurements.
    """
    store, where = ctx.store, ctx.where
    weights = ranking.weights if isinstance(store, EpisodeReads) else None
    # every candidate's head only (its whole text is read for the hits shown); the identifier
    # literals are looked for in whole texts read a chunk at a time
    heads = isinstance(store, EpisodeReads)
    lacking: dict[str, int] = {}  # id -> identifier literals its whole text lacks
    with store.read_snapshot():
        keyword: dict[str, float] | None = None
        freqs: dict[str, tuple[int, ...]] = {}
        pool = max(limit, ranking.keyword_pool)
        if ctx.use_keyword and not query.is_empty:
            keyword = keyword_leg(
                store,
                query,
                where=where,
                pool=pool,
                k1=ranking.bm25_k1,
                b=ranking.bm25_b,
                freqs=freqs,
            )
        elif ctx.use_keyword and query.symbols:
            keyword = symbol_leg(store, query.symbols, where=where, pool=pool)
        fused, rows = fuse_legs(
            keyword,
            ctx.query_vector,
            nearest=store.nearest,
            distances=store.distances,
            rows_of=lambda ids: candidate_rows(
                store, ids, where=where, heads=heads, literals=query.literals, misses=lacking
            ),
            text_of=lambda row: row.content,
            literals=query.literals,
            misses_of=lacking.__getitem__ if heads and query.literals else None,
            where=where,
            pool=max(limit, ranking.vector_pool),
            limit=None if weights is not None else limit,
            threshold=THRESHOLD_SESSIONS,
        )
        chosen: list[tuple[Fused, Scored | None]]
        if weights is None:
            chosen = [(f, None) for f in fused]
        else:
            scored = signal_scores(
                store,
                fused,
                rows,
                query=query.text,
                vector_leg=ctx.query_vector is not None,
                where=where,
                weights=weights,
                freqs=freqs if keyword is not None and where.channel is not None else None,
            )
            by_id = {f.id: f for f in fused}
            ids, score = scored.ids, scored.score
            misses = [by_id[rid].literal_misses for rid in ids]
            order = sorted(range(len(ids)), key=lambda i: (misses[i], -score[i], ids[i]))
            chosen = [(by_id[ids[i]], scored.scored(i)) for i in order[:limit]]
        if heads:
            rows = store.search_rows([f.id for f, _ in chosen], where=where)
        context = hit_neighbours(store, [rows[f.id] for f, _ in chosen], where=where)
    return [_hit(rows[f.id], f, query, s, context.get(f.id, ())) for f, s in chosen]


def candidate_rows(
    store: Store,
    ids: Sequence[str],
    *,
    where: SearchFilter,
    heads: bool,
    literals: Sequence[str] = (),
    misses: dict[str, int] | None = None,
) -> Mapping[str, SearchRow]:
    """The candidates' rows: their heads (:data:`CANDIDATE_LEAD_CHARS` of content: what the
    ranking reads, without holding whole texts of long messages) or whole rows.

    With identifier ``literals`` the whole texts are read a few at a time (:func:`_read_size`),
    each one's count of missing literals kept in ``misses`` and only its head kept: a common
    identifier's ~1 000 candidates held their whole texts at once (9.6 MiB at 1M messages).
    """
    if not (heads and isinstance(store, EpisodeReads)):
        return store.search_rows(ids, where=where)
    if not literals or misses is None:
        return store.search_heads(ids, lead=CANDIDATE_LEAD_CHARS, where=where)
    rows: dict[str, SearchRow] = {}
    at, size, read, chars = 0, LITERAL_FIRST_ROWS, 0, 0
    while at < len(ids):
        chunk = ids[at : at + size]
        at += len(chunk)
        for rid, row in store.search_rows(chunk, where=where).items():
            misses[rid] = literal_misses(row.content, literals)
            rows[rid] = replace(row, content=row.content[:CANDIDATE_LEAD_CHARS])
            chars += len(row.content)
        read += len(chunk)
        size = _read_size(read, chars, len(chunk))
    return rows


def _read_size(read: int, chars: int, last: int) -> int:
    """How many candidates the next read takes, ``read`` of them having held ``chars``
    characters and the last read ``last``: as many as fit :data:`LITERAL_READ_CHARS` at that
    mean length, at most twice the last read (short lines first, long outputs next), 1 to
    :data:`LITERAL_READ_ROWS`."""
    fit = LITERAL_READ_CHARS * read // max(chars, 1)
    return max(1, min(LITERAL_READ_ROWS, 2 * last, fit))


class SessionsDomain:
    """The ``sessions`` entry of the registry (``ranking``: measurements only)."""

    name = DOMAIN
    owner: str | None = CORPUS_MESSAGE
    threshold = THRESHOLD_SESSIONS

    def __init__(self, ranking: Ranking = DEFAULT_RANKING) -> None:
        self.ranking = ranking

    def search(self, ctx: SearchContext, query: FtsQuery, *, limit: int) -> list[Hit]:
        """See :func:`search`."""
        return search(ctx, query, limit=limit, ranking=self.ranking)

    def render_bucket(self, ctx: SearchContext, hits: Sequence[Hit], budget_chars: int) -> str:
        """Hits grouped by thread with their windows (``recallbox.domains.sessions_render``)."""
        return render_sessions_bucket(ctx.store, hits, budget_chars, where=ctx.where)


SESSIONS = SessionsDomain()
