"""The candidate window of a global ranked keyword search on PostgreSQL (#14, #16; the set is
defined by :class:`~recallbox.storage.queries.RankWindow`, the SQLite twin is
``storage/sqlite/keyword_window.py``).

Exact ranking reads the positions of every matching row (``KeywordCorpus.ranked_sql``), a few
µs a row: a word in most rows of a large corpus costs most of a second. With a window:

1. :func:`window_condition` finds the ``size``-th newest matching row (row order is the table's
   ``id``, insertion order): the newest ``size + 1`` rows whose ``tsvector`` matches, found
   backwards through the primary key, and the overflow rows (``fts IS NULL``, their positions
   in ``T_fts_overflow``) that hold a phrase, found through their terms and counted exactly.
   No more matches than ``size``: ``None``, and every match is ranked, as without a window.
2. Each distinct phrase older than the window is counted (``fts @@ phrase`` and the overflow
   rows, stopping at ``rare_rows + 1``); a phrase that 1 to ``rare_rows`` older rows hold is
   *rare*, and every older row holding one is a candidate.
3. The ranked statement scores the candidates only (``id >= start`` or a rare phrase), with
   the IDF and average length of the whole corpus, as without a window.

Steps 1 and 2 count the rows the privacy gate and the call's exclusions allow only
(:class:`AllowedRows`, DESIGN §5): were denied rows counted, a query term only they hold
would fill the window and widen it, and the visible rows ranked would tell how many there are.

A ``tsvector`` holds every position of a row that is not an overflow row, so ``fts @@
phrase`` is exactly "the row holds the phrase".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from recallbox.storage.postgres.connection import Connection
from recallbox.storage.postgres.corpora import Corpus
from recallbox.storage.postgres.keyword import tsquery_literal


@dataclass(frozen=True, slots=True)
class AllowedRows:
    """How a window counts only the rows the privacy gate allows, when some rows are denied:
    ``joins`` lead from the corpus's row to what the gate reads, ``sql`` (``" AND …"``) is the
    gate with the call's exclusions, binding the named ``params``. The default: every row."""

    joins: str = ""
    sql: str = ""
    params: dict[str, Any] = field(default_factory=dict)


EVERY_ROW = AllowedRows()


def overflow_holders(
    conn: Connection,
    c: Corpus,
    params: dict[str, Any],
    n_phrases: int,
    scope_sql: str = "",
    allowed: AllowedRows = EVERY_ROW,
) -> dict[int, list[int]]:
    """Row id -> the frequency of each phrase, of the (``allowed``) overflow rows holding a
    phrase (their positions are read: overflow rows are few, ~0.4 % of a corpus)."""
    a = c.alias
    sql = c.keyword.frequencies_sql(
        joins=allowed.joins,
        where=f"{a}.fts IS NULL{scope_sql}{allowed.sql}",
        key=f"{a}.id",
        alias=a,
    )
    out: dict[int, list[int]] = {}
    for key, _, phrase, freq in conn.execute(sql, {**params, **allowed.params}).fetchall():
        out.setdefault(int(key), [0] * n_phrases)[int(phrase) - 1] = int(freq)
    return out


def phrase_rows(
    conn: Connection,
    c: Corpus,
    phrase: Sequence[str],
    *,
    before: int | None = None,
    cap: int | None = None,
    scope_sql: str = "",
    params: dict[str, Any] | None = None,
    allowed: AllowedRows = EVERY_ROW,
) -> int:
    """How many (``allowed``) ``tsvector`` rows hold ``phrase`` (older than row ``before``;
    at most ``cap``)."""
    a = c.alias
    older = f" AND {a}.id < %(before)s" if before is not None else ""
    limit = " LIMIT %(cap)s" if cap is not None else ""
    row = conn.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {c.keyword.table} {a} {allowed.joins} "
        f"WHERE {a}.fts @@ %(phrase)s::tsquery{older}{scope_sql}{allowed.sql}{limit}) AS held",
        {
            **(params or {}),
            **allowed.params,
            "phrase": tsquery_literal([phrase]),
            "before": before,
            "cap": cap,
        },
    ).fetchone()
    return int(row[0]) if row else 0


def window_condition(
    conn: Connection,
    c: Corpus,
    phrases: Sequence[Sequence[str]],
    params: dict[str, Any],
    *,
    size: int,
    rare_rows: int,
    allowed: AllowedRows = EVERY_ROW,
) -> tuple[str, dict[str, Any]] | None:
    """The SQL condition (over ``c.alias``) holding exactly the window's candidates of ``size``
    newest ``allowed`` matches, with its parameters; ``None`` when at most ``size`` allowed
    rows match."""
    a = c.alias
    newest = [
        int(r[0])
        for r in conn.execute(
            f"SELECT {a}.id FROM {c.keyword.table} {a} {allowed.joins} "
            f"WHERE {a}.fts @@ %(tsq)s::tsquery{allowed.sql} ORDER BY {a}.id DESC LIMIT %(n)s",
            {**params, **allowed.params, "n": size + 1},
        ).fetchall()
    ]
    overflow = overflow_holders(conn, c, params, len(phrases), allowed=allowed)
    matching = sorted({*newest, *overflow}, reverse=True)
    if len(matching) <= size:
        return None
    start = matching[size - 1]
    rare: list[int] = []
    for number, phrase in enumerate(phrases):
        if not phrase or any(phrases[i] == phrase for i in rare):
            continue
        older = sum(1 for rid, f in overflow.items() if rid < start and f[number] > 0)
        if older <= rare_rows:
            older += phrase_rows(
                conn, c, phrase, before=start, cap=rare_rows + 1 - older, allowed=allowed
            )
        if 1 <= older <= rare_rows:
            rare.append(number)
    held = [rid for rid, f in overflow.items() if rid < start and any(f[i] > 0 for i in rare)]
    tsq = tsquery_literal([phrases[i] for i in rare])
    condition = (
        f"({a}.id >= %(w_start)s"
        + (f" OR {a}.fts @@ %(w_rare)s::tsquery" if tsq else "")
        + f" OR {a}.id = ANY(%(w_held)s::bigint[]))"
    )
    return condition, {"w_start": start, "w_rare": tsq, "w_held": held}
