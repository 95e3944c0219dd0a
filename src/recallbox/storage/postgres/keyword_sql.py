"""SQL of the PostgreSQL keyword index: term statistics kept by triggers, and FTS5's ``bm25()``.

A *keyword corpus* is a table with a ``bigint`` key ``id``, a scope column (the thread for
messages and transcript chunks, the scope for knowledge sections and code symbols, one constant
scope for memory entries) and two columns filled from
:class:`~recallbox.storage.postgres.keyword.KeywordDocument`: ``fts tsvector`` (NULL for an
overflow document) and ``fts_len integer`` (FTS5's token count). :meth:`KeywordCorpus.ddl`
adds, for a table ``T`` (``docs/postgres.md`` has the reasoning and the figures):

* ``T_fts`` — a GIN index on ``fts``;
* ``T_fts_overflow (term, doc_id, scope_id, positions)`` — the terms of documents whose
  ``tsvector`` would be inexact, with all their positions;
* ``T_fts_scopes (scope_id, n_docs, n_tokens)`` and ``T_fts_terms (term, scope_id, df)`` —
  BM25's statistics **per scope**, kept exact inside the writing transaction by statement-level
  triggers (transition tables) on ``T`` and on the overflow table. A writer touches only its own
  scope's rows (never one hot global row); a query sums the rows of the scopes it covers.

Statistics count every row of the table, excluded ones included, as FTS5's do. Overflow rows
are only ever inserted and deleted (a document that changes, or moves scope, has its overflow
rows deleted and written again), so their triggers cover insert and delete.

:meth:`KeywordCorpus.ranked_sql` scores the matching rows exactly as FTS5's ``bm25()`` does::

    score = Σ_i idf_i · f_i · (k1 + 1) / (f_i + k1 · (1 − b + b · D / avgdl))

with ``f_i`` the occurrences of phrase ``i`` in the row (overlapping starts count), computed
from ``tsvector`` positions (``ts_filter(setweight(fts, 'A', terms), '{a}')`` keeps only the
query's lexemes) or from the overflow positions. ``idf_i``, ``avgdl``, ``k1`` and ``b`` are
parameters, computed by the caller from the statistics with
:func:`recallbox.ranking.bm25.bm25_idf`, so both backends share one IDF.

Table and column names are code constants (never user input); values are always bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

#: Trigger operations and the transition tables each one has.
_TRANSITIONS = {
    "INSERT": "REFERENCING NEW TABLE AS new_rows",
    "DELETE": "REFERENCING OLD TABLE AS old_rows",
    "UPDATE": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
}


@dataclass(frozen=True, slots=True)
class QueryElements:
    """A query's phrases as bound arrays: one entry per (phrase, offset) element.

    ``phrase`` numbers phrases from 1 in query order; ``offset`` is the term's place in its
    phrase and ``width`` the phrase's length. ``terms`` are the distinct terms.
    """

    phrase: tuple[int, ...]
    offset: tuple[int, ...]
    term: tuple[str, ...]
    width: tuple[int, ...]
    terms: tuple[str, ...]


def query_elements(phrases: Sequence[Sequence[str]]) -> QueryElements:
    """The bound arrays of ``phrases`` (lists of terms; an empty phrase matches nothing)."""
    phrase: list[int] = []
    offset: list[int] = []
    term: list[str] = []
    width: list[int] = []
    for number, terms in enumerate(phrases, start=1):
        for at, value in enumerate(terms):
            phrase.append(number)
            offset.append(at)
            term.append(value)
            width.append(len(terms))
    distinct = tuple(dict.fromkeys(term))
    return QueryElements(tuple(phrase), tuple(offset), tuple(term), tuple(width), distinct)


@dataclass(frozen=True, slots=True)
class KeywordCorpus:
    """The keyword index objects of one table (``table`` has ``id``, ``fts``, ``fts_len``)."""

    table: str
    scope_column: str

    @property
    def overflow(self) -> str:
        return f"{self.table}_fts_overflow"

    @property
    def scopes(self) -> str:
        return f"{self.table}_fts_scopes"

    @property
    def terms(self) -> str:
        return f"{self.table}_fts_terms"

    # -- schema --------------------------------------------------------------------------
    def ddl(self) -> list[str]:
        """Index, overflow and statistics tables, and the triggers that keep them exact."""
        t, scope = self.table, self.scope_column
        statements = [
            f"CREATE INDEX {t}_fts ON {t} USING gin (fts)",
            f"""CREATE TABLE {self.overflow} (
                term text COLLATE "C" NOT NULL,
                doc_id bigint NOT NULL REFERENCES {t}(id) ON DELETE CASCADE,
                scope_id bigint NOT NULL,
                positions integer[] NOT NULL,
                PRIMARY KEY (term, doc_id)
            )""",
            f"CREATE INDEX {self.overflow}_doc ON {self.overflow} (doc_id)",
            f"""CREATE TABLE {self.scopes} (
                scope_id bigint PRIMARY KEY,
                n_docs bigint NOT NULL,
                n_tokens bigint NOT NULL
            )""",
            f"""CREATE TABLE {self.terms} (
                term text COLLATE "C" NOT NULL,
                scope_id bigint NOT NULL,
                df bigint NOT NULL,
                PRIMARY KEY (term, scope_id)
            )""",
        ]
        for op in _TRANSITIONS:
            statements += self._stats_trigger(op, scope)
        for op in ("INSERT", "DELETE"):
            statements += self._overflow_trigger(op)
        return statements

    def _apply_sql(self, term_delta: str, scope_delta: str) -> str:
        """Add ``term_delta`` (term, scope_id, n) and ``scope_delta`` (scope_id, docs, tokens)
        to the statistics, in key order (so writers never deadlock), dropping emptied rows."""
        return f"""
            INSERT INTO {self.scopes} AS s (scope_id, n_docs, n_tokens)
                SELECT scope_id, sum(docs), sum(tokens) FROM ({scope_delta}) AS d
                GROUP BY scope_id HAVING sum(docs) <> 0 OR sum(tokens) <> 0 ORDER BY scope_id
            ON CONFLICT (scope_id) DO UPDATE
                SET n_docs = s.n_docs + excluded.n_docs, n_tokens = s.n_tokens + excluded.n_tokens;
            DELETE FROM {self.scopes} WHERE n_docs = 0
                AND scope_id IN (SELECT scope_id FROM ({scope_delta}) AS d);
            INSERT INTO {self.terms} AS s (term, scope_id, df)
                SELECT term, scope_id, sum(n) FROM ({term_delta}) AS d
                GROUP BY term, scope_id HAVING sum(n) <> 0 ORDER BY term, scope_id
            ON CONFLICT (term, scope_id) DO UPDATE SET df = s.df + excluded.df;
            DELETE FROM {self.terms} AS s USING ({term_delta}) AS d
                WHERE s.term = d.term AND s.scope_id = d.scope_id AND s.df = 0;
        """

    def _stats_trigger(self, op: str, scope: str) -> list[str]:
        def terms_of(rows: str, sign: str) -> str:
            return (
                f'SELECT u.term COLLATE "C" AS term, r.{scope} AS scope_id, {sign}1 AS n '
                f"FROM {rows} r CROSS JOIN LATERAL unnest(tsvector_to_array(r.fts)) AS u(term) "
                "WHERE r.fts IS NOT NULL"
            )

        def docs_of(rows: str, sign: str) -> str:
            return (
                f"SELECT r.{scope} AS scope_id, {sign}1 AS docs, {sign}r.fts_len::bigint AS tokens "
                f"FROM {rows} r"
            )

        if op == "INSERT":
            term_delta, scope_delta = terms_of("new_rows", ""), docs_of("new_rows", "")
        elif op == "DELETE":
            term_delta, scope_delta = terms_of("old_rows", "-"), docs_of("old_rows", "-")
        else:
            # Rows whose indexed text did not change cancel out; skip them early.
            changed = (
                "(SELECT o.* FROM old_rows o JOIN new_rows n ON n.id = o.id "
                f"WHERE o.fts IS DISTINCT FROM n.fts OR o.fts_len <> n.fts_len "
                f"OR o.{scope} <> n.{scope})"
            )
            changed_new = changed.replace("SELECT o.*", "SELECT n.*")
            term_delta = f"{terms_of(changed, '-')} UNION ALL {terms_of(changed_new, '')}"
            scope_delta = f"{docs_of(changed, '-')} UNION ALL {docs_of(changed_new, '')}"
        name = f"{self.table}_fts_stats_{op.lower()}"
        return [
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"{self._apply_sql(term_delta, scope_delta)} RETURN NULL; END $$",
            f"CREATE TRIGGER {name} AFTER {op} ON {self.table} {_TRANSITIONS[op]} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]

    def _overflow_trigger(self, op: str) -> list[str]:
        rows, sign = ("new_rows", "") if op == "INSERT" else ("old_rows", "-")
        term_delta = f"SELECT r.term, r.scope_id, {sign}1 AS n FROM {rows} r"
        empty_scopes = "SELECT NULL::bigint AS scope_id, 0 AS docs, 0 AS tokens WHERE false"
        name = f"{self.overflow}_stats_{op.lower()}"
        return [
            f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"{self._apply_sql(term_delta, empty_scopes)} RETURN NULL; END $$",
            f"CREATE TRIGGER {name} AFTER {op} ON {self.overflow} {_TRANSITIONS[op]} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]

    # -- statistics ----------------------------------------------------------------------
    def totals_sql(self, scoped: bool) -> str:
        """``(n_docs, n_tokens)`` over every scope, or over ``%(scope)s``."""
        where = " WHERE scope_id = %(scope)s" if scoped else ""
        return (
            "SELECT coalesce(sum(n_docs), 0)::bigint, coalesce(sum(n_tokens), 0)::bigint "
            f"FROM {self.scopes}{where}"
        )

    def df_sql(self, scoped: bool) -> str:
        """``(term, df)`` of the terms ``%(terms)s`` over every scope, or over ``%(scope)s``."""
        where = " AND scope_id = %(scope)s" if scoped else ""
        return (
            f"SELECT term, sum(df)::bigint FROM {self.terms} "
            f"WHERE term = ANY(%(terms)s::text[]){where} GROUP BY term"
        )

    # -- phrase frequencies and bm25() ----------------------------------------------------
    def _freq_ctes(self, joins: str, where: str, key: str, multi: bool, alias: str = "d") -> str:
        """CTEs ending in ``freq (key, fts_len, phrase, f)``: each matching row that passes
        ``where``, each query phrase it holds, and how often (``f > 0``).

        One pass over the rows: the ``tsvector`` rows found through the GIN index, plus the
        overflow rows found through their terms; no ``tsvector`` is materialised, and
        positions are read only when ``multi`` (some phrase has two or more terms). The table
        is aliased ``alias`` in ``joins``/``where``/``key``. Binds ``%(tsq)s``, ``%(terms)s``
        and the :class:`QueryElements` arrays ``%(e_phrase)s``, ``%(e_offset)s``,
        ``%(e_term)s``, ``%(e_width)s``.
        """
        t, a = self.table, alias
        cond = f" AND ({where})" if where else ""
        occ = f"""
            SELECT {a}.id, {key} AS key, {a}.fts_len, u.lexeme COLLATE "C" AS term,
                   cardinality(u.positions) AS tf, u.positions::int[] AS pos
            FROM {t} {a} {joins} CROSS JOIN LATERAL
                unnest(ts_filter(setweight({a}.fts, 'A', %(terms)s::text[]), '{{a}}')) AS u
            WHERE {a}.fts @@ %(tsq)s::tsquery{cond}
            UNION ALL
            SELECT {a}.id, {key}, {a}.fts_len, o.term, cardinality(o.positions), o.positions
            FROM {self.overflow} o JOIN {t} {a} ON {a}.id = o.doc_id {joins}
            WHERE o.term = ANY(%(terms)s::text[]) AND {a}.fts IS NULL{cond}"""
        single = """
            SELECT occ.key, occ.fts_len, e.phrase, occ.tf::bigint AS f
            FROM occ JOIN q_elem e ON e.term = occ.term AND e.width = 1"""
        several = """
            UNION ALL
            SELECT key, fts_len, phrase, count(*) AS f FROM (
                SELECT occ.id, occ.key, occ.fts_len, e.phrase, p - e.off AS start
                FROM occ JOIN q_elem e ON e.term = occ.term AND e.width > 1
                CROSS JOIN LATERAL unnest(occ.pos) AS p
                GROUP BY occ.id, occ.key, occ.fts_len, e.phrase, p - e.off
                HAVING count(*) = max(e.width)
            ) AS starts GROUP BY id, key, fts_len, phrase"""
        return f"""
        q_elem AS (
            SELECT * FROM unnest(%(e_phrase)s::int[], %(e_offset)s::int[],
                                 %(e_term)s::text[], %(e_width)s::int[])
                AS e(phrase, off, term, width)
        ),
        occ AS {"MATERIALIZED" if multi else "NOT MATERIALIZED"} ({occ}),
        freq AS ({single}{several if multi else ""})"""

    def phrase_df_sql(self, scoped: bool) -> str:
        """``(phrase, df)``: rows (of ``%(scope)s``, or all) holding each phrase at least once.

        For phrases of two or more terms, whose document frequency no term statistic gives.
        """
        where = f"d.{self.scope_column} = %(scope)s" if scoped else ""
        return (
            f"WITH {self._freq_ctes('', where, 'd.id', True)} "
            "SELECT phrase, count(*)::bigint FROM freq GROUP BY phrase"
        )

    def frequencies_sql(self, *, joins: str = "", where: str = "", key: str, alias: str) -> str:
        """``(key, fts_len, phrase, f)`` of every matching row that passes ``where``: what
        BM25 over a narrower corpus (a thread, a document) is computed from by the caller."""
        return (
            f"WITH {self._freq_ctes(joins, where, key, True, alias)} "
            "SELECT key, fts_len, phrase, f FROM freq"
        )

    def ranked_sql(
        self,
        *,
        joins: str = "",
        where: str = "",
        key: str = "d.id",
        multi: bool = True,
        alias: str = "d",
    ) -> str:
        """The matching rows that pass ``where`` with FTS5's ``−bm25()`` score, best first.

        ``joins``/``where`` restrict the rows (searchable, privacy gate, channel) over the
        table aliased ``alias``; ``key`` is the column returned and the tie-break (a text key is
        declared ``COLLATE "C"``: code-point order, like SQLite's). ``multi=False`` is the
        faster statement for queries whose phrases are all single terms. Binds, besides the
        parameters of the phrase frequencies, ``%(idf)s`` (one per phrase), ``%(avgdl)s``,
        ``%(k1)s``, ``%(b)s`` and ``%(limit)s``.
        """
        return f"""
        WITH {self._freq_ctes(joins, where, key, multi, alias)}
        SELECT key, sum(
            (%(idf)s::float8[])[phrase] * ((f * (%(k1)s::float8 + 1.0))
            / (f + %(k1)s::float8 * (1.0 - %(b)s::float8
                + %(b)s::float8 * fts_len / %(avgdl)s::float8)))
        ) AS score
        FROM freq GROUP BY key ORDER BY score DESC, key LIMIT %(limit)s
        """
