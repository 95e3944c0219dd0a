"""Thread-search reads on PostgreSQL: literal candidates, complete and in search order
(DESIGN §3.2; the SQLite twin is ``storage/sqlite/literal.py``).

**Terms of 3+ characters** go through the literal index: two partial ``pg_trgm`` GIN indexes
over the case fold ``rb_fold`` (``schema.py``) of ``content`` and ``args_text`` of the
searchable messages. ``rb_fold(column) LIKE rb_fold('%term%')`` (the term's ``\\``, ``%`` and
``_`` escaped; a term longer than :data:`LIKE_PATTERN_MAX_CHARS` by its prefix) is exactly "the
folded text holds the folded term"; the fold maps one character to one and every pair of
characters Python's ``re.IGNORECASE`` equates folds alike, so these rows are a superset of
both passes' matches: **complete**. The plan of a term (kept for the read snapshot, shared by
the case-sensitive and the case-insensitive pass):

1. **probe**: at most :data:`SORT_CANDIDATES_MAX` + 1 matching rows of the allowed threads
   (the gate and the filter applied), with their thread, generation number and ``seq``; when
   there are no more, they are sorted into search order here;
2. **walk** (a common term): the allowed threads in search order, a growing batch of threads
   at a time (:data:`WALK_FIRST_THREADS`, ×:data:`WALK_GROWTH`), each batch's matches sorted
   — lazily, so the caller stops reading once its result is full.

**Shorter terms**: a CJK term through the keyword index's ``tsvector`` (the bigram tokens of
``*_seg``; one character as a prefix), and ``recent`` adds the newest ``recent`` visible
messages in scope (the bounded scan).

Rows (with their content) are read a chunk at a time as the caller consumes them, with the
whole visibility rule applied again (a quarantine may commit between two chunks) and, for the
case-sensitive pass, the exact ``strpos`` filter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from recallbox.storage.codecs import storable
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import MESSAGES
from recallbox.storage.postgres.keyword import lexeme_literal, phrase_terms, tsquery_literal
from recallbox.storage.postgres.schema import FOLD_FUNCTION
from recallbox.storage.postgres.visibility import (
    MESSAGE_KIND_SQL,
    MESSAGE_SEARCHABLE_SQL,
    MESSAGE_VISIBLE_SQL,
    THREAD_ALLOWED_SQL,
    thread_gate,
    without_channel,
)
from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.snapshots import on_snapshot_end
from recallbox.storage.values import CandidateStream, SearchableMessage
from recallbox.text.cjk import has_cjk, is_cjk_char, segment

TRIGRAM_CHARS = 3
FILTER_CHUNK_IDS = 64  # candidates filtered (and their rows read) per query
SORT_CANDIDATES_MAX = 5_000  # past this many, the order is walked instead of sorted
WALK_FIRST_THREADS = 4
WALK_GROWTH = 4
PLAN_CACHE_MAX = 64
#: The literal index is probed with at most this many characters of the term (a prefix).
LIKE_PATTERN_MAX_CHARS = 256

#: The searchable part of the rule: it implies the partial literal indexes' predicate.
_INDEXED = MESSAGE_VISIBLE_SQL
_MATCH = (
    f"({FOLD_FUNCTION}(m.content) LIKE {FOLD_FUNCTION}(%s) "
    f"OR {FOLD_FUNCTION}(m.args_text) LIKE {FOLD_FUNCTION}(%s))"
)
_PLACE = "SELECT m.id, m.thread_id, g.number, m.seq FROM messages m JOIN generations g ON g.id = m.generation_id"
_ROW_SQL = (
    "SELECT m.id, m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls "
    "FROM messages m JOIN threads t ON t.id = m.thread_id "
    f"JOIN generations g ON g.id = m.generation_id WHERE m.id = ANY(%s::bigint[]) "
    f"AND {MESSAGE_SEARCHABLE_SQL}"
)

Place = tuple[int, int, int, int]  # id, thread, generation number, seq


def like_pattern(term: str) -> str:
    """``%term%`` with the term's ``\\``, ``%`` and ``_`` escaped (its prefix when long)."""
    text = term[:LIKE_PATTERN_MAX_CHARS]
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


@dataclass
class Scope:
    """The threads a search may read (the gate and the filter applied), in search order."""

    threads: list[int]
    rank: dict[int, int]

    def sort_key(self, place: Place) -> tuple[int, int, int]:
        return self.rank[place[1]], -place[2], place[3]

    def ordered(self, places: Sequence[Place]) -> list[int]:
        """The ids of ``places`` in allowed threads, in search order."""
        kept = [p for p in places if p[1] in self.rank]
        return [p[0] for p in sorted(kept, key=self.sort_key)]


def load_scope(conn: Connection, where: SearchFilter) -> Scope:
    gate = thread_gate(where)
    rows = conn.execute(
        f"SELECT t.id FROM threads t WHERE true{gate.sql} ORDER BY t.last_activity DESC, t.id DESC",
        gate.params,
    ).fetchall()
    threads = [int(r[0]) for r in rows]
    return Scope(threads, {t: i for i, t in enumerate(threads)})


def _places(conn: Connection, sql: str, params: Sequence[Any]) -> list[Place]:
    return [(int(a), int(b), int(c), int(d)) for a, b, c, d in conn.execute(sql, params).fetchall()]


@dataclass
class Plan:
    """The candidates of one term in one scope: a sorted list, or a walk (``ids is None``)."""

    term: str
    pattern: str
    scope: Scope
    ids: list[int] | None


#: The matching rows of the threads bound first (then the pattern, twice).
_MATCH_IN = f"{_PLACE} WHERE m.thread_id = ANY(%s::bigint[]) AND {_INDEXED} AND {_MATCH}"


def plan_term(conn: Connection, term: str, where: SearchFilter) -> Plan:
    scope = load_scope(conn, where)
    pattern = like_pattern(term)
    if not scope.threads:
        return Plan(term, pattern, scope, [])
    probe = _places(
        conn, _MATCH_IN + " LIMIT %s", (scope.threads, pattern, pattern, SORT_CANDIDATES_MAX + 1)
    )
    if len(probe) > SORT_CANDIDATES_MAX:
        return Plan(term, pattern, scope, None)
    return Plan(term, pattern, scope, scope.ordered(probe))


def walk(pool: PgPool, plan: Plan) -> Iterator[int]:
    """Step 2: the matches in search order, a growing batch of threads at a time, lazily."""
    threads = plan.scope.threads
    start, size = 0, WALK_FIRST_THREADS
    while start < len(threads):
        batch = threads[start : start + size]
        with pool.reading() as conn:
            found = _places(conn, _MATCH_IN, (batch, plan.pattern, plan.pattern))
        yield from plan.scope.ordered(found)
        start += size
        size *= WALK_GROWTH


_plans: dict[tuple[int, str, SearchFilter], Plan] = {}


def _plan(pool: PgPool, term: str, where: SearchFilter) -> Plan:
    """The term's plan, computed on one snapshot, and kept for the snapshot it was read in."""
    serial = pool.snapshot_id()
    key = (serial or 0, term, where)
    kept = _plans.get(key) if serial is not None else None
    if kept is not None:  # one lookup: another thread may drop the key meanwhile
        return kept
    with pool.snapshot() as conn:
        plan = plan_term(conn, term, where)
    if serial is not None:
        if len(_plans) >= PLAN_CACHE_MAX:
            _plans.clear()
        _plans[key] = plan
    return plan


@on_snapshot_end
def _forget_plans(serial: int) -> None:
    """Drop the plans of the snapshot ``serial`` (it ended; ``storage/snapshots.py``)."""
    for key in list(_plans):
        if key[0] == serial:
            _plans.pop(key, None)


def _limited(ids: Iterator[int], limit: int | None, stream: CandidateStream) -> Iterator[int]:
    if limit is None:
        yield from ids
        return
    for count, value in enumerate(ids):
        if count >= limit:
            stream.truncated = True
            return
        yield value


def _row(row: Sequence[Any]) -> SearchableMessage:
    return SearchableMessage(
        id=row[1],
        channel=row[2],
        generation=int(row[3]),
        seq=int(row[4]),
        role=row[5],
        content=row[6],
        tool_calls=json.loads(row[7]) if row[7] is not None else None,
    )


def _read_chunks(
    pool: PgPool, query: LiteralQuery, where: SearchFilter, ids: Iterator[int]
) -> Iterator[SearchableMessage]:
    """The rows of ``ids`` that pass the rule, the filter and (case-sensitive) the exact
    filter, in the order of ``ids``, a chunk at a time."""
    narrow = MESSAGES.narrow(where)
    exact = ""
    values: tuple[object, ...] = ()
    if query.case_sensitive:
        exact = " AND (strpos(m.content, %s) > 0 OR strpos(m.args_text, %s) > 0)"
        values = (query.term, query.term)
    sql = _ROW_SQL + exact + narrow.sql
    while chunk := list(islice(ids, FILTER_CHUNK_IDS)):
        with pool.reading() as conn:
            rows = conn.execute(sql, (chunk, *values, *narrow.params)).fetchall()
        found = {int(r[0]): r for r in rows}
        for rowid in chunk:
            row = found.get(rowid)
            if row is not None:
                yield _row(row)


def literal_candidates(
    pool: PgPool,
    query: LiteralQuery,
    *,
    where: SearchFilter,
    limit: int | None = None,
    recent: int = 0,
) -> CandidateStream:
    """See :meth:`recallbox.storage.base.LiteralSearch.literal_candidates`."""
    MESSAGES.narrow(where)  # an unsupported filter raises now, not when the stream is read
    stream = CandidateStream()
    if not storable(query.term) or (where.channel is not None and not storable(where.channel)):
        return stream
    if len(query.term) >= TRIGRAM_CHARS:
        plan = _plan(pool, query.term, where)
        ids = iter(plan.ids) if plan.ids is not None else walk(pool, plan)
        stream.rows = _read_chunks(pool, query, where, _limited(ids, limit, stream))
        return stream
    ordered = _short_term_ids(pool, query.term, where, recent)
    stream.rows = _read_chunks(pool, query, where, _limited(iter(ordered), limit, stream))
    return stream


def _short_term_ids(pool: PgPool, term: str, where: SearchFilter, recent: int) -> list[int]:
    """Candidates of a term under 3 characters in search order: a CJK term's rows in the
    keyword index, and the newest ``recent`` visible messages in scope."""
    narrow = MESSAGES.narrow(where)
    base = (
        f"{_PLACE} JOIN threads t ON t.id = m.thread_id WHERE {MESSAGE_KIND_SQL} "
        f"AND {THREAD_ALLOWED_SQL}{narrow.sql}"
    )
    places: list[Place] = []
    with pool.snapshot() as conn:
        scope = load_scope(conn, where)
        if not scope.threads:
            return []
        source = _cjk_match(term)
        if source is not None:
            condition, values = source
            places += _places(conn, f"{base} AND {condition}", (*narrow.params, *values))
        if recent > 0:
            places += _recent(conn, where, recent)
    return list(dict.fromkeys(scope.ordered(places)))


def _cjk_match(term: str) -> tuple[str, tuple[object, ...]] | None:
    """The keyword-index condition holding a short CJK term (bigram tokens), or ``None``."""
    if not has_cjk(term):
        return None
    cjk = "".join(c for c in term if is_cjk_char(c))
    terms = phrase_terms(segment(cjk))
    if not terms:
        return None
    if len(cjk) >= 2:
        tsq = tsquery_literal([terms])
        overflow = "o.term = ANY(%s::text[])"
        values: tuple[object, ...] = (tsq, list(terms))
    else:
        tsq = f"{lexeme_literal(terms[0])}:*"  # a prefix query
        overflow = "starts_with(o.term, %s)"
        values = (tsq, terms[0])
    condition = (
        f"(m.fts @@ %s::tsquery OR (m.fts IS NULL AND EXISTS (SELECT 1 FROM "
        f"messages_fts_overflow o WHERE o.doc_id = m.id AND {overflow})))"
    )
    return condition, values


def _recent(conn: Connection, where: SearchFilter, recent: int) -> list[Place]:
    """The newest ``recent`` visible messages in scope (a thread's by seq, else by id)."""
    narrow = MESSAGES.narrow(without_channel(where))
    base = (
        f"{_PLACE} JOIN threads t ON t.id = m.thread_id WHERE {MESSAGE_SEARCHABLE_SQL}{narrow.sql}"
    )
    if where.channel is None:
        return _places(conn, f"{base} ORDER BY m.id DESC LIMIT %s", (*narrow.params, recent))
    return _places(
        conn,
        f"{base} AND m.thread_id = (SELECT id FROM threads WHERE channel = %s) "
        "ORDER BY m.seq DESC LIMIT %s",
        (*narrow.params, where.channel, recent),
    )
