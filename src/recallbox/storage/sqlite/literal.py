"""Thread-search reads on SQLite: literal candidates, the bounded recent scan, keyword hits.

How a term finds its candidate messages without scanning the table (DESIGN §3.2):

* 3+ characters: the trigram index ``messages_trgm`` (content and ``args_text``) through
  ``LIKE '%term%'`` **without** ``ESCAPE`` — an ``ESCAPE`` clause stops FTS5 from using the
  index. ``%`` and ``_`` in the term are then wildcards, which only widens the candidate set;
  the caller rechecks every candidate exactly. For the case-sensitive pass a ``GLOB`` with the
  term's ``*?[`` bracket-quoted narrows the set to exact matches inside SQLite.
  SQLite's ``LIKE`` folds ASCII letters only, so a case-insensitive pass for a term with
  non-ASCII cased letters (``Ärger``), and any term in which no three characters in a row are
  free of ``%``/``_`` (where ``LIKE`` cannot use the index), use ``MATCH`` on the term's
  trigrams instead (the tokenizer folds case with Unicode rules). A very long term contributes
  only its first :data:`LIKE_PATTERN_MAX_CHARS` characters (or :data:`MATCH_MAX_TRIGRAMS`
  trigrams) to the index lookup; the exact ``GLOB`` and the caller's recheck see all of it.
* Under 3 characters with CJK: the bigram index ``messages_fts`` (content only); a single CJK
  character is a prefix query, found where it starts a bigram or stands alone.
* ``recent``: the newest searchable messages in scope, for terms no index holds; the caller
  says in its result that this part was bounded.

Every query applies the exclusions in SQL (superseded, ``model_visible=false``, pending,
machine events, compaction summaries, quarantined threads) and orders by thread last activity
(newest first), generation descending, ``seq`` ascending. Candidate ids are read first; rows
(with their possibly large content) are then fetched in batches as the caller consumes them,
so a caller that stops early never loads the rest, and a shared in-memory connection's lock
is never held while the caller works.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from recallbox.storage.base import SearchableMessage
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.fts import quote_phrase
from recallbox.text.cjk import has_cjk, is_cjk_char, segment

TRIGRAM_CHARS = 3
LIKE_PATTERN_MAX_CHARS = 256
MATCH_MAX_TRIGRAMS = 32
FETCH_BATCH_MESSAGES = 32
SEARCHABLE_KIND = "message"
LIKE_WILDCARDS = frozenset("%_")
GLOB_SPECIALS = frozenset("*?[")

# The exclusions of DESIGN §3.2; ``:kind`` is bound to SEARCHABLE_KIND.
SEARCHABLE_WHERE = (
    "m.kind = :kind AND m.model_visible = 1 AND m.pending = 0 AND m.superseded_by IS NULL "
    "AND t.quarantined = 0"
)
SEARCH_ORDER = "t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"
SEARCH_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)
ROW_COLUMNS = "m.id, m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls"


def like_pattern(term: str) -> str:
    """``%term%`` for the trigram index (wildcards in ``term`` only widen the match)."""
    return "%" + term[:LIKE_PATTERN_MAX_CHARS] + "%"


def glob_pattern(term: str) -> str:
    """``*term*`` with ``*``, ``?`` and ``[`` bracket-quoted: an exact, case-sensitive test."""
    quoted = "".join(f"[{c}]" if c in GLOB_SPECIALS else c for c in term)
    return "*" + quoted + "*"


def like_can_use_index(term: str) -> bool:
    """True when the ``LIKE`` pattern has three non-wildcard characters in a row."""
    run = 0
    for char in term[:LIKE_PATTERN_MAX_CHARS]:
        run = 0 if char in LIKE_WILDCARDS else run + 1
        if run >= TRIGRAM_CHARS:
            return True
    return False


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


def keyword_match(phrases: Sequence[str]) -> str:
    """``"a" OR "b c"``: each phrase quoted (CJK segmented into bigrams), nothing interpreted."""
    return " OR ".join(quote_phrase(segment(p)) for p in phrases if p.strip())


def _index_filter(term: str, case_sensitive: bool, params: dict[str, Any]) -> str | None:
    """The ``SELECT rowid …`` that finds candidates for ``term`` in an index, or None."""
    if len(term) < TRIGRAM_CHARS:
        if not has_cjk(term):
            return None
        params["match"] = bigram_match(term)
        return "SELECT rowid FROM messages_fts WHERE messages_fts MATCH :match"
    if like_can_use_index(term) and (case_sensitive or not has_non_ascii_case(term)):
        params["like"] = like_pattern(term)
        sql = "SELECT rowid FROM messages_trgm WHERE (content LIKE :like OR args_text LIKE :like)"
    else:
        params["match"] = trigram_match(term)
        sql = "SELECT rowid FROM messages_trgm WHERE messages_trgm MATCH :match"
    if case_sensitive:
        params["glob"] = glob_pattern(term)
        sql += " AND (content GLOB :glob OR args_text GLOB :glob)"
    return sql


def _scope(channel: str | None, params: dict[str, Any]) -> str:
    """The exclusions, plus the thread when ``channel`` is given."""
    params["kind"] = SEARCHABLE_KIND
    if channel is None:
        return SEARCHABLE_WHERE
    params["channel"] = channel
    return SEARCHABLE_WHERE + " AND t.channel = :channel"


def _recent_filter(channel: str | None, params: dict[str, Any]) -> str:
    """The ``SELECT id …`` of the newest ``:recent`` searchable messages in scope.

    With a channel it walks that thread's ``(thread_id, seq)`` index backwards; without one,
    the message table's rowid backwards. Either way it stops after ``:recent`` rows.
    """
    where = _scope(None, params)
    if channel is None:
        return f"SELECT m.id FROM {SEARCH_FROM} WHERE {where} ORDER BY m.id DESC LIMIT :recent"
    params["channel"] = channel
    return (
        f"SELECT m.id FROM {SEARCH_FROM} WHERE {where} AND m.thread_id = "
        "(SELECT id FROM threads WHERE channel = :channel) ORDER BY m.seq DESC LIMIT :recent"
    )


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


def stream_rows(pool: ConnectionPool, ids: Sequence[int]) -> Iterator[SearchableMessage]:
    """The rows of ``ids``, in that order, fetched :data:`FETCH_BATCH_MESSAGES` at a time."""
    for start in range(0, len(ids), FETCH_BATCH_MESSAGES):
        batch = ids[start : start + FETCH_BATCH_MESSAGES]
        marks = ", ".join("?" for _ in batch)
        with pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {ROW_COLUMNS} FROM {SEARCH_FROM} WHERE m.id IN ({marks})", tuple(batch)
            ).fetchall()
        by_id: dict[Any, Sequence[Any]] = {r[0]: r for r in rows}
        for rowid in batch:
            row = by_id.get(rowid)
            if row is not None:  # gone since the id query: skip it
                yield _row(row)


def _fetch(pool: ConnectionPool, sql: str, params: dict[str, Any]) -> list[Any]:
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


def _ids(pool: ConnectionPool, sql: str, params: dict[str, Any]) -> list[int]:
    return [int(r[0]) for r in _fetch(pool, sql, params)]


def candidate_sql(
    term: str, *, channel: str | None, case_sensitive: bool, limit: int, recent: int = 0
) -> tuple[str, dict[str, Any]] | None:
    """The id query behind :func:`literal_candidates` (None: nothing can find ``term``)."""
    params: dict[str, Any] = {"limit": limit}
    sources = []
    indexed = _index_filter(term, case_sensitive, params)
    if indexed is not None:
        sources.append(f"m.id IN ({indexed})")
    if recent > 0:
        params["recent"] = recent
        sources.append(f"m.id IN ({_recent_filter(channel, params)})")
    if not sources:
        return None
    sql = (
        f"SELECT m.id FROM {SEARCH_FROM} WHERE ({' OR '.join(sources)}) "
        f"AND {_scope(channel, params)} ORDER BY {SEARCH_ORDER} LIMIT :limit"
    )
    return sql, params


def literal_candidates(
    pool: ConnectionPool,
    term: str,
    *,
    channel: str | None,
    case_sensitive: bool,
    limit: int,
    recent: int = 0,
) -> Iterator[SearchableMessage]:
    """See :meth:`recallbox.storage.base.Store.literal_candidates`."""
    query = candidate_sql(
        term, channel=channel, case_sensitive=case_sensitive, limit=limit, recent=recent
    )
    if query is None:
        return iter(())
    return stream_rows(pool, _ids(pool, *query))


def keyword_messages(
    pool: ConnectionPool, phrases: Sequence[str], *, limit: int
) -> list[tuple[SearchableMessage, float]]:
    """See :meth:`recallbox.storage.base.Store.keyword_messages`."""
    match = keyword_match(phrases)
    if not match:
        return []
    params: dict[str, Any] = {"match": match, "limit": limit}
    where = _scope(None, params)
    sql = (
        f"SELECT {ROW_COLUMNS}, -bm25(messages_fts) AS score FROM messages_fts "
        "JOIN messages m ON m.id = messages_fts.rowid JOIN threads t ON t.id = m.thread_id "
        "JOIN generations g ON g.id = m.generation_id "
        f"WHERE messages_fts MATCH :match AND {where} "
        "ORDER BY bm25(messages_fts), m.uid LIMIT :limit"
    )
    return [(_row(r), float(r[8])) for r in _fetch(pool, sql, params)]
