"""The candidate window of a global ranked keyword search on SQLite (#14; the set is defined
by :class:`~recallbox.storage.queries.RankWindow`).

Ranking inside FTS5 scores every matching row before the best ``n`` are kept
(about 1 µs per row: a ``_docsize`` lookup and the row's position lists), so a word in most
rows of a million costs most of a second. With a window, three cheap passes replace that:

1. :func:`window_start` — the row id of the ``matches``-th newest match of the whole query
   (``ORDER BY rowid DESC LIMIT 1 OFFSET n``: FTS5 walks the doclists backwards and stops;
   no row is scored). ``None`` when the query matches at most ``matches`` rows: then every
   match is ranked, as without a window. Rows the privacy gate denies are not counted
   (:class:`AllowedRows`, DESIGN §5): were they, a query term held only by denied rows would
   fill the window and widen it, and the visible rows ranked would tell how many there are.
2. The window itself is scored inside FTS5 (``-bm25() … AND rowid >= start``, the best kept by
   SQLite's sorter): FTS5's own ``bm25()``, whose IDF and average length still come from the
   whole index (its IDF pass counts each phrase's whole doclist, in C, without scoring rows).
3. :func:`older_rare_scores` — the older rows of the query's *rare* phrases (each held by at
   most ``rare_rows`` rows older than the window, counted with a bounded pass), scored here
   with the same arithmetic as FTS5's ``bm25()`` (``recallbox.ranking.bm25``): each row's
   token count and phrase frequencies from an FTS5 auxiliary function over
   ``(<rare phrases>) AND (<every phrase>)`` (so the frequencies of every query phrase are
   read, in query order), the row count and token total from the index's totals, and each
   phrase's document frequency from a ``count(*)`` of its matches. A phrase's rarity counts
   allowed rows only, as the window does.

Rows of the window and older rows are then one candidate set, ranked by the same score.

Before all that, :func:`few_matches` reads the newest matches with their frequencies, up to
``FEW_MATCHES``: a query matching fewer rows is ranked from that one read, exactly (it changes
how the ranking is computed, never what it is).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import apsw

from recallbox.ranking.bm25 import bm25_idf, bm25_score
from recallbox.storage.sqlite.match import any_of

#: The FTS5 auxiliary function that reports the index's row count and token total.
TOTALS_FUNCTION = "recallbox_index_totals"


def index_totals(api: apsw.FTS5ExtensionApi, *_args: object) -> str:
    """``"<rows> <tokens>"`` of the whole index (what FTS5's ``bm25()`` reads as N and the
    total that ``avgdl`` divides)."""
    return f"{api.row_count} {api.column_total_size(-1)}"


@dataclass(frozen=True, slots=True)
class AllowedRows:
    """How a window counts only the rows the privacy gate allows, when some rows are denied:
    ``joins`` lead from the index's row (``<fts>.rowid``) to what the gate reads, ``sql``
    (``" AND …"``) is the gate with the call's exclusions, binding ``params``."""

    joins: str
    sql: str
    params: tuple[object, ...]


def _one(conn: apsw.Connection, sql: str, *params: object) -> object:
    """The first column of the first row (the statements here always answer one)."""
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def few_matches(
    conn: apsw.Connection,
    fts: str,
    phrases: Sequence[str],
    *,
    cap: int,
    freqs_function: str,
) -> dict[int, float] | None:
    """``{rowid: s}`` of every row matching ``phrases`` when fewer than ``cap`` do (``None``
    otherwise), ``s`` FTS5's ``−bm25()`` computed here: with every match at hand, each
    phrase's document frequency is the number of them holding it. One walk of the doclists
    (FTS5's own ranking walks them twice: once for the IDF, once for the rows), which matters
    for a phrase of common words that few rows hold (``/srv/app/lib``)."""
    found: list[tuple[int, int, list[int]]] = []
    for rowid, packed in conn.execute(
        f"SELECT rowid, {freqs_function}({fts}) FROM {fts} WHERE {fts} MATCH ? "
        "ORDER BY rowid DESC LIMIT ?",
        (any_of(phrases), cap),
    ):
        length, *counts = (int(x) for x in str(packed).split())
        found.append((int(rowid), length, counts))
    if len(found) >= cap:
        return None
    if not found:
        return {}
    totals = _one(
        conn,
        f"SELECT {TOTALS_FUNCTION}({fts}) FROM {fts} WHERE {fts} MATCH ? AND rowid = ?",
        any_of(phrases),
        found[0][0],
    )
    n_rows, n_tokens = (int(x) for x in str(totals).split())
    df = [sum(1 for _, _, counts in found if counts[i] > 0) for i in range(len(phrases))]
    idfs = [bm25_idf(n_rows, d) for d in df]
    avgdl = n_tokens / n_rows
    return {rowid: bm25_score(counts, idfs, length, avgdl) for rowid, length, counts in found}


def window_start(
    conn: apsw.Connection, fts: str, match: str, matches: int, allowed: AllowedRows | None = None
) -> int | None:
    """The row id of the ``matches``-th newest row matching ``match`` (``None``: fewer), among
    the ``allowed`` rows (``None``: every row is)."""
    gate = allowed or AllowedRows("", "", ())
    row = conn.execute(
        f"SELECT {fts}.rowid FROM {fts} {gate.joins} WHERE {fts} MATCH ?{gate.sql} "
        f"ORDER BY {fts}.rowid DESC LIMIT 1 OFFSET ?",
        (match, *gate.params, max(0, matches - 1)),
    ).fetchone()
    return None if row is None else int(row[0])


def rare_phrases(
    conn: apsw.Connection,
    fts: str,
    phrases: Sequence[str],
    start: int,
    rare_rows: int,
    allowed: AllowedRows | None = None,
) -> list[str]:
    """The distinct phrases (in query order) that 1 to ``rare_rows`` rows older than
    ``start`` hold (``allowed`` rows only, when given); each count stops at
    ``rare_rows + 1``."""
    gate = allowed or AllowedRows("", "", ())
    rare: list[str] = []
    for phrase in dict.fromkeys(phrases):
        row = conn.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {fts} {gate.joins} WHERE {fts} MATCH ? "
            f"AND {fts}.rowid < ?{gate.sql} LIMIT ?)",
            (phrase, start, *gate.params, rare_rows + 1),
        ).fetchone()
        if row is not None and 0 < int(row[0]) <= rare_rows:
            rare.append(phrase)
    return rare


def older_rare_scores(
    conn: apsw.Connection,
    fts: str,
    phrases: Sequence[str],
    *,
    start: int,
    rare_rows: int,
    freqs_function: str,
    allowed: AllowedRows | None = None,
) -> dict[int, float]:
    """``{rowid: s}`` of every row older than ``start`` that holds a rare phrase (see
    :func:`rare_phrases`; ``allowed`` as there), ``s`` FTS5's ``−bm25()`` of the whole query
    ``phrases`` over the whole index (the same floats: same formula, same operation order).
    Denied rows may be among them: the caller's rule drops them, as it drops the window's."""
    rare = rare_phrases(conn, fts, phrases, start, rare_rows, allowed)
    if not rare:
        return {}
    expression = f"({any_of(rare)}) AND ({any_of(phrases)})"
    found: list[tuple[int, int, list[int]]] = []
    for rowid, packed in conn.execute(
        f"SELECT rowid, {freqs_function}({fts}) FROM {fts} WHERE {fts} MATCH ? AND rowid < ?",
        (expression, start),
    ):
        length, *counts = (int(x) for x in str(packed).split())
        found.append((int(rowid), length, counts[len(rare) :]))
    if not found:
        return {}
    totals = _one(conn, f"SELECT {TOTALS_FUNCTION}({fts}) FROM {fts} WHERE {fts} MATCH ? LIMIT 1",
                  any_of(rare))  # fmt: skip
    n_rows, n_tokens = (int(x) for x in str(totals).split())
    count_sql = f"SELECT count(*) FROM {fts} WHERE {fts} MATCH ?"
    df = {phrase: int(str(_one(conn, count_sql, phrase))) for phrase in dict.fromkeys(phrases)}
    idfs = [bm25_idf(n_rows, df[phrase]) for phrase in phrases]
    avgdl = n_tokens / n_rows
    return {rowid: bm25_score(counts, idfs, length, avgdl) for rowid, length, counts in found}
