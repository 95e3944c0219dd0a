"""Thread-search reads on SQLite: literal candidates, complete and in search order (DESIGN §3.2).

Two steps, the second lazy:

1. **Candidate keys in search order, reading no content.** A term of 3+ characters: the
   literal index (``literal_plan.py``: a cheap trigram probe, the whole term as a phrase, or a
   walk of the order one generation at a time), plus the rows not indexed yet, scanned
   exactly. Every candidate is found: there is no candidate cap. The plan of a term is kept
   for the read snapshot, so the case-insensitive pass reuses the case-sensitive one's.
   Under 3 characters, CJK: the bigram index ``messages_fts`` (content only; a single CJK
   character is a prefix query), sorted in SQL when few, else intersected with a walk of the
   ``(generation_id, seq)`` index. ``recent`` adds the newest searchable messages in scope, for
   short terms no index holds (the caller says so in its result).
2. **An exact filter inside SQLite, chunk by chunk, in that order.** The case-sensitive pass:
   ``instr`` of the whole term (exact); the other: ``LIKE '%term%'`` — no ``ESCAPE`` (``%``
   and ``_`` in the term are then wildcards, which only widens the set), ASCII case folded —
   plus the whole visibility rule again (``visibility.py``: the rows are read after step 1,
   and a quarantine or an exclusion may have committed in between; a search normally runs in
   one snapshot). A case-insensitive pass for a term with non-ASCII cased letters (``Ärger``)
   skips ``LIKE``, which folds ASCII only. ``LIKE`` filters terms longer than
   :data:`LIKE_PATTERN_MAX_CHARS` by their prefix. The caller rechecks every row exactly.

Rows (with their possibly large content) are filtered and fetched a small chunk at a time as
the caller consumes them, so a common term costs the first chunks only. The stream's
``holders(n)`` reads, for the "more hits" count, up to ``n`` ids of visible messages that
surely hold the term (an exact phrase of the index).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any

import apsw

from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.literal_index import SEQ_MASK, THREAD_SHIFT, key_sql, keys_to_uids
from recallbox.storage.sqlite.literal_plan import (
    LIKE_PATTERN_MAX_CHARS,
    TRIGRAM_CHARS,
    KeyFeed,
    Plan,
    holder_keys,
    like_pattern,
    load_scope,
    plan_term,
)
from recallbox.storage.sqlite.match import quote_phrase
from recallbox.storage.sqlite.visibility import (
    MESSAGE_KIND_SQL,
    MESSAGE_SEARCHABLE_SQL,
    THREAD_ALLOWED_SQL,
    thread_gate,
    without_channel,
)
from recallbox.storage.values import CandidateStream, SearchableMessage
from recallbox.text.cjk import has_cjk, is_cjk_char, segment

FILTER_CHUNK_IDS = 64  # candidates filtered (and their rows read) per query
#: Rows longer than this (content and argument text) are filtered by the caller's recheck only.
SQL_FILTER_MAX_CHARS = 4_096
SORT_CANDIDATES_MAX = 20_000  # short terms: above this many, walk the order instead of sorting
PLAN_CACHE_MAX = 64  # term plans kept for the open read snapshots
ROW_CACHE_MAX_CHARS = 8_000_000  # message text kept for the passes of one search

SEARCH_ORDER = "t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"
SEARCH_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)
ROW_COLUMNS = "m.id, m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls"
BY_KEY_FROM = (
    "json_each(?1) AS j CROSS JOIN messages m ON m.thread_id = (j.value >> "
    f"{THREAD_SHIFT}) AND m.seq = (j.value & {SEQ_MASK}) JOIN threads t ON t.id = m.thread_id "
    "JOIN generations g ON g.id = m.generation_id"
)

__all__ = [
    "LIKE_PATTERN_MAX_CHARS",
    "SQL_FILTER_MAX_CHARS",
    "bigram_match",
    "filter_sql",
    "has_non_ascii_case",
    "index_source",
    "like_pattern",
    "literal_candidates",
    "recent_source",
    "sorted_sql",
]


def has_non_ascii_case(term: str) -> bool:
    """True when ``term`` holds a non-ASCII letter that has another case (``LIKE`` won't fold)."""
    return any(ord(c) > 0x7F and (c.lower() != c or c.upper() != c) for c in term)


def bigram_match(term: str) -> str:
    """An FTS5 ``MATCH`` for a CJK term under 3 characters, on the bigram-segmented index."""
    cjk = "".join(c for c in term if is_cjk_char(c))
    if len(cjk) >= 2:
        return quote_phrase(segment(cjk))
    return quote_phrase(cjk) + "*"


# -- reading ------------------------------------------------------------------------------------


def _fetch(pool: ConnectionPool, sql: str, params: Sequence[Any]) -> list[Any]:
    with pool.reading() as conn:
        try:
            return conn.execute(sql, params).fetchall()
        except apsw.SQLError as exc:
            # Trigger: FTS5 rejects an expression built from user text.
            # Why: terms are always quoted, so this is a tokenizer corner, not a caller error.
            # Outcome: no candidates for this lookup, never an exception to the caller.
            if "fts5" not in str(exc):
                raise
            return []


def _ids(pool: ConnectionPool, sql: str, params: Sequence[Any]) -> list[int]:
    return [int(r[0]) for r in _fetch(pool, sql, params)]


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


def text_filter(term: str, *, case_sensitive: bool, first: int) -> tuple[str, list[Any]]:
    """The conditions on ``m.content``/``m.args_text`` (numbered from ``?<first>``) that every
    row holding ``term`` passes, and their values.

    Case-sensitive: ``instr`` of the whole term, exact. Otherwise ``LIKE`` (ASCII case folded;
    faster than ``instr`` over ``lower()`` on ordinary text) for a term without non-ASCII
    cased letters. Both compare at every offset where the term's first character is, so a
    term that starts with a run of one character costs them several comparisons per
    character of a long run of it (``xxxx keyword`` in 60 000 ``x``: ``LIKE`` 30x its cost for
    ``keyword``); for such a term a row longer than :data:`SQL_FILTER_MAX_CHARS` passes
    unfiltered to the caller's exact recheck (``str.find``, which skips ahead).
    """
    if case_sensitive:
        condition = f"instr(m.content, ?{first}) > 0 OR instr(m.args_text, ?{first}) > 0"
        value = term
    elif has_non_ascii_case(term):
        return "", []
    else:
        condition = f"m.content LIKE ?{first} OR m.args_text LIKE ?{first}"
        value = like_pattern(term)
    if term[:1] * 2 != term[:2]:
        return f" AND ({condition})", [value]
    long_row = f"length(m.content) + coalesce(length(m.args_text), 0) > ?{first + 1}"
    return f" AND ({long_row} OR {condition})", [value, SQL_FILTER_MAX_CHARS]


class Pending:
    """Rows of the chunk being handed out that the caller has not taken yet, and whether the
    next key costs a large read (``costly``: a chunk then stops short of it)."""

    def __init__(self, costly: Callable[[], bool]) -> None:
        self.rows = 0
        self.costly = costly


def _read_chunks(
    pool: ConnectionPool,
    query: LiteralQuery,
    where: SearchFilter,
    ids: Iterator[int],
    by_key: bool,
    pending: Pending | None = None,
) -> Iterator[SearchableMessage]:
    """The rows of ``ids`` (message keys, or row ids) that pass the filter and the rule, in
    the order of ``ids``, a chunk at a time. Rows of keys read earlier in the same snapshot
    (another pass, another term) come from :class:`RowCache` unfiltered: the caller rechecks
    every row."""
    cache = RowCache.of(pool, where) if by_key else None
    while chunk := _chunk(ids, pending):
        missing = chunk if cache is None else [key for key in chunk if key not in cache.rows]
        found: dict[Any, SearchableMessage] = {}
        if missing and by_key:
            text, values = text_filter(query.term, case_sensitive=query.case_sensitive, first=2)
            narrow = MESSAGES.narrow(where, first=2 + len(values))
            sql = (
                f"SELECT {key_sql('m')}, {ROW_COLUMNS.split(', ', 1)[1]} FROM {BY_KEY_FROM} "
                f"WHERE {MESSAGE_SEARCHABLE_SQL}{text}{narrow.sql}"
            )
            params: tuple[Any, ...] = (json.dumps(missing), *values, *narrow.params)
            found = {r[0]: _row(r) for r in _fetch(pool, sql, params)}
        elif missing:
            sql, rest = filter_sql(
                query.term, case_sensitive=query.case_sensitive, ids=len(missing), where=where
            )
            found = {r[0]: _row(r) for r in _fetch(pool, sql, (*missing, *rest))}
        if cache is not None:
            cache.keep(found)
        rows = [row for key in chunk if (row := found.get(key) or _cached(cache, key))]
        for at, row in enumerate(rows):
            if pending is not None:
                pending.rows = len(rows) - at - 1
            yield row


def _chunk(ids: Iterator[int], pending: Pending | None) -> list[int]:
    """The next :data:`FILTER_CHUNK_IDS` ids, or fewer when the next one is costly to reach
    (the caller decides, between two chunks, whether to read on)."""
    if pending is None:
        return list(islice(ids, FILTER_CHUNK_IDS))
    chunk: list[int] = []
    while len(chunk) < FILTER_CHUNK_IDS and not (chunk and pending.costly()):
        key = next(ids, None)
        if key is None:
            break
        chunk.append(key)
    return chunk


def _cached(cache: RowCache | None, key: int) -> SearchableMessage | None:
    return cache.rows.get(key) if cache is not None else None


class RowCache:
    """Rows read in one read snapshot, by message key, up to :data:`ROW_CACHE_MAX_CHARS` of
    text: the case-insensitive pass of a term and the later terms of a search read a common
    row once. Only the newest snapshot's rows are kept (a search reads one snapshot)."""

    _current: tuple[tuple[int, SearchFilter], RowCache] | None = None

    def __init__(self) -> None:
        self.rows: dict[int, SearchableMessage] = {}
        self.chars = 0

    @classmethod
    def of(cls, pool: ConnectionPool, where: SearchFilter) -> RowCache | None:
        """The cache of the snapshot open on this thread (None outside one)."""
        serial = pool.snapshot_id()
        if serial is None:
            return None
        current = cls._current
        if current is not None and current[0] == (serial, where):
            return current[1]
        cache = cls()
        cls._current = ((serial, where), cache)
        return cache

    def keep(self, rows: dict[Any, SearchableMessage]) -> None:
        for key, row in rows.items():
            size = len(row.content)
            if self.chars + size > ROW_CACHE_MAX_CHARS:
                return
            self.rows[int(key)] = row
            self.chars += size


# -- terms of 3+ characters: the literal index ---------------------------------------------------

_plans: dict[tuple[int, str, SearchFilter], Plan] = {}


def _plan(pool: ConnectionPool, term: str, where: SearchFilter) -> Plan:
    """The term's plan, computed on one snapshot, and kept for the snapshot it was read in."""
    serial = pool.snapshot_id()
    cache_key = (serial or 0, term, where)
    if serial is not None and cache_key in _plans:
        return _plans[cache_key]
    with pool.snapshot() as conn:
        scope = load_scope(conn, where)
        plan = plan_term(pool, conn, term, where, scope)
    if serial is not None:
        if len(_plans) >= PLAN_CACHE_MAX:
            _plans.clear()
        _plans[cache_key] = plan
    return plan


def _holders(pool: ConnectionPool, plan: Plan, limit: int) -> list[str]:
    """The term's holders, read once per plan: the case-sensitive and -insensitive passes of
    a term share its plan, so the second asks the same (costly for a phrase of a repeated
    trigram) question."""
    if limit not in plan.holders:
        with pool.reading() as conn:
            plan.holders[limit] = keys_to_uids(conn, holder_keys(conn, plan, limit))
    return plan.holders[limit]


def _limited(ids: Iterator[int], limit: int | None, stream: CandidateStream) -> Iterator[int]:
    """``ids`` stopped after ``limit`` (``truncated`` set when more were left)."""
    if limit is None:
        yield from ids
        return
    for count, value in enumerate(ids):
        if count >= limit:
            stream.truncated = True
            return
        yield value


def literal_candidates(
    pool: ConnectionPool,
    query: LiteralQuery,
    *,
    where: SearchFilter,
    limit: int | None = None,
    recent: int = 0,
) -> CandidateStream:
    """See :meth:`recallbox.storage.base.LiteralSearch.literal_candidates`."""
    MESSAGES.narrow(where)  # an unsupported filter raises now, not when the stream is first read
    stream = CandidateStream()
    if len(query.term) >= TRIGRAM_CHARS:
        plan = _plan(pool, query.term, where)
        feed = KeyFeed(plan)
        pending = Pending(feed.costly)
        stream.rows = _read_chunks(
            pool, query, where, _limited(feed, limit, stream), by_key=True, pending=pending
        )
        stream.holders = lambda n: _holders(pool, plan, n)
        stream.costly = lambda: pending.rows == 0 and feed.costly()
        return stream
    ids = ordered_candidate_ids(
        pool, query.term, where=where, limit=limit, recent=recent, stream=stream
    )
    stream.rows = _read_chunks(pool, query, where, ids, by_key=False)
    return stream


# -- terms under 3 characters: the bigram index and the bounded recent scan ----------------------

Query = tuple[str, tuple[Any, ...]]
"""A statement and the values it binds."""


def index_source(term: str) -> Query | None:
    """The doclist query (``SELECT rowid …``) of a short CJK term, or None (no index holds it)."""
    if len(term) < TRIGRAM_CHARS and has_cjk(term):
        sql = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?"
        return sql, (bigram_match(term),)
    return None


def recent_source(where: SearchFilter, recent: int) -> Query:
    """The ids of the newest ``recent`` visible messages in scope.

    With a channel it walks that thread's ``(thread_id, seq)`` index backwards; without one,
    the message table's rowid backwards. Either way it stops after ``recent`` rows.
    """
    narrow = MESSAGES.narrow(without_channel(where))
    if where.channel is None:
        return (
            f"SELECT m.id FROM {SEARCH_FROM} WHERE {MESSAGE_SEARCHABLE_SQL}{narrow.sql} "
            "ORDER BY m.id DESC LIMIT ?"
        ), (*narrow.params, recent)
    return (
        f"SELECT m.id FROM {SEARCH_FROM} WHERE {MESSAGE_SEARCHABLE_SQL}{narrow.sql} "
        "AND m.thread_id = (SELECT id FROM threads WHERE channel = ?) ORDER BY m.seq DESC LIMIT ?"
    ), (*narrow.params, where.channel, recent)


def sorted_sql(ids: set[int], where: SearchFilter, limit: int | None = None) -> Query:
    """``ids`` that pass the kind part of the rule, the gate and ``where``, in search order
    (row lookups by id; at most ``limit``).

    The flags stored after the content (visibility, pending, superseded) are checked by
    :func:`filter_sql` on the rows the caller actually reads, where the content is read anyway.
    """
    narrow = MESSAGES.narrow(where)
    # CROSS JOIN keeps the id list as the outer loop (SQLite never reorders it): the cost
    # follows the candidates, never the size of the thread.
    sql = (
        "SELECT m.id FROM json_each(?) AS j CROSS JOIN messages m ON m.id = j.value "
        "JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id "
        f"WHERE {MESSAGE_KIND_SQL} AND {THREAD_ALLOWED_SQL}{narrow.sql} "
        f"ORDER BY {SEARCH_ORDER} LIMIT ?"
    )
    return sql, (json.dumps(sorted(ids)), *narrow.params, -1 if limit is None else limit)


def _generations_in_order(pool: ConnectionPool, where: SearchFilter) -> list[int]:
    """Generation ids of the threads in scope the privacy gate allows, in search order."""
    gate = thread_gate(where)
    sql = (
        f"SELECT g.id FROM generations g JOIN threads t ON t.id = g.thread_id WHERE 1{gate.sql} "
        "ORDER BY t.last_activity DESC, t.id DESC, g.number DESC"
    )
    return [int(r[0]) for r in _fetch(pool, sql, gate.params)]


def _walk(pool: ConnectionPool, members: set[int], where: SearchFilter) -> Iterator[int]:
    """``members`` in search order, walking the ``(generation_id, seq)`` index (no table row
    is read), lazily."""
    for generation in _generations_in_order(pool, where):
        ids = _ids(
            pool, "SELECT id FROM messages WHERE generation_id = ? ORDER BY seq", (generation,)
        )
        yield from (rowid for rowid in ids if rowid in members)


def ordered_candidate_ids(
    pool: ConnectionPool,
    term: str,
    *,
    where: SearchFilter,
    limit: int | None = None,
    recent: int = 0,
    stream: CandidateStream | None = None,
) -> Iterator[int]:
    """Candidate ids of a short term in search order: sorted in SQL when few, walked in order
    when many (every one, or the first ``limit``: ``stream.truncated`` says when more were left).

    Each index is read once (its doclist only); nothing is read when no index holds ``term``
    and ``recent`` is 0.
    """
    stream = stream if stream is not None else CandidateStream()
    source = index_source(term)
    members = set(_ids(pool, *source)) if source is not None else set()
    if recent > 0:
        members.update(_ids(pool, *recent_source(where, recent)))
    if not members:
        return iter(())
    if len(members) > SORT_CANDIDATES_MAX:
        # Trigger: a common term (a long doclist).
        # Why: sorting every candidate costs a row lookup each; the caller needs the first.
        # Outcome: walk the search order and stop as soon as the caller is done.
        return _limited(_walk(pool, members, where), limit, stream)
    ordered = _ids(pool, *sorted_sql(members, where, None if limit is None else limit + 1))
    return _limited(iter(ordered), limit, stream)


def filter_sql(
    term: str, *, case_sensitive: bool, ids: int, where: SearchFilter | None = None
) -> tuple[str, list[Any]]:
    """The visible rows of ``ids`` candidates (bound first, as ``?1…``) that may hold ``term``.

    Returns the SQL and the values to bind after the ids. Filter and fetch are one query, so
    the content of a candidate is read once; the whole visibility rule is applied again here
    (the rows are read lazily, after step 1: a quarantine may have committed in between).
    """
    marks = ", ".join(f"?{i}" for i in range(1, ids + 1))
    sql = f"SELECT {ROW_COLUMNS} FROM {SEARCH_FROM} WHERE m.id IN ({marks}) AND {MESSAGE_SEARCHABLE_SQL}"
    text, values = text_filter(term, case_sensitive=case_sensitive, first=ids + 1)
    narrow = MESSAGES.narrow(where or SearchFilter(), first=ids + len(values) + 1)
    return sql + text + narrow.sql, [*values, *narrow.params]
