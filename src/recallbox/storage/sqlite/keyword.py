"""The keyword index of the SQLite backend, over any corpus (``corpora.py``): FTS5 ``bm25()``.

* :meth:`KeywordMixin.keyword_ranked` ranks by ``s = −bm25(<fts>)``: BM25 over the whole
  index (IDF and average length of every row), as FTS5 computes it. FTS5 scores and SQLite's
  sorter keeps the best rows (``ORDER BY -bm25() LIMIT``: no row of the content table is
  read), then the rule is applied to those rows, fetching more when hidden rows or a tie at
  the cut leave the answer unsure. With a :class:`~recallbox.storage.queries.RankWindow`, a
  query matching many rows ranks its candidate set only (``keyword_window.py``).
* :meth:`KeywordMixin.keyword_scope` reports what BM25 over one thread needs: the thread's row
  count and token total (from the index's ``_docsize`` table: one varint per column, the row's
  token count), each phrase's document frequency in the thread, and each matching row's length
  and phrase frequencies (an FTS5 auxiliary function, FTS5's own counts). The ranking above the
  store (``recallbox.ranking.bm25``) turns them into scores.

Both render the typed query themselves (``match.py``) and apply the visibility rule.
"""

from __future__ import annotations

import heapq
import math
import weakref
from collections.abc import Callable, Sequence

import apsw

from recallbox.errors import InvalidArgument
from recallbox.storage.queries import LexicalQuery, RankWindow, SearchFilter
from recallbox.storage.sqlite import keyword_window as kw
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import Corpus, corpus_of
from recallbox.storage.sqlite.match import any_of, phrase_strings
from recallbox.storage.sqlite.rows import json_list
from recallbox.storage.sqlite.visibility import thread_gate, without_channel
from recallbox.storage.values import KeywordScope, RowFrequencies

#: Ranked rows fetched per wanted hit before the rule is applied (hidden rows are rare).
RANK_OVERFETCH = 2
#: How much the fetch grows when the visible rows do not fill the limit, or a tie crosses it.
RANK_GROWTH = 4
#: A windowed search whose query matches fewer rows than this ranks them from one read of
#: their frequencies (``keyword_window.few_matches``); Python reads a row in a few µs.
FEW_MATCHES = 256
#: The FTS5 auxiliary function that reports a row's token count and phrase frequencies.
PHRASE_FREQS_FUNCTION = "recallbox_phrase_freqs"


def _phrase_freqs(api: apsw.FTS5ExtensionApi, *_args: object) -> str:
    """``"<tokens> <f_1> … <f_n>"`` for the current row (FTS5's own counts, as bm25() sees)."""
    counts = [str(api.column_size(-1))]
    counts.extend(str(sum(map(len, api.phrase_locations(p)))) for p in range(api.phrase_count))
    return " ".join(counts)


_registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def register_functions(conn: apsw.Connection) -> None:
    """Register :data:`PHRASE_FREQS_FUNCTION` on ``conn`` once."""
    if conn not in _registered:
        conn.register_fts5_function(PHRASE_FREQS_FUNCTION, _phrase_freqs)
        conn.register_fts5_function(kw.TOTALS_FUNCTION, kw.index_totals)
        _registered.add(conn)


def decode_varint(blob: bytes, pos: int = 0) -> tuple[int, int]:
    """One SQLite varint of ``blob`` at ``pos``: ``(value, next position)``."""
    value = 0
    for i in range(8):
        byte = blob[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | blob[pos + 8], pos + 9


def _rank(
    conn: apsw.Connection,
    fts: str,
    match: str,
    limit: int,
    allowed: Callable[[Sequence[int]], dict[int, str]],
) -> list[tuple[str, float]]:
    """The best ``limit`` visible rows matching ``match`` (every match ranked), ties by id.

    FTS5 scores the matches (``bm25()``) and SQLite's sorter keeps the best ``fetch`` (no row
    of the content table is read; measured faster than FTS5's own ``ORDER BY rank``: 25 against
    48 ms for the 10 000 newest of 711 000 rows of a million); then the rule is applied to
    those rows only, fetching more when hidden rows or a tie at the cut leave the answer unsure.
    """
    sql = f"SELECT rowid, -bm25({fts}) AS s FROM {fts} WHERE {fts} MATCH ? ORDER BY s DESC LIMIT ?"
    fetch = limit * RANK_OVERFETCH
    while True:
        ranked = [(int(r[0]), float(r[1])) for r in conn.execute(sql, (match, fetch))]
        shown = allowed([r for r, _ in ranked])
        hits = [(shown[r], score) for r, score in ranked if r in shown]
        hits.sort(key=lambda h: (-h[1], h[0]))
        if len(ranked) < fetch or (len(hits) >= limit and ranked[-1][1] < hits[limit - 1][1]):
            # Every match was ranked, or the cut falls strictly between two scores (a tie
            # across it could put a lower id first).
            return hits[:limit]
        fetch *= RANK_GROWTH


def _scored(
    conn: apsw.Connection, fts: str, match: str, start: int | None, fetch: int | None
) -> list[tuple[int, float]]:
    """``(rowid, −bm25())`` of the best ``fetch`` (``None``: all) matches from row id ``start``
    on (``None``: every match), best first: FTS5 scores, SQLite's sorter keeps the best."""
    bound = "" if start is None else " AND rowid >= ?"
    cut = "" if fetch is None else " LIMIT ?"
    params: tuple[object, ...] = (match,) if start is None else (match, start)
    sql = f"SELECT rowid, -bm25({fts}) AS s FROM {fts} WHERE {fts} MATCH ?{bound} ORDER BY s DESC"
    rows = conn.execute(sql + cut, params if fetch is None else (*params, fetch))
    return [(int(r[0]), float(r[1])) for r in rows]


def _window_hits(
    conn: apsw.Connection,
    fts: str,
    match: str,
    start: int | None,
    older: dict[int, float],
    limit: int,
    allowed: Callable[[Sequence[int]], dict[int, str]],
) -> list[tuple[str, float]]:
    """The best ``limit`` visible rows of a bounded set (the matches from ``start`` on, or every
    match when fewer than the window holds) and the scored ``older`` rows, ties by id.

    The best ``limit · RANK_OVERFETCH`` of the set come first; when the answer is not settled
    above the last of them (hidden rows, or a tie at the cut: a log line's rows tie by the
    hundred), the whole set is scored once more (never a third time)."""
    ranked_older = sorted(older.items(), key=_best)
    fetch: int | None = limit * RANK_OVERFETCH
    while True:
        rows = _scored(conn, fts, match, start, fetch)
        complete = fetch is None or len(rows) < fetch
        floor = -math.inf if complete else rows[-1][1]
        merged = list(heapq.merge(rows, ranked_older, key=_best))
        # every row scoring above ``floor`` is here, in order (an unread one scores at most it)
        order = merged if complete else [p for p in merged if p[1] > floor]
        hits = _best_visible(order, limit, allowed)
        if complete or (len(hits) >= limit and hits[limit - 1][1] > floor):
            return hits
        fetch = None


def _best(pair: tuple[int, float]) -> float:
    """The sort key of a scored row, best first."""
    return -pair[1]


def _best_visible(
    order: Sequence[tuple[int, float]],
    limit: int,
    allowed: Callable[[Sequence[int]], dict[int, str]],
) -> list[tuple[str, float]]:
    """The best ``limit`` visible rows of ``order`` (``(rowid, s)``, best first), ties by id:
    the rule is asked about the best rows a batch at a time, until every row left scores below
    the ``limit``-th visible one (a tie at the cut is read whole)."""
    hits: list[tuple[str, float]] = []
    at, batch = 0, limit * RANK_OVERFETCH
    while at < len(order):
        chunk = order[at : at + batch]
        at += batch
        shown = allowed([r for r, _ in chunk])
        hits.extend((shown[r], score) for r, score in chunk if r in shown)
        if len(hits) >= limit:
            hits.sort(key=lambda h: (-h[1], h[0]))
            if at >= len(order) or order[at][1] < hits[limit - 1][1]:
                break
        batch *= RANK_GROWTH
    hits.sort(key=lambda h: (-h[1], h[0]))
    return hits[:limit]


def _window_gate(conn: apsw.Connection, c: Corpus, where: SearchFilter) -> kw.AllowedRows | None:
    """What a window counts (``keyword_window.AllowedRows``): the rows whose thread the privacy
    gate and the call's exclusions allow; ``None`` (every row: no join to read) when no thread
    is denied, which is the same set. The filter's channel is no part of it: a window counts
    every thread's matches (``RankWindow``)."""
    privacy = without_channel(where)
    if c.channel_sql is not None:
        threads = thread_gate(privacy)
        denied = conn.execute(
            f"SELECT EXISTS (SELECT 1 FROM threads t WHERE NOT coalesce((1{threads.sql}), 0))",
            threads.params,
        ).fetchone()
        if denied is None or not denied[0]:
            return None
    narrow = c.narrow(privacy)
    joins = f"JOIN {c.table} {c.alias} ON {c.alias}.id = {c.fts}.rowid {c.joins}"
    return kw.AllowedRows(joins, f" AND {c.gate}{narrow.sql}", narrow.params)


class KeywordMixin:
    """:class:`~recallbox.storage.base.KeywordIndex` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def keyword_ranked(
        self,
        corpus: str,
        query: LexicalQuery,
        *,
        where: SearchFilter,
        limit: int,
        window: RankWindow | None = None,
    ) -> list[tuple[str, float]]:
        c = corpus_of(corpus)
        narrow = c.narrow(where)
        if query.is_empty or limit < 1:
            return []
        phrases = phrase_strings(query)
        match = any_of(phrases)
        rule_sql = (
            f"SELECT {c.alias}.id, {c.public_id} FROM json_each(?) AS j "
            f"CROSS JOIN {c.table} {c.alias} ON {c.alias}.id = j.value {c.joins} "
            f"WHERE {c.rule}{narrow.sql}"
        )

        with self.pool.snapshot() as conn:

            def allowed(rowids: Sequence[int]) -> dict[int, str]:
                rows = conn.execute(rule_sql, (json_list(list(rowids)), *narrow.params))
                return {int(r[0]): str(r[1]) for r in rows}

            if window is None:
                return _rank(conn, c.fts, match, limit, allowed)
            register_functions(conn)
            cap = min(FEW_MATCHES, window.matches)  # fewer matches: no window applies
            few = kw.few_matches(
                conn, c.fts, phrases, cap=cap, freqs_function=PHRASE_FREQS_FUNCTION
            )
            if few is not None:  # every match is at hand, scored: the exact ranking
                return _best_visible(sorted(few.items(), key=_best), limit, allowed)
            size = window.matches
            gate = _window_gate(conn, c, where)
            while True:
                start = kw.window_start(conn, c.fts, match, size, gate)
                older: dict[int, float] = {}
                if start is not None:
                    older = kw.older_rare_scores(
                        conn,
                        c.fts,
                        phrases,
                        start=start,
                        rare_rows=window.rare_rows,
                        freqs_function=PHRASE_FREQS_FUNCTION,
                        allowed=gate,
                    )
                hits = _window_hits(conn, c.fts, match, start, older, limit, allowed)
                if start is None or len(hits) >= limit:
                    return hits
                # Trigger: hidden or filtered rows fill the window. Why: a search must not
                # return fewer hits than the matches it may see. Outcome: a wider window.
                size *= window.growth

    def keyword_scope(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """Over the rows of one thread: a corpus of thread rows (``thread_id``)."""
        c = corpus_of(corpus)
        if where.channel is None:
            raise InvalidArgument("keyword_scope needs a channel: the thread is the scope")
        c.narrow(where)  # an unsupported filter raises
        gate = thread_gate(without_channel(where))
        phrases = phrase_strings(query)
        a = c.alias
        with self.pool.snapshot() as conn:
            row = conn.execute(
                f"SELECT t.id FROM threads t WHERE t.channel = ?{gate.sql}",
                (where.channel, *gate.params),
            ).fetchone()
            if row is None:
                return None
            thread_id = int(row[0])
            rows = tokens = 0
            for (size,) in conn.execute(
                f"SELECT d.sz FROM {c.table} {a} JOIN {c.fts}_docsize d ON d.id = {a}.id "
                f"WHERE {a}.thread_id = ?",
                (thread_id,),
            ):
                rows += 1
                tokens += decode_varint(bytes(size))[0] if size else 0
            if not phrases or not rows:
                return KeywordScope(rows, tokens, (0,) * len(phrases), ())
            register_functions(conn)
            df = [0] * len(phrases)
            matches: list[RowFrequencies] = []
            # The thread's rows lie between its first and last row id: the index is read in
            # that range only (a common word's whole doclist is never walked).
            span = conn.execute(
                f"SELECT min(id), max(id) FROM {c.table} WHERE thread_id = ?", (thread_id,)
            ).fetchone()
            low, high = span if span is not None else (None, None)
            for rid, visible, packed in conn.execute(
                f"SELECT {c.public_id}, {c.visible}, {PHRASE_FREQS_FUNCTION}({c.fts}) "
                f"FROM {c.fts} JOIN {c.table} {a} ON {a}.id = {c.fts}.rowid "
                f"JOIN threads t ON t.id = {a}.thread_id "
                f"WHERE {c.fts} MATCH ? AND {c.fts}.rowid BETWEEN ? AND ? "
                f"AND {a}.thread_id = ?{gate.sql}",
                (any_of(phrases), low, high, thread_id, *gate.params),
            ):
                length, *freqs = (int(x) for x in str(packed).split())
                for i, freq in enumerate(freqs):
                    df[i] += freq > 0
                if visible:
                    matches.append(RowFrequencies(str(rid), length, tuple(freqs)))
        return KeywordScope(rows, tokens, tuple(df), tuple(matches))
