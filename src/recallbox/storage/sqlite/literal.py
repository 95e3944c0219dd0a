"""Thread-search reads on SQLite: literal candidates, the bounded recent scan, keyword hits.

How a term finds its candidate messages without scanning the table (DESIGN §3.2), in two steps:

1. **Candidate ids in search order, from an index, reading no content.** 3+ characters: the
   trigram index ``messages_trgm`` (content and ``args_text``) with ``MATCH`` on the term's
   trigrams (every one must be present; the tokenizer folds case with Unicode rules, so this
   is a superset of both passes). Under 3 characters with CJK: the bigram index
   ``messages_fts`` (content only); a single CJK character is a prefix query, found where it
   starts a bigram or stands alone. ``recent`` adds the newest searchable messages in scope,
   for terms no index holds (the caller says so in its result). Search order is thread last
   activity (newest first), generation descending, ``seq`` ascending. A few candidates are
   sorted in SQL; a long doclist (a common word) is instead intersected with a walk of that
   order over the ``(generation_id, seq)`` index, which stops as soon as the caller is done.
2. **An exact filter inside SQLite, chunk by chunk, in that order.** ``LIKE '%term%'`` — no
   ``ESCAPE``, which would keep an index from being used; ``%`` and ``_`` in the term are then
   wildcards, which only widens the set; ASCII case folded — plus ``GLOB`` with ``*?[``
   bracket-quoted for the case-sensitive pass, plus the whole visibility rule again
   (``visibility.py``: the rows are read after step 1, and a quarantine or an exclusion may
   have committed in between; a search normally runs in one snapshot). A case-insensitive
   pass for a term with non-ASCII cased letters (``Ärger``) skips ``LIKE``, which folds ASCII
   only. Terms longer than :data:`LIKE_PATTERN_MAX_CHARS` are filtered by their prefix.

Why not ``WHERE content LIKE … ORDER BY … LIMIT``: SQLite must then test the content of every
message holding a common word before it can sort, which costs seconds on a big history. Here a
common word costs its doclists and the content of only the first chunks, since the caller stops
reading once its result is full. Rows (with their possibly large content) are filtered and
fetched by one query, a small chunk at a time as the caller consumes them (outside a read
snapshot a shared in-memory connection's lock is then never held while the caller works). The
caller rechecks every row exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

import apsw

from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
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

TRIGRAM_CHARS = 3
LIKE_PATTERN_MAX_CHARS = 256
MATCH_MAX_TRIGRAMS = 32
FILTER_CHUNK_IDS = 64  # candidates filtered (and their rows read) per query
SORT_CANDIDATES_MAX = 20_000  # above this many candidates, walk the order instead of sorting
GLOB_SPECIALS = frozenset("*?[")

SEARCH_ORDER = "t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"
SEARCH_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)
ROW_COLUMNS = "m.id, m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls"


def like_pattern(term: str) -> str:
    """``%term%`` (wildcards in ``term`` only widen the match; long terms by their prefix)."""
    return "%" + term[:LIKE_PATTERN_MAX_CHARS] + "%"


def glob_pattern(term: str) -> str:
    """``*term*`` with ``*``, ``?`` and ``[`` bracket-quoted: an exact, case-sensitive test."""
    quoted = "".join(f"[{c}]" if c in GLOB_SPECIALS else c for c in term[:LIKE_PATTERN_MAX_CHARS])
    return "*" + quoted + "*"


def has_non_ascii_case(term: str) -> bool:
    """True when ``term`` holds a non-ASCII letter that has another case (``LIKE`` won't fold)."""
    return any(ord(c) > 0x7F and (c.lower() != c or c.upper() != c) for c in term)


def trigram_match(term: str) -> str:
    """An FTS5 ``MATCH`` that needs every (sampled) trigram of ``term``: ``"abc" AND "bcd"``."""
    grams = list(dict.fromkeys(term[i : i + TRIGRAM_CHARS] for i in range(len(term) - 2)))
    if len(grams) > MATCH_MAX_TRIGRAMS:
        step = len(grams) / MATCH_MAX_TRIGRAMS
        grams = [grams[int(i * step)] for i in range(MATCH_MAX_TRIGRAMS)]
    return " AND ".join(quote_phrase(gram) for gram in grams)


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


# -- step 1: candidate ids in search order --------------------------------------------------------


Query = tuple[str, tuple[Any, ...]]
"""A statement and the values it binds."""


def index_source(term: str) -> Query | None:
    """The doclist query (``SELECT rowid …``) that finds candidates for ``term``, or None."""
    if len(term) >= TRIGRAM_CHARS:
        sql = "SELECT rowid FROM messages_trgm WHERE messages_trgm MATCH ?"
        return sql, (trigram_match(term),)
    if has_cjk(term):
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


def sorted_sql(ids: set[int], where: SearchFilter, limit: int) -> Query:
    """``ids`` that pass the kind part of the rule, the gate and ``where``, in search order
    (row lookups by id).

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
    return sql, (json.dumps(sorted(ids)), *narrow.params, limit)


def _generations_in_order(pool: ConnectionPool, where: SearchFilter) -> list[int]:
    """Generation ids of the threads in scope the privacy gate allows, in search order."""
    gate = thread_gate(where)
    sql = (
        f"SELECT g.id FROM generations g JOIN threads t ON t.id = g.thread_id WHERE 1{gate.sql} "
        "ORDER BY t.last_activity DESC, t.id DESC, g.number DESC"
    )
    return [int(r[0]) for r in _fetch(pool, sql, gate.params)]


def _walk(
    pool: ConnectionPool,
    members: set[int],
    where: SearchFilter,
    limit: int,
    stream: CandidateStream,
) -> Iterator[int]:
    """``members`` in search order, walking the ``(generation_id, seq)`` index (no table row
    is read), stopping after ``limit`` (and flagging ``stream`` when more were left)."""
    found = 0
    for generation in _generations_in_order(pool, where):
        ids = _ids(
            pool, "SELECT id FROM messages WHERE generation_id = ? ORDER BY seq", (generation,)
        )
        for rowid in ids:
            if rowid in members:
                if found >= limit:
                    stream.truncated = True
                    return
                yield rowid
                found += 1


def ordered_candidate_ids(
    pool: ConnectionPool,
    term: str,
    *,
    where: SearchFilter,
    limit: int,
    recent: int = 0,
    stream: CandidateStream | None = None,
) -> Iterator[int]:
    """Candidate ids in search order: sorted in SQL when few, walked in order when many.

    Each index is read once (its doclist only); nothing is read when no index holds ``term``
    and ``recent`` is 0. ``stream.truncated`` is set when more than ``limit`` were left out.
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
        return _walk(pool, members, where, limit, stream)
    ordered = _ids(pool, *sorted_sql(members, where, limit + 1))
    if len(ordered) > limit:
        stream.truncated = True
    return iter(ordered[:limit])


# -- step 2: the exact filter, chunk by chunk ---------------------------------------------------


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
    values: list[Any] = []
    if case_sensitive or not has_non_ascii_case(term):
        values.append(like_pattern(term))
        at = ids + len(values)
        sql += f" AND (m.content LIKE ?{at} OR m.args_text LIKE ?{at})"
    if case_sensitive:
        values.append(glob_pattern(term))
        at = ids + len(values)
        sql += f" AND (m.content GLOB ?{at} OR m.args_text GLOB ?{at})"
    narrow = MESSAGES.narrow(where or SearchFilter(), first=ids + len(values) + 1)
    return sql + narrow.sql, [*values, *narrow.params]


def _filtered_rows(
    pool: ConnectionPool, query: LiteralQuery, where: SearchFilter, ids: Iterator[int]
) -> Iterator[SearchableMessage]:
    """The rows of ``ids`` that pass the SQL filter, in the order of ``ids``, a chunk at a time."""
    while chunk := list(islice(ids, FILTER_CHUNK_IDS)):
        sql, values = filter_sql(
            query.term, case_sensitive=query.case_sensitive, ids=len(chunk), where=where
        )
        by_id: dict[Any, Sequence[Any]] = {r[0]: r for r in _fetch(pool, sql, (*chunk, *values))}
        for rowid in chunk:
            row = by_id.get(rowid)
            if row is not None:
                yield _row(row)


def literal_candidates(
    pool: ConnectionPool, query: LiteralQuery, *, where: SearchFilter, limit: int, recent: int = 0
) -> CandidateStream:
    """See :meth:`recallbox.storage.base.LiteralSearch.literal_candidates`."""
    MESSAGES.narrow(where)  # an unsupported filter raises now, not when the stream is first read
    stream = CandidateStream()
    ids = ordered_candidate_ids(
        pool, query.term, where=where, limit=limit, recent=recent, stream=stream
    )
    stream.rows = _filtered_rows(pool, query, where, ids)
    return stream
