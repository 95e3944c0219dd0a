"""Reading the candidate rows of thread search: an exact filter inside SQLite, a chunk at a time.

The candidates (``literal.py``) come as message keys (a term of 3+ characters) or row ids (a
short term), in search order; this module reads their rows lazily, :data:`FILTER_CHUNK_IDS`
at a time and at most :data:`FILTER_CHUNK_BYTES` of text per read (:func:`budgeted`), so a
common term costs the first chunks only and a search holds a bounded text whatever the
history:

* the filter: the case-sensitive pass ``instr`` of the whole term (exact); the other ``LIKE
  '%term%'`` — no ``ESCAPE`` (``%`` and ``_`` in the term are then wildcards, which only widens
  the set), ASCII case folded, by its prefix past :data:`~literal_plan.LIKE_PATTERN_MAX_CHARS`;
  none for a term with non-ASCII cased letters (``Ärger``: ``LIKE`` folds ASCII only); long
  rows pass unfiltered where the filter would backtrack (:func:`text_filter`). Every row also
  passes the whole visibility rule again (``visibility.py``: the rows are read after the
  candidates, and a quarantine may have committed in between). The caller rechecks exactly.
* :class:`RowCache`: the rows a search has read, kept for its snapshot. The case-sensitive pass
  of a term with cased letters reads with the case-insensitive filter, keeps every row, and
  hands out those that hold the term exactly; the case-insensitive pass then reads nothing
  again: it takes the kept rows and skips the keys that failed the filter.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any

import apsw

from recallbox.storage.queries import LiteralQuery, SearchFilter
from recallbox.storage.snapshots import on_snapshot_end
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.literal_index import SEQ_MASK, THREAD_SHIFT, key_sql
from recallbox.storage.sqlite.literal_plan import like_pattern
from recallbox.storage.sqlite.visibility import MESSAGE_SEARCHABLE_SQL
from recallbox.storage.values import SearchableMessage

FILTER_CHUNK_IDS = 64  # candidates filtered (and their rows read) per query, at most
FIRST_CHUNK_IDS = 16  # the first chunk of a stream (doubling): the blocks fill with about 10
#: Text (content and argument bytes) read into one query's rows at most, a longer row alone:
#: a chunk of 64 long tool outputs held 2.4 MiB at 1M messages, so a search's memory grew
#: with how long the history's longest messages are.
FILTER_CHUNK_BYTES = 1 << 18
#: Rows longer than this (content and argument text) pass the filter of a term that starts
#: with a run of one character: the caller's recheck alone filters them.
SQL_FILTER_MAX_CHARS = 4_096
#: Message text kept for the passes of one search (past it the second pass reads again).
ROW_CACHE_MAX_CHARS = 262_144

SEARCH_FROM = (
    "messages m JOIN threads t ON t.id = m.thread_id JOIN generations g ON g.id = m.generation_id"
)
ROW_COLUMNS = "m.id, m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls"
BY_KEY_FROM = (
    "json_each(?1) AS j CROSS JOIN messages m ON m.thread_id = (j.value >> "
    f"{THREAD_SHIFT}) AND m.seq = (j.value & {SEQ_MASK}) JOIN threads t ON t.id = m.thread_id "
    "JOIN generations g ON g.id = m.generation_id"
)
_BY_KEY_COLUMNS = f"{key_sql('m')}, {ROW_COLUMNS.split(', ', 1)[1]}, m.args_text"
#: ``octet_length`` reads a text's size from the record header, not its overflow pages. It
#: reads sizes without the visibility rule: they only cut the keys into runs, are never
#: returned, and every run is read by :func:`_by_key`, which applies the rule.
_SIZES_SQL = (
    f"SELECT {key_sql('m')}, octet_length(m.content) + coalesce(octet_length(m.args_text), 0) "
    f"FROM json_each(?1) AS j CROSS JOIN messages m ON m.thread_id = (j.value >> "
    f"{THREAD_SHIFT}) AND m.seq = (j.value & {SEQ_MASK})"
)


def has_non_ascii_case(term: str) -> bool:
    """True when ``term`` holds a non-ASCII letter that has another case (``LIKE`` won't fold)."""
    return any(ord(c) > 0x7F and (c.lower() != c or c.upper() != c) for c in term)


def fetch(pool: ConnectionPool, sql: str, params: Sequence[Any]) -> list[Any]:
    """The rows of a read; none when FTS5 refuses an expression built from user text."""
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


class RowCache:
    """Rows read in one read snapshot, by message key, up to :data:`ROW_CACHE_MAX_CHARS` of
    text, and the keys a case-insensitive filter has turned down, by term. Only the newest
    snapshot's are kept (a search reads one snapshot)."""

    _current: tuple[tuple[int, SearchFilter], RowCache] | None = None

    def __init__(self) -> None:
        self.rows: dict[int, SearchableMessage] = {}
        self.args: dict[int, str] = {}
        self.refused: dict[str, set[int]] = {}  # lowered term -> keys failing its LIKE
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

    @classmethod
    def forget(cls, serial: int) -> None:
        """Drop the cache of the snapshot ``serial`` (it ended)."""
        current = cls._current
        if current is not None and current[0][0] == serial:
            cls._current = None

    def keep(self, rows: dict[int, tuple[SearchableMessage, str]]) -> None:
        for key, (row, args) in rows.items():
            size = len(row.content) + len(args)
            if self.chars + size > ROW_CACHE_MAX_CHARS:
                return
            self.rows[key], self.args[key] = row, args
            self.chars += size


on_snapshot_end(RowCache.forget)


def _holds(row: SearchableMessage, args: str, term: str) -> bool:
    """``term`` is in the row's content or argument text, exactly (what ``instr`` checks)."""
    return term in row.content or term in args


def _by_key(
    pool: ConnectionPool, keys: list[int], term: str, case_sensitive: bool, where: SearchFilter
) -> dict[int, tuple[SearchableMessage, str]]:
    """The visible rows of ``keys`` passing the filter, with their argument text."""
    if not keys:
        return {}
    text, values = text_filter(term, case_sensitive=case_sensitive, first=2)
    narrow = MESSAGES.narrow(where, first=2 + len(values))
    sql = (
        f"SELECT {_BY_KEY_COLUMNS} FROM {BY_KEY_FROM} "
        f"WHERE {MESSAGE_SEARCHABLE_SQL}{text}{narrow.sql}"
    )
    rows = fetch(pool, sql, (json.dumps(keys), *values, *narrow.params))
    return {int(r[0]): (_row(r), r[8] or "") for r in rows}


def budgeted(pool: ConnectionPool, keys: list[int]) -> list[list[int]]:
    """``keys`` cut, in order, into runs of at most :data:`FILTER_CHUNK_BYTES` of text (a
    longer row alone); an unknown key counts nothing."""
    if len(keys) <= 1:
        return [keys] if keys else []
    sizes = {int(k): int(n or 0) for k, n in fetch(pool, _SIZES_SQL, (json.dumps(keys),))}
    runs: list[list[int]] = [[]]
    total = 0
    for key in keys:
        size = sizes.get(key, 0)
        if runs[-1] and total + size > FILTER_CHUNK_BYTES:
            runs.append([])
            total = 0
        runs[-1].append(key)
        total += size
    return runs


def read_by_key(
    pool: ConnectionPool,
    query: LiteralQuery,
    where: SearchFilter,
    keys: Iterator[int],
) -> Iterator[SearchableMessage]:
    """The rows of message ``keys`` that may hold the term, in the order of ``keys``, a chunk
    at a time (see the module docs for what the cache saves)."""
    term = query.term
    cache = RowCache.of(pool, where)
    folded = term.lower()
    # One read serves both passes: the case-sensitive one reads what the other will need.
    shared = cache is not None and folded != term.upper() and not has_non_ascii_case(term)
    kept = RowCache() if cache is None else cache
    refused = kept.refused.setdefault(folded, set()) if shared else set()
    size = FIRST_CHUNK_IDS
    while chunk := list(islice(keys, size)):
        size = min(size * 2, FILTER_CHUNK_IDS)
        missing = [k for k in chunk if k not in kept.rows and k not in refused]
        runs = iter(budgeted(pool, missing))
        unread = set(missing)
        found: dict[int, tuple[SearchableMessage, str]] = {}
        for key in chunk:
            if key in unread:  # the next run starts here: the previous one is done with
                run = next(runs)
                unread.difference_update(run)
                found = _by_key(pool, run, term, query.case_sensitive and not shared, where)
                if cache is not None:
                    cache.keep(found)
                if shared:
                    refused.update(k for k in run if k not in found)
            row, args = found.get(key) or (kept.rows.get(key), kept.args.get(key, ""))
            if row is None or (query.case_sensitive and shared and not _holds(row, args, term)):
                continue
            yield row
