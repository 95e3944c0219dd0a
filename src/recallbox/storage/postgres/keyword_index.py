"""The keyword index of the PostgreSQL backend, over any corpus (``corpora.py``): FTS5's BM25.

* :meth:`KeywordMixin.keyword_ranked` scores the visible matching rows with exactly FTS5's
  ``bm25()`` over the whole corpus: ``N`` and the average length are the sums of the corpus's
  per-scope statistics, each phrase's document frequency comes from the term statistics (one
  term) or from counting the rows holding it (several), the IDF is
  :func:`recallbox.ranking.bm25.bm25_idf` — the same function the SQLite backend's parity is
  tested against — and the score is computed in SQL (``KeywordCorpus.ranked_sql``): best first,
  ties by public id.
* :meth:`KeywordMixin.keyword_scope` and :func:`document_scope` report what BM25 over one
  thread (or one document) needs: its rows and tokens, each phrase's document frequency among
  its rows, and each matching visible row's length and phrase frequencies.

Queries are rendered here (:func:`compile_query`): each phrase's words through the same
tokenizer as the documents (``keyword.phrase_terms``), OR-ed as a ``tsquery`` literal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recallbox.errors import InvalidArgument
from recallbox.ranking.bm25 import BM25_B, BM25_K1, bm25_idf
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import Corpus, corpus_of
from recallbox.storage.postgres.keyword import phrase_terms, tsquery_literal
from recallbox.storage.postgres.keyword_sql import query_elements
from recallbox.storage.postgres.keyword_window import (
    AllowedRows,
    overflow_holders,
    phrase_rows,
    window_condition,
)
from recallbox.storage.postgres.visibility import Clause, thread_gate, without_channel
from recallbox.storage.queries import LexicalQuery, RankWindow, SearchFilter
from recallbox.storage.values import KeywordScope, RowFrequencies

_MARK = re.compile(r"%s")


@dataclass(frozen=True, slots=True)
class Compiled:
    """A lexical query as the keyword SQL binds it."""

    phrases: tuple[tuple[str, ...], ...]
    params: dict[str, Any]

    @property
    def multi(self) -> bool:
        return any(len(p) > 1 for p in self.phrases)


def compile_query(query: LexicalQuery) -> Compiled | None:
    """The query's phrases as index terms and bound arrays; ``None`` when nothing can match."""
    phrases = tuple(phrase_terms(" ".join(words)) for words in query.phrases)
    tsq = tsquery_literal(phrases)
    if not tsq:
        return None
    elements = query_elements(phrases)
    return Compiled(
        phrases,
        {
            "terms": list(elements.terms),
            "tsq": tsq,
            "e_phrase": list(elements.phrase),
            "e_offset": list(elements.offset),
            "e_term": list(elements.term),
            "e_width": list(elements.width),
        },
    )


def named(clause: Clause, prefix: str) -> tuple[str, dict[str, Any]]:
    """``clause`` with its ``%s`` marks named ``%(<prefix><i>)s`` (to join named parameters)."""
    count = iter(range(len(clause.params)))
    sql = _MARK.sub(lambda _: f"%({prefix}{next(count)})s", clause.sql)
    return sql, {f"{prefix}{i}": value for i, value in enumerate(clause.params)}


def totals(conn: Connection, c: Corpus, scope: int | None) -> tuple[int, int]:
    """``(rows, tokens)`` of the corpus (of one scope)."""
    row = conn.execute(c.keyword.totals_sql(scope is not None), {"scope": scope}).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def corpus_idfs(
    conn: Connection, c: Corpus, compiled: Compiled, n_rows: int, scope: int | None = None
) -> list[float]:
    """Each phrase's IDF over the corpus (or one scope) from the statistics."""
    params = {**compiled.params, "scope": scope}
    scoped = scope is not None
    term_df = dict(conn.execute(c.keyword.df_sql(scoped), params).fetchall())
    phrase_df: dict[int, int] = {}
    if compiled.multi:
        phrase_df = phrase_dfs(conn, c, compiled, scope)
    idf = []
    for number, terms in enumerate(compiled.phrases, start=1):
        df = term_df.get(terms[0], 0) if len(terms) == 1 else phrase_df.get(number, 0)
        idf.append(bm25_idf(n_rows, int(df)) if terms else 0.0)
    return idf


def phrase_dfs(
    conn: Connection, c: Corpus, compiled: Compiled, scope: int | None = None
) -> dict[int, int]:
    """Phrase number -> rows (of one scope, or all) holding each phrase of several terms, as
    FTS5 counts them: the ``tsvector`` rows by ``fts @@ phrase`` (the GIN index, each row's
    vector checked once), the overflow rows by their positions."""
    scope_sql = f" AND {c.alias}.{c.keyword.scope_column} = %(scope)s" if scope is not None else ""
    params = {**compiled.params, "scope": scope}
    overflow = overflow_holders(conn, c, params, len(compiled.phrases), scope_sql)
    out: dict[int, int] = {}
    for number, terms in enumerate(compiled.phrases, start=1):
        if len(terms) > 1:
            held = sum(1 for f in overflow.values() if f[number - 1] > 0)
            out[number] = held + phrase_rows(conn, c, terms, scope_sql=scope_sql, params=params)
    return out


def row_frequencies(
    conn: Connection, c: Corpus, compiled: Compiled, where_sql: str, params: dict[str, Any]
) -> dict[int, tuple[int, list[int]]]:
    """Row id -> ``(length, frequency of each phrase)`` of the matching rows ``where_sql``
    selects (over ``c.alias``)."""
    sql = c.keyword.frequencies_sql(where=where_sql, key=f"{c.alias}.id", alias=c.alias)
    out: dict[int, tuple[int, list[int]]] = {}
    for key, length, phrase, freq in conn.execute(sql, {**compiled.params, **params}):
        entry = out.setdefault(int(key), (int(length), [0] * len(compiled.phrases)))
        entry[1][int(phrase) - 1] = int(freq)
    return out


def scope_statistics(
    conn: Connection,
    c: Corpus,
    compiled: Compiled | None,
    n_phrases: int,
    rows_tokens: tuple[int, int],
    where_sql: str,
    params: dict[str, Any],
    visible_sql: str,
    visible_params: Sequence[object] = (),
) -> KeywordScope:
    """A :class:`KeywordScope` over the rows ``where_sql`` selects: ``df`` counts every
    matching row, ``matches`` those ``visible_sql`` lets through."""
    rows, tokens = rows_tokens
    if compiled is None or not rows:
        return KeywordScope(rows, tokens, (0,) * n_phrases, ())
    found = row_frequencies(conn, c, compiled, where_sql, params)
    df = [0] * n_phrases
    for _, freqs in found.values():
        for i, freq in enumerate(freqs):
            df[i] += freq > 0
    ids = sorted(found)
    shown = {
        int(r[0]): str(r[1])
        for r in conn.execute(
            f"SELECT {c.alias}.id, {c.public_id} FROM {c.rows_from} "
            f"WHERE {c.alias}.id = ANY(%s::bigint[]) AND {visible_sql}",
            (ids, *visible_params),
        )
    }
    matches = tuple(
        RowFrequencies(shown[rid], found[rid][0], tuple(found[rid][1]))
        for rid in ids
        if rid in shown
    )
    return KeywordScope(rows, tokens, tuple(df), matches)


def window_gate(conn: Connection, c: Corpus, where: SearchFilter) -> AllowedRows | None:
    """What a window counts (``keyword_window.AllowedRows``): the rows whose thread (or
    document, file) the privacy gate and the call's exclusions allow; ``None`` (every row: no
    join to read) when no thread is denied, which is the same set. The filter's channel is no
    part of it: a window counts every thread's matches (``RankWindow``)."""
    privacy = without_channel(where)
    if c.channel_sql is not None:
        threads = thread_gate(privacy)
        row = conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM threads t WHERE NOT coalesce((true{threads.sql}), "
            "false))",
            threads.params,
        ).fetchone()
        if row is None or not row[0]:
            return None
    sql, params = named(c.narrow(privacy), "g")
    return AllowedRows(c.joins, f" AND {c.gate}{sql}", params)


class KeywordMixin:
    """:class:`~recallbox.storage.base.KeywordIndex` for :class:`PostgresStore`."""

    pool: PgPool

    def keyword_ranked(
        self,
        corpus: str,
        query: LexicalQuery,
        *,
        where: SearchFilter,
        limit: int,
        window: RankWindow | None = None,
    ) -> list[tuple[str, float]]:
        c = corpus_of(corpus)
        narrow = c.narrow(where)
        compiled = compile_query(query) if not query.is_empty and limit >= 1 else None
        if compiled is None:
            return []
        narrow_sql, narrow_params = named(narrow, "w")
        with self.pool.snapshot() as conn:
            n_rows, n_tokens = totals(conn, c, None)
            if not n_rows:
                return []
            params = {
                **compiled.params,
                **narrow_params,
                "idf": corpus_idfs(conn, c, compiled, n_rows),
                "avgdl": n_tokens / n_rows,
                "k1": BM25_K1,
                "b": BM25_B,
                "limit": limit,
            }
            size = window.matches if window is not None else 0
            gate = window_gate(conn, c, where) if window is not None else None
            while True:
                bounds = None
                if window is not None:
                    bounds = window_condition(
                        conn,
                        c,
                        compiled.phrases,
                        params,
                        size=size,
                        rare_rows=window.rare_rows,
                        allowed=gate or AllowedRows(),
                    )
                condition, extra = bounds if bounds is not None else ("true", {})
                sql = c.keyword.ranked_sql(
                    joins=c.joins,
                    where=f"{c.rule}{narrow_sql} AND {condition}",
                    key=c.public_id,
                    multi=compiled.multi,
                    alias=c.alias,
                )
                rows = conn.execute(sql, {**params, **extra}).fetchall()
                if bounds is None or len(rows) >= limit or window is None:
                    break
                # Trigger: hidden or filtered rows fill the window. Why: a search must not
                # return fewer hits than the matches it may see. Outcome: a wider window.
                size *= window.growth
        return [(str(key), float(score)) for key, score in rows]

    def keyword_scope(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """Over the rows of one thread: a corpus of thread rows (``thread_id``)."""
        c = corpus_of(corpus)
        if where.channel is None:
            raise InvalidArgument("keyword_scope needs a channel: the thread is the scope")
        c.narrow(where)  # an unsupported filter raises
        gate = thread_gate(without_channel(where))
        compiled = compile_query(query) if not query.is_empty else None
        with self.pool.snapshot() as conn:
            row = conn.execute(
                f"SELECT t.id FROM threads t WHERE t.channel = %s{gate.sql}",
                (where.channel, *gate.params),
            ).fetchone()
            if row is None:
                return None
            thread = int(row[0])
            return scope_statistics(
                conn,
                c,
                compiled,
                len(query.phrases),
                totals(conn, c, thread),
                f"{c.alias}.thread_id = %(thread)s",
                {"thread": thread},
                c.visible,
            )


def document_scope(
    conn: Connection, c: Corpus, source: str, query: LexicalQuery, narrow: Clause
) -> KeywordScope | None:
    """:meth:`~recallbox.storage.curated.KnowledgeStore.source_scope`: the document's visible
    rows are the corpus."""
    live = f"{c.alias}.source = %s AND {c.rule}{narrow.sql}"
    params = (source, *narrow.params)
    row = conn.execute(
        f"SELECT count(*), coalesce(sum({c.alias}.fts_len), 0) FROM {c.rows_from} WHERE {live}",
        params,
    ).fetchone()
    rows, tokens = (int(row[0]), int(row[1])) if row else (0, 0)
    if not rows:
        return None
    if query.is_empty:
        return KeywordScope(rows, tokens, (), ())
    live_named, live_params = named(Clause(live, params), "d")
    return scope_statistics(
        conn,
        c,
        compile_query(query),
        len(query.phrases),
        (rows, tokens),
        live_named,
        live_params,
        "true",
    )
