"""How a term of 3+ characters finds its candidates in the literal index, in search order.

Search order (DESIGN §3.2) is threads by last activity (newest first), generation descending,
``seq`` ascending. The index (``literal_index.py``) is keyed ``thread_id << 32 | seq``, so a
thread is one rowid range and a generation a sub-range of it. One plan per term, shared by
the case-sensitive and the case-insensitive pass:

1. **Probe**: every (sampled) trigram of the term ANDed, ``LIMIT`` :data:`RECHECK_MAX` + 1 —
   cheap (no positions are read). At most :data:`RECHECK_MAX` rows: they are the candidates
   (a superset the caller rechecks), sorted here by search order.
2. **Phrase**: the whole term (its first :data:`PHRASE_MAX_CHARS` characters) as one phrase,
   ``LIMIT`` :data:`PHRASE_SORT_MAX` + 1: exactly the indexed rows holding it with case folded
   as the tokenizer folds. At most :data:`PHRASE_SORT_MAX`: sorted here.
3. **Walk**: more than that (a common term): the threads in order, each generation newest
   first, one phrase ``MATCH … AND rowid BETWEEN`` per generation, lazily — the caller stops
   reading once its result is full, so a common term costs the first generations only.

The rows the index has not reached yet (``literal_backlog``) are scanned exactly, with the
visibility rule and a ``LIKE`` filter, and merged into the same order. Only threads the
privacy gate and the filter allow are ever read. Nothing here reads message content: the
rows are read by ``literal.py`` as the caller consumes the stream.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import apsw

from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.literal_index import (
    BACKLOG_TABLE,
    LITERAL_TABLE,
    SEQ_MASK,
    THREAD_SHIFT,
    key_sql,
)
from recallbox.storage.sqlite.match import quote_phrase
from recallbox.storage.sqlite.visibility import (
    MESSAGE_SEARCHABLE_SQL,
    thread_gate,
)

TRIGRAM_CHARS = 3
MATCH_MAX_TRIGRAMS = 32
#: Probe candidates (step 1) read and rechecked directly, with no phrase query.
RECHECK_MAX = 200
#: Exact phrase candidates (step 2) sorted in memory; past this the order is walked (step 3).
PHRASE_SORT_MAX = 5_000
#: A longer term is matched in the index by its prefix (every candidate is rechecked).
PHRASE_MAX_CHARS = 256
LIKE_PATTERN_MAX_CHARS = 256

SortKey = tuple[int, int, int]


def trigram_match(term: str) -> str:
    """An FTS5 ``MATCH`` that needs every (sampled) trigram of ``term``: ``"abc" AND "bcd"``."""
    grams = list(dict.fromkeys(term[i : i + TRIGRAM_CHARS] for i in range(len(term) - 2)))
    if len(grams) > MATCH_MAX_TRIGRAMS:
        step = len(grams) / MATCH_MAX_TRIGRAMS
        grams = [grams[int(i * step)] for i in range(MATCH_MAX_TRIGRAMS)]
    return " AND ".join(quote_phrase(gram) for gram in grams)


def phrase_match(term: str) -> str:
    """The whole term (its first :data:`PHRASE_MAX_CHARS` characters) as one FTS5 phrase."""
    return quote_phrase(term[:PHRASE_MAX_CHARS])


def phrase_is_exact(term: str) -> bool:
    """True when an index row matching :func:`phrase_match` surely holds ``term`` with case
    folded in its content or in one argument leaf (leaves are joined by newlines)."""
    return len(term) <= PHRASE_MAX_CHARS and term.isascii() and "\n" not in term


def like_pattern(term: str) -> str:
    """``%term%`` (wildcards in ``term`` only widen the match; long terms by their prefix)."""
    return "%" + term[:LIKE_PATTERN_MAX_CHARS] + "%"


@dataclass
class Scope:
    """The threads a search may read (the gate and the filter applied), in search order."""

    threads: list[int]
    rank: dict[int, int]
    channel: bool  # a channel search: at most one thread, searched as one rowid range
    first_seqs: dict[int, list[int]] = field(default_factory=dict)  # ascending, per thread
    numbers: dict[int, list[int]] = field(default_factory=dict)

    def allows(self, key: int) -> bool:
        return (key >> THREAD_SHIFT) in self.rank

    def range_params(self) -> tuple[int, int] | None:
        """The rowid range of a channel search's thread."""
        if not self.channel or not self.threads:
            return None
        low = self.threads[0] << THREAD_SHIFT
        return low, low | SEQ_MASK

    def load_generations(self, conn: apsw.Connection, threads: Sequence[int]) -> None:
        """Read the generations (first ``seq``, number) of ``threads`` not read yet."""
        missing = sorted({t for t in threads if t not in self.first_seqs})
        if not missing:
            return
        for t in missing:
            self.first_seqs[t], self.numbers[t] = [], []
        rows = conn.execute(
            "SELECT g.thread_id, g.first_seq, g.number FROM json_each(?) j "
            "CROSS JOIN generations g ON g.thread_id = j.value ORDER BY g.thread_id, g.number",
            (_json(missing),),
        )
        for thread, first, number in rows:
            self.first_seqs[int(thread)].append(int(first if first is not None else 1))
            self.numbers[int(thread)].append(int(number))

    def sort_key(self, key: int) -> SortKey:
        """Search order of a message key (its thread's generations loaded)."""
        thread, seq = key >> THREAD_SHIFT, key & SEQ_MASK
        firsts = self.first_seqs.get(thread, [])
        at = bisect.bisect_right(firsts, seq) - 1
        number = self.numbers[thread][at] if at >= 0 else 1
        return self.rank[thread], -number, seq

    def generation_ranges(self, thread: int) -> list[tuple[int, int]]:
        """The key range of each generation of ``thread``, newest generation first."""
        firsts = self.first_seqs.get(thread, [])
        base = thread << THREAD_SHIFT
        bounds = [*firsts[1:], SEQ_MASK + 1]
        ranges = [(base | lo, base | (hi - 1)) for lo, hi in zip(firsts, bounds, strict=True)]
        return ranges[::-1]


def _json(values: Sequence[int]) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def load_scope(conn: apsw.Connection, where: SearchFilter) -> Scope:
    """The allowed threads in scope, newest activity first."""
    gate = thread_gate(where)
    rows = list(
        conn.execute(
            f"SELECT t.id FROM threads t WHERE 1{gate.sql} "
            "ORDER BY t.last_activity DESC, t.id DESC",
            gate.params,
        )
    )
    threads = [int(r[0]) for r in rows]
    return Scope(threads, {t: i for i, t in enumerate(threads)}, where.channel is not None)


def index_keys(
    conn: apsw.Connection, match: str, scope: Scope, limit: int | None = None
) -> list[int]:
    """Keys of the index rows matching ``match`` (in the channel's range for a channel search),
    in key order, at most ``limit``; not yet filtered by :meth:`Scope.allows`."""
    sql = f"SELECT rowid FROM {LITERAL_TABLE} WHERE {LITERAL_TABLE} MATCH ?"
    params: list[Any] = [match]
    bounds = scope.range_params()
    if scope.channel:
        if bounds is None:
            return []
        sql += " AND rowid BETWEEN ? AND ?"
        params.extend(bounds)
    if limit is not None:
        sql += " LIMIT ?"
        params.append(limit)
    return _keys(conn, sql, params)


def _keys(conn: apsw.Connection, sql: str, params: Sequence[Any]) -> list[int]:
    try:
        return [int(r[0]) for r in conn.execute(sql, params)]
    except apsw.SQLError as exc:
        # Trigger: FTS5 rejects an expression built from user text.
        # Why: terms are always quoted, so this is a tokenizer corner, not a caller error.
        # Outcome: no candidates from the index for this lookup, never an exception.
        if "fts5" not in str(exc):
            raise
        return []


#: A text holding a character outside ASCII (whose case SQLite's ``lower()`` cannot fold).
NON_ASCII_GLOB = "*[^\x01-\x7f]*"


def backlog_keys(
    conn: apsw.Connection, term: str, where: SearchFilter, scope: Scope
) -> tuple[list[int], set[int]]:
    """Keys of the visible rows still queued for the index that may hold ``term``, and those
    of them that surely hold it (case folded).

    For an ASCII term: the rows whose ASCII-lowered text holds the lowered term (sure ones),
    and every row with a non-ASCII character (rechecked by the caller); for another term every
    row.
    """
    if not scope.threads:
        return [], set()
    narrow = MESSAGES.narrow(where)
    ascii_term = term.isascii()
    sure = (
        "(instr(lower(m.content), ?1) > 0 OR instr(lower(m.args_text), ?1) > 0)"
        if ascii_term
        else "0"
    )
    sql = (
        f"SELECT {key_sql('m')}, {sure} FROM {BACKLOG_TABLE} b "
        "CROSS JOIN messages m ON m.id = b.id JOIN threads t ON t.id = m.thread_id "
        f"WHERE {MESSAGE_SEARCHABLE_SQL}"
    )
    params: list[Any] = [term.lower()] if ascii_term else []
    if ascii_term:
        sql += f" AND ({sure} OR m.content GLOB ?2 OR m.args_text GLOB ?2)"
        params.append(NON_ASCII_GLOB)
    clause = MESSAGES.narrow(where, first=len(params) + 1)
    del narrow
    try:
        rows = list(conn.execute(sql + clause.sql, (*params, *clause.params)))
    except apsw.SQLError as exc:
        if "fts5" not in str(exc):
            raise
        return [], set()
    keys = [int(r[0]) for r in rows]
    surely = {int(r[0]) for r in rows if r[1]} if "\n" not in term else set()
    return keys, surely


@dataclass
class Plan:
    """The candidates of one term in one scope: a sorted list, or a walk (``keys is None``)."""

    term: str
    scope: Scope
    keys: list[int] | None
    tail: list[int]
    phrase: str
    tail_sure: set[int] = field(default_factory=set)  # queued rows surely holding the term
    holders: dict[int, list[str]] = field(default_factory=dict)  # limit -> ids (both passes)


def plan_term(conn: apsw.Connection, term: str, where: SearchFilter, scope: Scope) -> Plan:
    """Steps 1 and 2 of the module docs, and the queued rows; all on one read snapshot."""
    phrase = phrase_match(term)
    tail, tail_sure = backlog_keys(conn, term, where, scope)
    keys: list[int] | None = []
    if scope.threads:
        probe = index_keys(conn, trigram_match(term), scope, RECHECK_MAX + 1)
        if len(probe) > RECHECK_MAX:
            found = index_keys(conn, phrase, scope, PHRASE_SORT_MAX + 1)
            keys = found if len(found) <= PHRASE_SORT_MAX else None
        else:
            keys = probe
    listed = [k for k in [*(keys or []), *tail] if scope.allows(k)]
    scope.load_generations(conn, sorted({k >> THREAD_SHIFT for k in listed}))
    tail = sorted((k for k in tail if scope.allows(k)), key=scope.sort_key)
    if keys is not None:
        keys = sorted((k for k in keys if scope.allows(k)), key=scope.sort_key)
    return Plan(term, scope, keys, tail, phrase, {k for k in tail_sure if scope.allows(k)})


def walk(pool: ConnectionPool, plan: Plan) -> Iterator[int]:
    """Step 3: index keys in search order, one generation at a time, lazily."""
    scope = plan.scope
    for thread in scope.threads:
        with pool.reading() as conn:
            scope.load_generations(conn, [thread])
        for low, high in scope.generation_ranges(thread):
            with pool.reading() as conn:
                keys = _keys(
                    conn,
                    f"SELECT rowid FROM {LITERAL_TABLE} WHERE {LITERAL_TABLE} MATCH ? "
                    "AND rowid BETWEEN ? AND ?",
                    (plan.phrase, low, high),
                )
            yield from keys


def ordered_keys(pool: ConnectionPool, plan: Plan) -> Iterator[int]:
    """Every candidate key of ``plan`` in search order: the index's and the queued rows'."""
    indexed: Iterator[int] = iter(plan.keys) if plan.keys is not None else walk(pool, plan)
    if not plan.tail:
        yield from indexed
        return
    seen: set[int] = set()
    for key in heapq.merge(indexed, plan.tail, key=plan.scope.sort_key):
        if key not in seen:  # a row indexed meanwhile (a stream read outside a snapshot)
            seen.add(key)
            yield key


def holder_keys(conn: apsw.Connection, plan: Plan, limit: int) -> list[int]:
    """Up to ``limit`` keys of allowed rows that surely hold the term (case folded): queued
    rows the plan's scan found, and indexed rows of an exact phrase."""
    found = sorted(plan.tail_sure)[:limit]
    if phrase_is_exact(plan.term) and len(found) < limit:
        indexed = index_keys(conn, plan.phrase, plan.scope, limit - len(found))
        found.extend(k for k in indexed if plan.scope.allows(k))
    return found
