"""How a term of 3+ characters finds its candidates in the literal indexes, in search order.

Search order (DESIGN §3.2) is threads by last activity (newest first), generation descending,
``seq`` ascending. Both indexes (``literal_index.py``) are keyed ``thread_id << 32 | seq``, so
a thread is one key range and a generation a sub-range of it. One plan per term, shared by the
case-sensitive and the case-insensitive pass:

1. **Words**: a term of several words (``literal_words.py``) as a phrase of its words and
   word boundaries in the word index, ``LIMIT`` :data:`WORDS_SORT_MAX` + 1: a superset of the
   rows holding it, however common each word is. At most :data:`WORDS_SORT_MAX`: they are
   the candidates (the caller rechecks them), sorted here by search order.
2. **Probe**: otherwise every (sampled) trigram of the term ANDed, ``LIMIT``
   :data:`RECHECK_MAX` + 1 — cheap (no positions are compared). At most :data:`RECHECK_MAX`
   rows: they are the candidates, sorted here.
3. **Walk**: otherwise (a common term), the whole term as one trigram phrase — exactly the
   rows holding it with case folded as the tokenizer folds (ASCII, at most
   :data:`PHRASE_MAX_CHARS`, no newline) — read in search order as the caller goes
   (``literal_walk.py``): a common term costs the first reads only.

The rows the index has not reached yet (``literal_backlog``) are scanned exactly, with the
visibility rule and a case-folded ``instr`` filter, and merged into the same order. Only
threads the privacy gate and the filter allow are ever read. Nothing here reads message
content but the backlog's: the rows are read by
``literal_rows.py`` as the caller consumes the stream.
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
from recallbox.storage.sqlite.literal_cjk import CJK_TABLE, cjk_match, cjk_matcher
from recallbox.storage.sqlite.literal_index import (
    BACKLOG_TABLE,
    LITERAL_TABLE,
    SEQ_MASK,
    THREAD_SHIFT,
    key_sql,
)
from recallbox.storage.sqlite.literal_walk import Walk, fts_keys
from recallbox.storage.sqlite.literal_words import WORDS_TABLE, word_tokens
from recallbox.storage.sqlite.match import quote_phrase
from recallbox.storage.sqlite.visibility import (
    MESSAGE_SEARCHABLE_SQL,
    thread_gate,
)

TRIGRAM_CHARS = 3
MATCH_MAX_TRIGRAMS = 32
#: Probe candidates (step 2) read and rechecked directly, with no phrase query.
RECHECK_MAX = 200
#: Word-index candidates (step 1) sorted in memory; past this the trigrams are tried.
WORDS_SORT_MAX = 2_000
#: A longer term is matched in the index by its prefix (every candidate is rechecked).
PHRASE_MAX_CHARS = 256
LIKE_PATTERN_MAX_CHARS = 256
#: Threads whose generations one statement reads while a walk goes on.
GENERATIONS_READ_THREADS = 64

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

    def firsts(self, pool: ConnectionPool, thread: int) -> list[int]:
        """The first ``seq`` of each generation of ``thread`` (read with the next threads of the
        order, :data:`GENERATIONS_READ_THREADS` at a time)."""
        if thread not in self.first_seqs:
            at = self.rank.get(thread, 0)
            with pool.reading() as conn:
                self.load_generations(
                    conn, [thread, *self.threads[at : at + GENERATIONS_READ_THREADS]]
                )
        return self.first_seqs[thread]

    def sort_key(self, key: int) -> SortKey:
        """Search order of a message key (its thread's generations loaded)."""
        thread, seq = key >> THREAD_SHIFT, key & SEQ_MASK
        firsts = self.first_seqs.get(thread, [])
        at = bisect.bisect_right(firsts, seq) - 1
        number = self.numbers[thread][at] if at >= 0 else 1
        return self.rank[thread], -number, seq


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
    conn: apsw.Connection,
    match: str,
    scope: Scope,
    limit: int | None = None,
    table: str = LITERAL_TABLE,
) -> list[int]:
    """Keys of the ``table`` rows matching ``match`` (in the channel's range for a channel
    search), in key order, at most ``limit``; not yet filtered by :meth:`Scope.allows`."""
    sql = f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
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
    return fts_keys(conn, sql, params)


#: A text holding a character outside ASCII (whose case SQLite's ``lower()`` cannot fold).
NON_ASCII_GLOB = "*[^\x01-\x7f]*"


def backlog_keys(
    conn: apsw.Connection, term: str, where: SearchFilter, scope: Scope
) -> list[int]:
    """Keys of the visible rows still queued for the index that may hold ``term``.

    For an ASCII term: the rows whose ASCII-lowered text holds the lowered term, and every
    row with a non-ASCII character (rechecked by the caller); for another term every row.
    """
    if not scope.threads:
        return []
    narrow = MESSAGES.narrow(where)
    ascii_term = term.isascii()
    sure = (
        "(instr(lower(m.content), ?1) > 0 OR instr(lower(m.args_text), ?1) > 0)"
        if ascii_term
        else "0"
    )
    sql = (
        f"SELECT {key_sql('m')} FROM {BACKLOG_TABLE} b "
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
        return []
    return [int(r[0]) for r in rows]


def cjk_backlog_keys(
    conn: apsw.Connection, term: str, where: SearchFilter, scope: Scope
) -> list[int]:
    """Keys of the visible rows still queued for the index whose content the CJK index will
    match for ``term`` once indexed (:func:`~recallbox.storage.sqlite.literal_cjk.cjk_matcher`):
    a short CJK term's answer is the same before and after the indexer reaches a row."""
    holds = cjk_matcher(conn, term)
    if holds is None or not scope.threads:
        return []
    clause = MESSAGES.narrow(where)
    sql = (
        f"SELECT {key_sql('m')}, m.content FROM {BACKLOG_TABLE} b "
        "CROSS JOIN messages m ON m.id = b.id JOIN threads t ON t.id = m.thread_id "
        f"WHERE {MESSAGE_SEARCHABLE_SQL}{clause.sql}"
    )
    return [int(key) for key, content in conn.execute(sql, clause.params) if holds(content)]


@dataclass
class Plan:
    """The candidates of one term in one scope: a sorted list (``keys``), or a walk of the
    phrase in search order (``walk``); and the rows still queued for the index (``tail``)."""

    term: str
    scope: Scope
    keys: list[int] | None
    tail: list[int]
    walk: Walk | None = None


def word_keys(conn: apsw.Connection, term: str, scope: Scope) -> list[int] | None:
    """Step 1: the keys of the rows the word index says may hold ``term``, or ``None`` (no
    word phrase, or more than :data:`WORDS_SORT_MAX`).

    The phrase is tried first without its last token when that is a prefix (the head of the
    text's word): FTS5 reads every doclist of a prefix before its first row (2 ms for a word
    in 46 000 messages at 1M, 50 ms for one in 680 000), so the prefix is read only when the
    rest was not narrow enough.
    """
    tokens, prefix = word_tokens(term)
    if not tokens:
        return None
    if prefix and len(tokens) > 1:
        keys = index_keys(conn, _phrase(tokens[:-1]), scope, WORDS_SORT_MAX + 1, WORDS_TABLE)
        if len(keys) <= WORDS_SORT_MAX:
            return keys
    keys = index_keys(
        conn, _phrase(tokens) + (" *" if prefix else ""), scope, WORDS_SORT_MAX + 1, WORDS_TABLE
    )
    return keys if len(keys) <= WORDS_SORT_MAX else None


def _phrase(tokens: Sequence[str]) -> str:
    return '"' + " ".join(tokens) + '"'


def plan_term(
    pool: ConnectionPool, conn: apsw.Connection, term: str, where: SearchFilter, scope: Scope
) -> Plan:
    """Steps 1 and 2 of the module docs (or the start of step 3), and the queued rows; all on
    one read snapshot (``conn``'s)."""
    tail = backlog_keys(conn, term, where, scope)
    keys: list[int] | None = []
    if scope.threads:
        keys = word_keys(conn, term, scope)
        if keys is None:
            probe = index_keys(conn, trigram_match(term), scope, RECHECK_MAX + 1)
            keys = probe if len(probe) <= RECHECK_MAX else None
    return _ordered_plan(pool, conn, term, scope, keys, tail, LITERAL_TABLE, phrase_match(term))


def plan_short(
    pool: ConnectionPool,
    conn: apsw.Connection,
    term: str,
    where: SearchFilter,
    scope: Scope,
    recent: Sequence[int] = (),
) -> Plan:
    """A term under 3 characters: a CJK one through the CJK index (``literal_cjk.py``: at most
    :data:`RECHECK_MAX` keys sorted, else a walk in search order) with the queued rows; and
    the ``recent`` keys (the bounded scan of the newest messages), merged into the order."""
    match = cjk_match(term)
    if match is None or not scope.threads:
        return _ordered_plan(pool, conn, term, scope, [], [*recent], CJK_TABLE, "")
    probe = index_keys(conn, match, scope, RECHECK_MAX + 1, table=CJK_TABLE)
    keys = probe if len(probe) <= RECHECK_MAX else None
    tail = [*cjk_backlog_keys(conn, term, where, scope), *recent]
    return _ordered_plan(pool, conn, term, scope, keys, tail, CJK_TABLE, match)


def _ordered_plan(
    pool: ConnectionPool,
    conn: apsw.Connection,
    term: str,
    scope: Scope,
    keys: list[int] | None,
    tail: list[int],
    table: str,
    match: str,
) -> Plan:
    """The plan of ``keys`` (``None``: walk ``match`` in ``table`` instead) and the ``tail``
    keys, each in search order and inside the scope (a key may be in both)."""
    listed = [k for k in [*(keys or []), *tail] if scope.allows(k)]
    scope.load_generations(conn, sorted({k >> THREAD_SHIFT for k in listed}))
    tail = sorted({k for k in tail if scope.allows(k)}, key=scope.sort_key)
    walk = None
    if keys is not None:
        keys = sorted((k for k in keys if scope.allows(k)), key=scope.sort_key)
    else:
        walk = Walk(pool, table, match, scope.threads, lambda thread: scope.firsts(pool, thread))
    return Plan(term, scope, keys, tail, walk)


def ordered_keys(plan: Plan) -> Iterator[int]:
    """Every candidate key of ``plan`` in search order: the index's and the queued rows'."""
    indexed: Iterator[int] = plan.walk.each() if plan.walk is not None else iter(plan.keys or ())
    if not plan.tail:
        yield from indexed
        return
    seen: set[int] = set()
    for key in heapq.merge(indexed, plan.tail, key=plan.scope.sort_key):
        if key not in seen:  # a row indexed meanwhile (a stream read outside a snapshot)
            seen.add(key)
            yield key
