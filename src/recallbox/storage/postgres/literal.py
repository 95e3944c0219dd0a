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
``*_seg``; one character as a prefix), planned the same way (probe, else walk), so a common
character costs memory for one batch of threads, not for its every match; ``recent`` adds the
newest ``recent`` visible messages in scope (the bounded scan), merged into the same order
(``heapq.merge``), a message both matched and recent once.

Rows (with their content) are read a chunk at a time as the caller consumes them, with the
whole visibility rule applied again (a quarantine may commit between two chunks) and, for the
case-sensitive pass, the exact ``strpos`` filter.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from recallbox.storage.codecs import storable
from recallbox.storage.postgres.connection import Connection, PgPool
from recallbox.storage.postgres.corpora import MESSAGES
from recallbox.storage.postgres.keyword import lexeme_literal, phrase_terms, tsquery_literal
from recallbox.storage.postgres.schema import FOLD_FUNCTION
from recallbox.storage.postgres.visibility import (
    MESSAGE_SEARCHABLE_SQL,
    MESSAGE_VISIBLE_SQL,
    thread_gate,
    without_channel,
)
from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.snapshots import forget_with_snapshot
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

    def in_order(self, places: Sequence[Place]) -> list[Place]:
        """``places`` in allowed threads, in search order."""
        return sorted((p for p in places if p[1] in self.rank), key=self.sort_key)


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
    """The candidates of one term in one scope: the rows matching ``condition`` (a sorted list
    ``places``, or a walk when ``places is None``) and the ``tail`` places (the newest
    ``recent`` messages of a short term), in search order and inside the scope."""

    term: str
    condition: str  # SQL over ``messages m``: the term's match (binds ``values``)
    values: tuple[object, ...]
    scope: Scope
    places: list[Place] | None
    tail: list[Place] = field(default_factory=list)


#: The condition of a short term no index holds (its plan has no matches, only ``recent``).
_NO_MATCH = "false"
#: The rows matching a condition in the threads bound first (then the condition's values).
_MATCH_IN = f"{_PLACE} WHERE m.thread_id = ANY(%s::bigint[]) AND {_INDEXED} AND "


def _probe(conn: Connection, plan: Plan) -> Plan:
    """Step 1: at most :data:`SORT_CANDIDATES_MAX` + 1 matches; sorted when no more."""
    if not plan.scope.threads:
        plan.places = []
        return plan
    probe = _places(
        conn,
        _MATCH_IN + plan.condition + " LIMIT %s",
        (plan.scope.threads, *plan.values, SORT_CANDIDATES_MAX + 1),
    )
    if len(probe) <= SORT_CANDIDATES_MAX:
        plan.places = plan.scope.in_order(probe)
    return plan


def plan_term(conn: Connection, term: str, where: SearchFilter) -> Plan:
    """A term of 3+ characters: its rows in the literal index."""
    pattern = like_pattern(term)
    return _probe(conn, Plan(term, _MATCH, (pattern, pattern), load_scope(conn, where), None))


def plan_short(conn: Connection, term: str, where: SearchFilter, recent: int) -> Plan:
    """A term under 3 characters: a CJK term's rows in the keyword index, and the newest
    ``recent`` visible messages in scope (merged into the order by :func:`ordered_ids`)."""
    scope = load_scope(conn, where)
    tail = scope.in_order(_recent(conn, where, recent)) if recent > 0 and scope.threads else []
    source = _cjk_match(term)
    if source is None:
        return Plan(term, _NO_MATCH, (), scope, [], tail)
    condition, values = source
    return _probe(conn, Plan(term, condition, values, scope, None, tail))


def walk(pool: PgPool, plan: Plan) -> Iterator[Place]:
    """Step 2: the matches in search order, a growing batch of threads at a time, lazily."""
    threads = plan.scope.threads
    sql = _MATCH_IN + plan.condition
    start, size = 0, WALK_FIRST_THREADS
    while start < len(threads):
        batch = threads[start : start + size]
        with pool.reading() as conn:
            found = _places(conn, sql, (batch, *plan.values))
        yield from plan.scope.in_order(found)
        start += size
        size *= WALK_GROWTH


def ordered_ids(pool: PgPool, plan: Plan) -> Iterator[int]:
    """Every candidate of ``plan`` in search order, the matches and the ``tail`` merged; a
    message in both comes once (only the tail's ids are remembered: at most ``recent``)."""
    matches = iter(plan.places) if plan.places is not None else walk(pool, plan)
    if not plan.tail:
        yield from (place[0] for place in matches)
        return
    tail_ids = {place[0] for place in plan.tail}
    seen: set[int] = set()
    for rowid, *_ in heapq.merge(matches, plan.tail, key=plan.scope.sort_key):
        if rowid in tail_ids:
            if rowid in seen:
                continue
            seen.add(rowid)
        yield rowid


_plans: dict[tuple[int, str, SearchFilter, int], Plan] = {}
forget_with_snapshot(_plans)  # a snapshot's plans go when it ends


def _plan(pool: PgPool, term: str, where: SearchFilter, recent: int) -> Plan:
    """The term's plan, computed on one snapshot, and kept for the snapshot it was read in
    (``recent`` counts for a term under 3 characters only)."""
    recent = recent if len(term) < TRIGRAM_CHARS else 0
    serial = pool.snapshot_id()
    key = (serial or 0, term, where, recent)
    kept = _plans.get(key) if serial is not None else None
    if kept is not None:  # one lookup: another thread may drop the key meanwhile
        return kept
    with pool.snapshot() as conn:
        if len(term) >= TRIGRAM_CHARS:
            plan = plan_term(conn, term, where)
        else:
            plan = plan_short(conn, term, where, recent)
    if serial is not None:
        if len(_plans) >= PLAN_CACHE_MAX:
            _plans.clear()
        _plans[key] = plan
    return plan


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
    ids = ordered_ids(pool, _plan(pool, query.term, where, recent))
    stream.rows = _read_chunks(pool, query, where, _limited(ids, limit, stream))
    return stream


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
