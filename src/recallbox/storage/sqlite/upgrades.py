"""The batched parts of long migrations: what they do per batch, how far they are, how they end.

A migration in ``schema.py`` is a list of statements run in one transaction. One that must
touch every row of a big history also has a :class:`Batched` part here, keyed by the
migration's **name** (numbers are fixed at merge time, names never change): the runner
(``migrations.py``) records a progress row with the statements, then runs :attr:`Batched.step`
in its own ``BEGIN IMMEDIATE`` transaction per batch, with the stored cursor, until it
reports done, and :attr:`Batched.finish` in the last one. An interrupted migration resumes
from its cursor the next time the database is opened.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import apsw

from recallbox.storage.sqlite.literal_cjk import CJK_TABLE
from recallbox.storage.sqlite.literal_index import (
    BACKLOG_TABLE,
    CJK_GLOB,
    backlog_size,
    cjk_rows,
    index_backlog,
    key_sql,
    searchable,
    word_rows,
)
from recallbox.storage.sqlite.literal_words import WORDS_TABLE
from recallbox.storage.sqlite.schema import (
    MIGRATION_CJK_INDEX,
    MIGRATION_LITERAL_INDEX,
    MIGRATION_TEXT_ONCE,
    MIGRATION_WORD_INDEX,
    TEXT_ONCE_INDEXES,
    FtsIndex,
)

#: Queued messages indexed per migration transaction (the database is not in use meanwhile).
MIGRATION_INDEX_ROWS = 2_000
#: Row ids per text-stored-once transaction.
TEXT_ONCE_ID_RANGE = 20_000


@dataclass
class Progress:
    """Where a batched migration is: ``phase``, ``cursor`` (its own meaning), ``done`` of
    ``total`` units of work (for the progress bar)."""

    phase: int = 0
    cursor: int = 0
    done: int = 0
    total: int = 0


@dataclass(frozen=True)
class Batched:
    """The batched part of one migration."""

    total: Callable[[apsw.Connection], int]
    step: Callable[[apsw.Connection, Progress], bool]  # one batch; True when nothing is left
    finish: Callable[[apsw.Connection], None]


def _count(conn: apsw.Connection, sql: str) -> int:
    row = conn.execute(sql).fetchone()
    return int(row[0] or 0) if row else 0


# -- literal index by thread ---------------------------------------------------------------------
def _literal_step(conn: apsw.Connection, progress: Progress) -> bool:
    taken = index_backlog(conn, MIGRATION_INDEX_ROWS, words=False)
    progress.done += taken
    return taken == 0


LITERAL_INDEX = Batched(
    total=lambda conn: backlog_size(conn),
    step=_literal_step,
    finish=lambda conn: None,
)


# -- text stored once ----------------------------------------------------------------------------
def _text_once_step(conn: apsw.Connection, progress: Progress) -> bool:
    """Blank ``content_seg`` where it equals ``content``: messages (phase 0), then chunks."""
    while progress.phase < len(TEXT_ONCE_INDEXES):
        table = TEXT_ONCE_INDEXES[progress.phase].content_table
        top = _count(conn, f"SELECT max(id) FROM {table}")
        if progress.cursor >= top:
            progress.phase += 1
            progress.cursor = 0
            continue
        high = progress.cursor + TEXT_ONCE_ID_RANGE
        conn.execute(
            f"UPDATE {table} SET content_seg = '' WHERE id > ? AND id <= ? "
            "AND content_seg = content AND content_seg != ''",
            (progress.cursor, high),
        )
        progress.done += min(high, top) - progress.cursor
        progress.cursor = high
        return False
    return True


def repoint(conn: apsw.Connection, index: FtsIndex) -> None:
    """Point an external-content FTS5 index at ``index.reads`` and (re)create its triggers.

    Its index data does not change (the view yields the text it was built from), so the
    ``CREATE VIRTUAL TABLE`` statement in the schema is rewritten in place (``writable_schema``,
    with the schema cookie bumped so every connection reloads it) instead of rebuilding it.
    """
    version = _count(conn, "PRAGMA schema_version")
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute(
            "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?",
            (index.create_sql(), index.name),
        )
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    for name in index.trigger_names():
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in index.trigger_sql():
        conn.execute(statement)


def _text_once_finish(conn: apsw.Connection) -> None:
    for index in TEXT_ONCE_INDEXES:
        repoint(conn, index)


TEXT_ONCE = Batched(
    total=lambda conn: sum(
        _count(conn, f"SELECT max(id) FROM {index.content_table}") for index in TEXT_ONCE_INDEXES
    ),
    step=_text_once_step,
    finish=_text_once_finish,
)

#: Migration name -> its batched part.
# -- the word index -------------------------------------------------------------------------------
_INDEXED_ROWS = (
    f"FROM messages m WHERE {searchable('m')} "
    f"AND NOT EXISTS (SELECT 1 FROM {BACKLOG_TABLE} b WHERE b.id = m.id)"
)


def _words_step(conn: apsw.Connection, progress: Progress) -> bool:
    """Write the words of the next messages (by id) the trigram index holds."""
    rows = conn.execute(
        f"SELECT m.id, {key_sql('m')}, m.content, m.args_text {_INDEXED_ROWS} AND m.id > ? "
        "ORDER BY m.id LIMIT ?",
        (progress.cursor, MIGRATION_INDEX_ROWS),
    ).fetchall()
    if not rows:
        return True
    conn.executemany(
        f"INSERT INTO {WORDS_TABLE} (rowid, content, args_text) VALUES (?, ?, ?)",
        word_rows([row[1:] for row in rows]),
    )
    last = rows[-1][0]
    assert isinstance(last, int)
    progress.cursor = last
    progress.done += len(rows)
    return False


WORD_INDEX = Batched(
    total=lambda conn: _count(conn, f"SELECT count(*) {_INDEXED_ROWS}"),
    step=_words_step,
    finish=lambda conn: None,
)


# -- the CJK index --------------------------------------------------------------------------------
#: Message ids the CJK index migration reads per transaction (a few hold CJK; every content is
#: read once, in id order).
CJK_ID_RANGE = 20_000


def _cjk_step(conn: apsw.Connection, progress: Progress) -> bool:
    """Write the CJK tokens of the next id range's messages the trigram index holds."""
    top = _count(conn, "SELECT max(id) FROM messages")
    if progress.cursor >= top:
        return True
    high = progress.cursor + CJK_ID_RANGE
    rows = conn.execute(
        f"SELECT {key_sql('m')}, m.content {_INDEXED_ROWS} AND m.id > ? AND m.id <= ? "
        "AND m.content GLOB ?",
        (progress.cursor, high, CJK_GLOB),
    ).fetchall()
    conn.executemany(f"INSERT INTO {CJK_TABLE} (rowid, content) VALUES (?, ?)", cjk_rows(rows))
    progress.done += min(high, top) - progress.cursor
    progress.cursor = high
    return False


CJK_INDEX = Batched(
    total=lambda conn: _count(conn, "SELECT max(id) FROM messages"),
    step=_cjk_step,
    finish=lambda conn: None,
)

BATCHED: dict[str, Batched] = {
    MIGRATION_LITERAL_INDEX: LITERAL_INDEX,
    MIGRATION_TEXT_ONCE: TEXT_ONCE,
    MIGRATION_WORD_INDEX: WORD_INDEX,
    MIGRATION_CJK_INDEX: CJK_INDEX,
}
