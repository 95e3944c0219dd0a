"""Thread-search reads on SQLite: literal candidates, complete and in search order (DESIGN §3.2).

Two steps, the second lazy:

1. **Candidate keys in search order, reading no content.** A term of 3+ characters: the
   literal indexes (``literal_plan.py``: a phrase of the term's words and word boundaries in
   the word index, a cheap trigram probe, or a walk of the whole term as a trigram phrase in
   search order, ``literal_walk.py``), plus the rows not indexed yet, scanned exactly. Every
   candidate is found: there is no candidate cap. The plan of a term is kept for the read
   snapshot, so the case-insensitive pass reuses the case-sensitive one's. Under 3
   characters, CJK: the bigram index ``messages_fts`` (content only; a single CJK character
   is a prefix query), sorted in SQL when few, else intersected with a walk of the
   ``(generation_id, seq)`` index. ``recent`` adds the newest searchable messages in scope,
   for short terms no index holds (the caller says so in its result).
2. **An exact filter inside SQLite, chunk by chunk, in that order** (``literal_rows.py``),
   with the whole visibility rule again; the caller rechecks every row exactly.

Rows (with their possibly large content) are filtered and fetched a small chunk at a time as
the caller consumes them, so a common term costs the first chunks only.
"""

from __future__ import annotations

import json
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.literal_plan import (
    LIKE_PATTERN_MAX_CHARS,
    TRIGRAM_CHARS,
    Plan,
    like_pattern,
    load_scope,
    ordered_keys,
    plan_term,
)
from recallbox.storage.sqlite.literal_rows import (
    FILTER_CHUNK_IDS,
    ROW_COLUMNS,
    SEARCH_FROM,
    SQL_FILTER_MAX_CHARS,
    fetch,
    fetch_ids,
    filter_sql,
    has_non_ascii_case,
    read_by_id,
    read_by_key,
    text_filter,
)
from recallbox.storage.sqlite.match import quote_phrase
from recallbox.storage.sqlite.visibility import (
    MESSAGE_KIND_SQL,
    MESSAGE_SEARCHABLE_SQL,
    THREAD_ALLOWED_SQL,
    thread_gate,
    without_channel,
)
from recallbox.storage.values import CandidateStream
from recallbox.text.cjk import has_cjk, is_cjk_char, segment

SORT_CANDIDATES_MAX = 20_000  # short terms: above this many, walk the order instead of sorting
PLAN_CACHE_MAX = 64  # term plans kept for the open read snapshots
# Plans of the newest read snapshots only: an ended snapshot's plans are never read again, and
# each holds its scope (every allowed thread: ~0.2 MB at 2 000 threads), so keeping 64 stale
# ones made a search process's memory grow with the history.
PLAN_SNAPSHOTS_KEPT = 4

SEARCH_ORDER = "t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"

__all__ = [
    "FILTER_CHUNK_IDS",
    "LIKE_PATTERN_MAX_CHARS",
    "ROW_COLUMNS",
    "SEARCH_FROM",
    "SQL_FILTER_MAX_CHARS",
    "bigram_match",
    "filter_sql",
    "has_non_ascii_case",
    "index_source",
    "like_pattern",
    "literal_candidates",
    "recent_source",
    "sorted_sql",
    "text_filter",
]


def bigram_match(term: str) -> str:
    """An FTS5 ``MATCH`` for a CJK term under 3 characters, on the bigram-segmented index."""
    cjk = "".join(c for c in term if is_cjk_char(c))
    if len(cjk) >= 2:
        return quote_phrase(segment(cjk))
    return quote_phrase(cjk) + "*"


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
        _forget_old_snapshots(serial)
        _plans[cache_key] = plan
    return plan


def _forget_old_snapshots(serial: int) -> None:
    """Drop the plans of all but the newest :data:`PLAN_SNAPSHOTS_KEPT` snapshots (``serial``
    counted). Serials only grow; ``list(_plans)`` copies the keys at once (other threads'
    searches insert concurrently), and a plan dropped early is only computed again."""
    keys = list(_plans)
    serials = sorted({key[0] for key in keys} - {serial})
    stale = set(serials[: max(0, len(serials) - (PLAN_SNAPSHOTS_KEPT - 1))])
    for key in keys:
        if key[0] in stale:
            _plans.pop(key, None)


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
        keys = ordered_keys(_plan(pool, query.term, where))
        stream.rows = read_by_key(pool, query, where, _limited(keys, limit, stream))
        return stream
    ids = ordered_candidate_ids(
        pool, query.term, where=where, limit=limit, recent=recent, stream=stream
    )
    stream.rows = read_by_id(pool, query, where, ids)
    return stream


# -- terms under 3 characters: the bigram index and the bounded recent scan ----------------------

Query = tuple[str, tuple[Any, ...]]
"""A statement and the values it binds."""


def index_source(term: str) -> Query | None:
    """The doclist query (``SELECT rowid …``) of a short CJK term, or None (no index holds it)."""
    if len(term) < TRIGRAM_CHARS and has_cjk(term):
        sql = "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid"
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


def sorted_sql(ids: list[int], where: SearchFilter, limit: int | None = None) -> Query:
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
    return sql, (json.dumps(ids), *narrow.params, -1 if limit is None else limit)


def _ids(pool: ConnectionPool, sql: str, params: Sequence[Any]) -> list[int]:
    return [int(r[0]) for r in fetch(pool, sql, params)]


def _generations_in_order(pool: ConnectionPool, where: SearchFilter) -> list[int]:
    """Generation ids of the threads in scope the privacy gate allows, in search order."""
    gate = thread_gate(where)
    sql = (
        f"SELECT g.id FROM generations g JOIN threads t ON t.id = g.thread_id WHERE 1{gate.sql} "
        "ORDER BY t.last_activity DESC, t.id DESC, g.number DESC"
    )
    return [int(r[0]) for r in fetch(pool, sql, gate.params)]


class IdSet:
    """The candidate ids of a short term: the index's doclist (ascending row ids, as FTS5 reads
    them) and the newest messages of the bounded scan, each a sorted array of 8-byte integers
    with binary-search membership, so a common term's doclist never becomes Python objects
    (peak memory of a search stays flat as the history grows)."""

    def __init__(self, doclist: array[int], recent: array[int]) -> None:
        self.doclist = doclist
        self.recent = array("q", sorted(recent))  # at most the scan's bound of them
        self.extra = sum(1 for rowid in self.recent if not _holds(doclist, rowid))

    def __contains__(self, rowid: int) -> bool:
        return _holds(self.doclist, rowid) or _holds(self.recent, rowid)

    def __len__(self) -> int:
        return len(self.doclist) + self.extra

    def unique(self) -> list[int]:
        """Every id once, ascending (for the sorted read of a few candidates)."""
        return sorted({*self.doclist, *self.recent})


def _holds(ids: array[int], rowid: int) -> bool:
    at = bisect_left(ids, rowid)
    return at < len(ids) and ids[at] == rowid


def _walk(pool: ConnectionPool, members: IdSet, where: SearchFilter) -> Iterator[int]:
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
    members = IdSet(
        fetch_ids(pool, *source) if source is not None else array("q"),
        fetch_ids(pool, *recent_source(where, recent)) if recent > 0 else array("q"),
    )
    if not members:
        return iter(())
    if len(members) > SORT_CANDIDATES_MAX:
        # Trigger: a common term (a long doclist).
        # Why: sorting every candidate costs a row lookup each; the caller needs the first.
        # Outcome: walk the search order and stop as soon as the caller is done.
        return _limited(_walk(pool, members, where), limit, stream)
    ordered = _ids(
        pool, *sorted_sql(members.unique(), where, None if limit is None else limit + 1)
    )
    return _limited(iter(ordered), limit, stream)
