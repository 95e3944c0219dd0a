"""FTS5 health: the heal probe behind ``recallbox doctor`` and its repair (DESIGN §4.1).

* ``INSERT INTO fts(fts, rank) VALUES('integrity-check', 1)`` compares the index with the
  content table; the plain ``integrity-check`` only checks the index against itself and does not
  see a desync.
* ``HEAL_PROBE_SAMPLES`` rows of the **content table** are sampled; a token of each (a CJK
  bigram when the row has CJK text, a trigram for the substring index) must find that row
  through ``MATCH``.
* The index's own row count (its ``_docsize`` shadow table) must equal the content table's.
* The sync triggers must exist.

Repair runs ``'rebuild'`` (which re-reads the content table) and recreates missing triggers;
only when rebuild itself reports corruption is the index dropped and recreated. Base rows are
never touched. Lock and disk errors are re-raised, never "repaired".
"""

from __future__ import annotations

from typing import Any

import apsw

from recallbox.storage.sqlite.literal_cjk import cjk_text
from recallbox.storage.sqlite.literal_index import LiteralIndex, index_backlog
from recallbox.storage.sqlite.literal_words import word_stream
from recallbox.storage.sqlite.match import quote_phrase
from recallbox.storage.sqlite.schema import FTS_INDEXES, LITERAL_INDEXES, FtsIndex
from recallbox.text.cjk import has_cjk
from recallbox.types import IndexHealth

HEAL_PROBE_SAMPLES = 20
TRIGRAM_CHARS = 3
PROBE_TOKENIZER_ARGS = ("remove_diacritics", "2")
AnyIndex = FtsIndex | LiteralIndex
# Errors that mean "the index is damaged"; anything else (busy, locked, full, I/O) propagates.
_CORRUPTION = (apsw.CorruptError, apsw.SQLError)


def _integrity_ok(conn: apsw.Connection, index: AnyIndex) -> tuple[bool, str]:
    try:
        conn.execute(f"INSERT INTO {index.name}({index.name}, rank) VALUES ('integrity-check', 1)")
    except _CORRUPTION as exc:
        return False, str(exc)
    return True, ""


def _probe_token(conn: apsw.Connection, index: AnyIndex, values: tuple[str, ...]) -> str | None:
    """A MATCH expression that must find the row holding ``values``, or None (nothing to probe).

    Word tokens come from FTS5's own unicode61 tokenizer, so the probe splits text exactly as
    the index did (Python's ``\\w`` disagrees on combining marks).
    """
    if index.probe == "trigram":
        for value in values:
            stripped = value.strip()
            if len(stripped) >= TRIGRAM_CHARS:
                return quote_phrase(stripped[:TRIGRAM_CHARS])
        return None
    if index.probe == "words":
        for value in values:
            items = word_stream(value).split()
            if items:
                return quote_phrase(items[0])
        return None
    if index.probe == "cjk":  # the content only, as the CJK index holds it
        values = (cjk_text(values[0]) or "",)
    tokenizer = conn.fts5_tokenizer("unicode61", list(PROBE_TOKENIZER_ARGS))
    text = " ".join(values).encode("utf-8")
    tokens = [
        str(token)
        for token in tokenizer(
            text, apsw.FTS5_TOKENIZE_DOCUMENT, None, include_offsets=False, include_colocated=False
        )
    ]
    if not tokens:
        return None
    cjk_tokens = [t for t in tokens if has_cjk(t)]
    return quote_phrase(cjk_tokens[0] if cjk_tokens else tokens[0])


def _sample(conn: apsw.Connection, index: AnyIndex) -> list[Any]:
    """``(rowid, *texts)`` of up to :data:`HEAL_PROBE_SAMPLES` rows the index must hold."""
    if isinstance(index, LiteralIndex):
        return conn.execute(index.sample_sql(), (HEAL_PROBE_SAMPLES,)).fetchall()
    cols = ", ".join(index.columns)
    return conn.execute(
        f"SELECT id, {cols} FROM {index.reads} "
        f"WHERE id IN (SELECT id FROM {index.content_table} ORDER BY random() LIMIT ?)",
        (HEAL_PROBE_SAMPLES,),
    ).fetchall()


def _probe(conn: apsw.Connection, index: AnyIndex) -> tuple[int, int]:
    rows = _sample(conn, index)
    probes = misses = 0
    for row in rows:
        expression = _probe_token(conn, index, tuple(str(v or "") for v in row[1:]))
        if expression is None:
            continue
        probes += 1
        try:
            found = conn.execute(
                f"SELECT 1 FROM {index.name} WHERE {index.name} MATCH ? AND rowid = ?",
                (expression, row[0]),
            ).fetchone()
        except _CORRUPTION:
            found = None
        if found is None:
            misses += 1
    return probes, misses


def _count(conn: apsw.Connection, table: str) -> int:
    return _count_sql(conn, f"SELECT count(*) FROM {table}")


def _count_sql(conn: apsw.Connection, sql: str) -> int:
    try:
        row = conn.execute(sql).fetchone()
    except _CORRUPTION:
        return -1
    return int(row[0]) if row else 0


def _expected_rows(conn: apsw.Connection, index: AnyIndex) -> int:
    """The rows the index should hold (the literal index: searchable ones not queued)."""
    if isinstance(index, LiteralIndex):
        return _count_sql(conn, index.expected_rows_sql())
    return _count(conn, index.content_table)


def _triggers_ok(conn: apsw.Connection, index: AnyIndex) -> bool:
    names = set(index.trigger_names())
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
        (index.content_table,),
    ).fetchall()
    return names <= {r[0] for r in rows}


def _table_exists(conn: apsw.Connection, name: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone()
    return row is not None


def check(conn: apsw.Connection, index: AnyIndex) -> IndexHealth:
    """Run every check on one index."""
    content_rows = _expected_rows(conn, index)
    if not _table_exists(conn, index.name):
        return IndexHealth(
            table=index.name,
            integrity_ok=False,
            probe_ok=False,
            probes=0,
            probe_misses=0,
            content_rows=content_rows,
            index_rows=0,
            triggers_ok=_triggers_ok(conn, index),
            detail="index table is missing",
        )
    integrity_ok, detail = _integrity_ok(conn, index)
    probes, misses = _probe(conn, index)
    return IndexHealth(
        table=index.name,
        integrity_ok=integrity_ok,
        probe_ok=misses == 0,
        probes=probes,
        probe_misses=misses,
        content_rows=content_rows,
        index_rows=_count(conn, f"{index.name}_docsize"),
        triggers_ok=_triggers_ok(conn, index),
        detail=detail,
    )


def all_indexes() -> list[AnyIndex]:
    """Every full-text index ``doctor`` checks: the ranked ones, then the literal one."""
    return [*FTS_INDEXES.values(), *LITERAL_INDEXES.values()]


def check_all(conn: apsw.Connection) -> list[IndexHealth]:
    """Check every full-text index."""
    return [check(conn, index) for index in all_indexes()]


def _recreate(conn: apsw.Connection, index: AnyIndex) -> None:
    for trigger in index.trigger_names():
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    conn.execute(f"DROP TABLE IF EXISTS {index.name}")
    conn.execute(index.create_sql())
    for statement in index.trigger_sql():
        conn.execute(statement)
    _rebuild(conn, index)


def _rebuild(conn: apsw.Connection, index: AnyIndex) -> None:
    """Refill the index from its content (the literal index: empty it, queue every row, and
    index the queue now)."""
    if isinstance(index, LiteralIndex):
        for table in index.tables:  # the backlog refills them all: none may keep a row
            if _table_exists(conn, table):
                conn.execute(f"DELETE FROM {table}")
            else:
                conn.execute(LITERAL_INDEXES[table].create_sql())
        conn.execute(index.backlog_sql())
        conn.execute(index.enqueue_all_sql())
        while index_backlog(conn):
            pass
        return
    conn.execute(f"INSERT INTO {index.name}({index.name}) VALUES ('rebuild')")


def repair(conn: apsw.Connection, index: AnyIndex) -> str:
    """Rebuild one index from its content table; drop and recreate it when rebuild fails."""
    if not _table_exists(conn, index.name):
        _recreate(conn, index)
        return f"{index.name}: recreated (was missing)"
    if not _triggers_ok(conn, index):
        for trigger in index.trigger_names():
            conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
        for statement in index.trigger_sql():
            conn.execute(statement)
    try:
        _rebuild(conn, index)
    except _CORRUPTION:
        _recreate(conn, index)
        return f"{index.name}: dropped and recreated"
    ok, _ = _integrity_ok(conn, index)
    if not ok:
        _recreate(conn, index)
        return f"{index.name}: dropped and recreated"
    return f"{index.name}: rebuilt"


def repair_all(conn: apsw.Connection) -> list[str]:
    """Repair every index; returns one line per index."""
    return [repair(conn, index) for index in all_indexes()]
