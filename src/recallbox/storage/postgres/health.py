"""Index health on PostgreSQL: ``recallbox doctor`` and its repair (DESIGN §4.1).

Per keyword corpus (``T_fts``): its GIN index exists and is valid, its statistics triggers
exist, its per-scope statistics equal what its rows hold (row and token totals, and every
term's document frequency re-derived from ``fts`` and the overflow terms), and
:data:`HEAL_PROBE_SAMPLES` sampled rows are found through the index by a token of their own.
Per literal index (``messages_literal_*``): it exists and is valid, and sampled searchable rows
are found through it by a trigram of their own. Per embedding space: its table exists and its
vectors and their bookkeeping agree.

Repair re-derives every keyword document from its row's text (the tokenizer may have changed,
or a row may have been edited outside recallbox), recreates missing triggers and indexes,
rebuilds the statistics from the rows, reindexes invalid indexes and makes each space's vectors
agree with their bookkeeping. Base rows are never touched.
"""

from __future__ import annotations

from typing import Any

from recallbox.storage.postgres import vectors
from recallbox.storage.postgres.connection import Connection
from recallbox.storage.postgres.corpora import CORPORA, Corpus
from recallbox.storage.postgres.keyword import lexeme_literal
from recallbox.storage.postgres.keyword_sql import KeywordCorpus
from recallbox.storage.postgres.keyword_write import document_of, put_overflow
from recallbox.storage.postgres.schema import (
    FOLD_FUNCTION,
    LITERAL_COLUMNS,
    literal_index_name,
    literal_index_sql,
)
from recallbox.storage.postgres.visibility import MESSAGE_VISIBLE_SQL
from recallbox.text.cjk import has_cjk
from recallbox.types import IndexHealth

HEAL_PROBE_SAMPLES = 20
TRIGRAM_CHARS = 3
#: Rows whose keyword documents one repair statement rewrites.
REPAIR_BATCH = 500
REEMBED_HINT = "run `recallbox doctor --repair`, then `recallbox embed --all`"
#: The text each corpus's keyword document is made of (``True``: already segmented).
_SOURCES = {
    "messages": ("m.content", False),
    "transcript_chunks": ("c.content", False),
    "knowledge_sections": ("CASE WHEN k.removed THEN '' ELSE k.content END", False),
    "memory_entries": ("me.content", False),
    "code_symbols": ("s.content_seg", True),
}


def _one(conn: Connection, sql: str, params: Any = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


def index_valid(conn: Connection, name: str) -> bool | None:
    """``None`` when the index is missing, else whether the server counts it valid."""
    row = conn.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        (name,),
    ).fetchone()
    return None if row is None else bool(row[0])


def _trigger_names(k: KeywordCorpus) -> set[str]:
    names = {f"{k.table}_fts_stats_{op}" for op in ("insert", "update", "delete")}
    return names | {f"{k.overflow}_stats_{op}" for op in ("insert", "delete")}


def _triggers_ok(conn: Connection, k: KeywordCorpus) -> bool:
    rows = conn.execute(
        "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN "
        "(%s::regclass, %s::regclass)",
        (k.table, k.overflow),
    ).fetchall()
    return _trigger_names(k) <= {str(r[0]) for r in rows}


def _derived_terms_sql(k: KeywordCorpus) -> str:
    """``(term, scope_id, df)`` re-derived from the rows (what the statistics must hold)."""
    return (
        "SELECT term, scope_id, count(*)::bigint AS df FROM ("
        f'SELECT u.term COLLATE "C" AS term, r.{k.scope_column} AS scope_id FROM {k.table} r '
        "CROSS JOIN LATERAL unnest(tsvector_to_array(r.fts)) AS u(term) WHERE r.fts IS NOT NULL "
        f"UNION ALL SELECT term, scope_id FROM {k.overflow}) AS x GROUP BY term, scope_id"
    )


def _derived_scopes_sql(k: KeywordCorpus) -> str:
    return (
        f"SELECT {k.scope_column} AS scope_id, count(*)::bigint, sum(fts_len)::bigint "
        f"FROM {k.table} GROUP BY {k.scope_column}"
    )


def _statistics_problems(conn: Connection, k: KeywordCorpus) -> list[str]:
    problems = []
    scopes = _one(
        conn,
        f"SELECT count(*) FROM ({_derived_scopes_sql(k)}) AS a(scope_id, n_docs, n_tokens) "
        f"FULL JOIN {k.scopes} b USING (scope_id) WHERE a.n_docs IS DISTINCT FROM b.n_docs "
        "OR a.n_tokens IS DISTINCT FROM b.n_tokens",
    )
    if scopes:
        problems.append(f"{scopes} scopes' row or token counts disagree with the rows")
    terms = _one(
        conn,
        f"SELECT count(*) FROM ({_derived_terms_sql(k)}) AS a FULL JOIN {k.terms} b "
        "USING (term, scope_id) WHERE a.df IS DISTINCT FROM b.df",
    )
    if terms:
        problems.append(f"{terms} term frequencies disagree with the rows")
    return problems


def _probe_keyword(conn: Connection, c: Corpus) -> tuple[int, int]:
    source, segmented = _SOURCES[c.table]
    rows = conn.execute(
        f"SELECT {c.alias}.id, {source} FROM {c.table} {c.alias} WHERE {c.alias}.fts IS NOT NULL "
        f"AND {c.alias}.fts_len > 0 ORDER BY random() LIMIT %s",
        (HEAL_PROBE_SAMPLES,),
    ).fetchall()
    probes = misses = 0
    for rowid, text in rows:
        doc = document_of(str(text), segmented=segmented)
        if not doc.terms:
            continue
        cjk = [term for term, _ in doc.terms if has_cjk(term)]
        probes += 1
        found = conn.execute(
            f"SELECT 1 FROM {c.table} WHERE fts @@ %s::tsquery AND id = %s",
            (lexeme_literal(cjk[0] if cjk else doc.terms[0][0]), rowid),
        ).fetchone()
        misses += found is None
    return probes, misses


def check_keyword(conn: Connection, c: Corpus) -> IndexHealth:
    k = c.keyword
    name = f"{k.table}_fts"
    valid = index_valid(conn, name)
    content_rows = int(_one(conn, f"SELECT count(*) FROM {k.table}") or 0)
    index_rows = int(_one(conn, f"SELECT coalesce(sum(n_docs), 0) FROM {k.scopes}") or 0)
    problems = [] if valid else [f"index {name} is " + ("missing" if valid is None else "invalid")]
    problems += _statistics_problems(conn, k)
    probes, misses = _probe_keyword(conn, c) if valid else (0, 0)
    return IndexHealth(
        table=name,
        integrity_ok=not problems,
        probe_ok=misses == 0,
        probes=probes,
        probe_misses=misses,
        content_rows=content_rows,
        index_rows=index_rows,
        triggers_ok=_triggers_ok(conn, k),
        detail="; ".join(problems),
    )


def check_literal(conn: Connection, column: str) -> IndexHealth:
    name = literal_index_name(column)
    valid = index_valid(conn, name)
    rows = int(_one(conn, f"SELECT count(*) FROM messages m WHERE {MESSAGE_VISIBLE_SQL}") or 0)
    probes = misses = 0
    if valid:
        sample = conn.execute(
            f"SELECT m.id, m.{column} FROM messages m WHERE {MESSAGE_VISIBLE_SQL} "
            f"AND length(m.{column}) >= {TRIGRAM_CHARS} ORDER BY random() LIMIT %s",
            (HEAL_PROBE_SAMPLES,),
        ).fetchall()
        for rowid, text in sample:
            piece = str(text).strip()[:TRIGRAM_CHARS]
            if len(piece) < TRIGRAM_CHARS:
                continue
            probes += 1
            pattern = (
                "%" + piece.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            )
            found = conn.execute(
                f"SELECT 1 FROM messages m WHERE {MESSAGE_VISIBLE_SQL} AND m.id = %s AND "
                f"{FOLD_FUNCTION}(m.{column}) LIKE {FOLD_FUNCTION}(%s)",
                (rowid, pattern),
            ).fetchone()
            misses += found is None
    return IndexHealth(
        table=name,
        integrity_ok=bool(valid),
        probe_ok=misses == 0,
        probes=probes,
        probe_misses=misses,
        content_rows=rows,
        index_rows=rows if valid else 0,
        triggers_ok=True,
        detail="" if valid else f"index {name} is " + ("missing" if valid is None else "invalid"),
    )


def check_vectors(conn: Connection, space_id: int, owner: str) -> IndexHealth:
    table = vectors.table_name(space_id)
    booked = int(_one(conn, "SELECT count(*) FROM embeddings WHERE space_id = %s", (space_id,)))
    if not vectors.table_exists(conn, space_id):
        return IndexHealth(
            table, False, True, 0, 0, booked, 0, True, f"vector table is missing; {REEMBED_HINT}"
        )
    stored = int(_one(conn, f"SELECT count(*) FROM {table}"))
    unbacked = int(
        _one(
            conn,
            f"SELECT count(*) FROM embeddings e WHERE e.space_id = %s AND NOT EXISTS "
            f"(SELECT 1 FROM {table} v WHERE v.target_id = e.target_rowid)",
            (space_id,),
        )
    )
    target = CORPORA[owner].table if owner in CORPORA else None
    orphans = 0
    if target is not None:
        orphans = int(
            _one(
                conn,
                f"SELECT count(*) FROM embeddings e WHERE e.space_id = %s AND NOT EXISTS "
                f"(SELECT 1 FROM {target} x WHERE x.id = e.target_rowid)",
                (space_id,),
            )
        )
    problems = []
    if unbacked:
        problems.append(f"{unbacked} bookkept vectors are missing")
    if stored - (booked - unbacked):
        problems.append(f"{stored - (booked - unbacked)} vectors have no bookkeeping")
    if orphans:
        problems.append(f"{orphans} vectors belong to rows that are gone")
    detail = "; ".join(problems) + (f"; {REEMBED_HINT}" if problems else "")
    return IndexHealth(
        table, not problems, True, 0, 0, booked, booked if not problems else stored, True, detail
    )


def check_all(conn: Connection) -> list[IndexHealth]:
    """Every index's health: keyword corpora, the literal index, the vector spaces."""
    out = [check_keyword(conn, c) for c in CORPORA.values()]
    out += [check_literal(conn, column) for column in LITERAL_COLUMNS]
    out += [check_vectors(conn, space_id, owner) for space_id, owner, _ in vectors.spaces(conn)]
    return out


# -- repair ----------------------------------------------------------------------------------
def _rederive(conn: Connection, c: Corpus) -> int:
    """Rewrite the keyword document of every row whose stored one differs from what its text
    gives now (and every row's overflow terms); returns the rows changed."""
    source, segmented = _SOURCES[c.table]
    k = c.keyword
    changed = 0
    after = 0
    while True:
        rows = conn.execute(
            f"SELECT {c.alias}.id, {c.alias}.{k.scope_column}, {source} FROM {c.table} {c.alias} "
            f"WHERE {c.alias}.id > %s ORDER BY {c.alias}.id LIMIT %s",
            (after, REPAIR_BATCH),
        ).fetchall()
        if not rows:
            return changed
        after = int(rows[-1][0])
        docs = [(int(r[0]), int(r[1]), document_of(str(r[2]), segmented=segmented)) for r in rows]
        changed += len(
            conn.execute(
                f"UPDATE {k.table} t SET fts = v.fts::tsvector, fts_len = v.len FROM "
                "unnest(%s::bigint[], %s::text[], %s::int[]) AS v(id, fts, len) WHERE t.id = v.id "
                "AND (t.fts IS DISTINCT FROM v.fts::tsvector OR t.fts_len <> v.len) RETURNING t.id",
                (
                    [rowid for rowid, _, _ in docs],
                    [doc.tsvector for _, _, doc in docs],
                    [doc.length for _, _, doc in docs],
                ),
            ).fetchall()
        )
        put_overflow(conn, k, docs, replace=True)


def _rebuild_statistics(conn: Connection, k: KeywordCorpus) -> None:
    conn.execute(f"DELETE FROM {k.scopes}")
    conn.execute(f"DELETE FROM {k.terms}")
    conn.execute(f"INSERT INTO {k.scopes} (scope_id, n_docs, n_tokens) {_derived_scopes_sql(k)}")
    conn.execute(f"INSERT INTO {k.terms} (term, scope_id, df) {_derived_terms_sql(k)}")


def _recreate_triggers(conn: Connection, k: KeywordCorpus) -> None:
    for statement in k.ddl():
        if "TRIGGER" in statement or "FUNCTION" in statement:
            conn.execute(statement.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"))


def repair_keyword(conn: Connection, c: Corpus) -> str:
    k = c.keyword
    name = f"{k.table}_fts"
    valid = index_valid(conn, name)
    if not _triggers_ok(conn, k):
        for trigger in _trigger_names(k):
            table = k.overflow if trigger.startswith(k.overflow) else k.table
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
        _recreate_triggers(conn, k)
    changed = _rederive(conn, c)
    _rebuild_statistics(conn, k)
    if valid is None:
        conn.execute(f"CREATE INDEX {name} ON {k.table} USING gin (fts)")
    elif not valid:
        conn.execute(f"REINDEX INDEX {name}")
    return f"{name}: rebuilt ({changed} rows re-tokenised, statistics recomputed)"


def repair_literal(conn: Connection, column: str) -> str | None:
    name = literal_index_name(column)
    valid = index_valid(conn, name)
    if valid is None:
        conn.execute(literal_index_sql(column))
        return f"{name}: recreated (was missing)"
    if not valid:
        conn.execute(f"REINDEX INDEX {name}")
        return f"{name}: rebuilt"
    return None


def repair_vectors(conn: Connection, space_id: int, owner: str, dim: int) -> str | None:
    if check_vectors(conn, space_id, owner).healthy:
        return None
    table = vectors.table_name(space_id)
    missing = not vectors.table_exists(conn, space_id)
    vectors.create_table(conn, space_id, dim)
    target = CORPORA[owner].table
    before = int(_one(conn, "SELECT count(*) FROM embeddings WHERE space_id = %s", (space_id,)))
    conn.execute(
        f"DELETE FROM {table} v WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.space_id = "
        f"%s AND e.target_rowid = v.target_id) OR NOT EXISTS (SELECT 1 FROM {target} x "
        "WHERE x.id = v.target_id)",
        (space_id,),
    )
    conn.execute(
        f"DELETE FROM embeddings e WHERE e.space_id = %s AND (NOT EXISTS (SELECT 1 FROM {table} v "
        f"WHERE v.target_id = e.target_rowid) OR NOT EXISTS (SELECT 1 FROM {target} x "
        "WHERE x.id = e.target_rowid))",
        (space_id,),
    )
    vectors.bump_version(conn, space_id)
    after = int(_one(conn, "SELECT count(*) FROM embeddings WHERE space_id = %s", (space_id,)))
    what = "recreated (was missing)" if missing else "made to agree"
    return f"{table}: {what}; {before - after} vectors to re-embed (`recallbox embed --all`)"


def repair_all(conn: Connection) -> list[str]:
    """Repair every index; one line per repair."""
    lines = [repair_keyword(conn, c) for c in CORPORA.values()]
    lines += [line for column in LITERAL_COLUMNS if (line := repair_literal(conn, column))]
    lines += [
        line
        for space_id, owner, dim in vectors.spaces(conn)
        if owner in CORPORA and (line := repair_vectors(conn, space_id, owner, dim))
    ]
    return lines


__all__ = ["check_all", "repair_all"]
