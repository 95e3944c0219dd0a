"""Thread-search reads on SQLite: literal candidates, complete and in search order (DESIGN §3.2).

Two steps, the second lazy:

1. **Candidate keys in search order, reading no content.** A term of 3+ characters: the
   literal indexes (``literal_plan.py``: a phrase of the term's words and word boundaries in
   the word index, a cheap trigram probe, or a walk of the whole term as a trigram phrase in
   search order, ``literal_walk.py``), plus the rows not indexed yet, scanned exactly. Every
   candidate is found: there is no candidate cap. The plan of a term is kept for the read
   snapshot, so the case-insensitive pass reuses the case-sensitive one's. Under 3
   characters, CJK: the CJK index (``literal_cjk.py``: bigram tokens of the content, keyed
   by thread like the others, so a common term is walked in search order with bounded
   memory; a single character is a prefix), plus the queued rows. ``recent`` adds the newest
   searchable messages in scope, for short terms no index holds (the caller says so in its
   result).
2. **An exact filter inside SQLite, chunk by chunk, in that order** (``literal_rows.py``),
   with the whole visibility rule again; the caller rechecks every row exactly.

Rows (with their possibly large content) are filtered and fetched a small chunk at a time as
the caller consumes them, so a common term costs the first chunks only.
"""

from __future__ import annotations

from collections.abc import Iterator

import apsw

from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.snapshots import forget_with_snapshot
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.literal_index import key_sql
from recallbox.storage.sqlite.literal_plan import (
    LIKE_PATTERN_MAX_CHARS,
    TRIGRAM_CHARS,
    Plan,
    like_pattern,
    load_scope,
    ordered_keys,
    plan_short,
    plan_term,
)
from recallbox.storage.sqlite.literal_rows import (
    FILTER_CHUNK_IDS,
    ROW_COLUMNS,
    SEARCH_FROM,
    SQL_FILTER_MAX_CHARS,
    has_non_ascii_case,
    read_by_key,
    text_filter,
)
from recallbox.storage.sqlite.visibility import (
    MESSAGE_SEARCHABLE_SQL,
    without_channel,
)
from recallbox.storage.values import CandidateStream

PLAN_CACHE_MAX = 64  # term plans kept for the open read snapshots
# A snapshot's plans are dropped when it ends (``snapshots.py``): each holds its scope (every
# allowed thread: ~0.2 MB at 2 000 threads), so keeping ended ones made a search process's
# memory grow with the history.

SEARCH_ORDER = "t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"

__all__ = [
    "FILTER_CHUNK_IDS",
    "LIKE_PATTERN_MAX_CHARS",
    "ROW_COLUMNS",
    "SEARCH_FROM",
    "SQL_FILTER_MAX_CHARS",
    "has_non_ascii_case",
    "like_pattern",
    "literal_candidates",
    "recent_keys",
    "recent_source",
    "text_filter",
]


# -- the plans of one read snapshot ----------------------------------------------------------------

_plans: dict[tuple[int, str, SearchFilter, int], Plan] = {}
forget_with_snapshot(_plans)  # a snapshot's plans go when it ends


def _plan(pool: ConnectionPool, term: str, where: SearchFilter, recent: int = 0) -> Plan:
    """The term's plan, computed on one snapshot, and kept for the snapshot it was read in
    (a term under 3 characters: the CJK index and the newest ``recent`` messages)."""
    serial = pool.snapshot_id()
    cache_key = (serial or 0, term, where, recent)
    kept = _plans.get(cache_key) if serial is not None else None
    if kept is not None:  # one lookup: another thread may drop the key meanwhile
        return kept
    with pool.snapshot() as conn:
        scope = load_scope(conn, where)
        if len(term) >= TRIGRAM_CHARS:
            plan = plan_term(pool, conn, term, where, scope)
        else:
            newest = recent_keys(conn, where, recent) if recent > 0 else []
            plan = plan_short(pool, conn, term, where, scope, newest)
    if serial is not None:
        if len(_plans) >= PLAN_CACHE_MAX:
            _plans.clear()
        _plans[cache_key] = plan
    return plan


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
    recent = recent if len(query.term) < TRIGRAM_CHARS else 0
    keys = ordered_keys(_plan(pool, query.term, where, recent))
    stream.rows = read_by_key(pool, query, where, _limited(keys, limit, stream))
    return stream


# -- terms under 3 characters: the bounded recent scan --------------------------------------------


def recent_source(where: SearchFilter, recent: int) -> tuple[str, tuple[object, ...]]:
    """The statement of the keys of the newest ``recent`` searchable messages in scope.

    With a channel it walks that thread's ``(thread_id, seq)`` index backwards; without one,
    the message table's rowid backwards. Either way it stops after ``recent`` rows.
    """
    narrow = MESSAGES.narrow(without_channel(where))
    base = f"SELECT {key_sql('m')} FROM {SEARCH_FROM} WHERE {MESSAGE_SEARCHABLE_SQL}{narrow.sql}"
    if where.channel is None:
        return f"{base} ORDER BY m.id DESC LIMIT ?", (*narrow.params, recent)
    return (
        f"{base} AND m.thread_id = (SELECT id FROM threads WHERE channel = ?) "
        "ORDER BY m.seq DESC LIMIT ?"
    ), (*narrow.params, where.channel, recent)


def recent_keys(conn: apsw.Connection, where: SearchFilter, recent: int) -> list[int]:
    """The keys of :func:`recent_source`, newest first."""
    sql, params = recent_source(where, recent)
    return [int(r[0]) for r in conn.execute(sql, params)]
