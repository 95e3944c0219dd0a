"""The literal index of thread search: a trigram FTS5 index keyed by thread, behind the writes.

``messages_literal`` is a **contentless** FTS5 table (``content=''``, ``contentless_delete=1``)
with the ``trigram`` tokenizer and ``detail=full``, over ``content`` and ``args_text`` of the
**searchable** messages only (plain messages, model-visible, not pending, not superseded: the
message part of the visibility rule). Its rowid is :func:`message_key` — ``thread_id << 32 |
seq`` — so one thread is one rowid range and one generation a sub-range (from
``generations.first_seq``): a channel search or a walk of the search order is a ``rowid
BETWEEN`` inside the index, and a phrase ``MATCH`` of the whole term finds exactly the rows
holding it (case folded, as the tokenizer folds).

**Behind the writes.** Indexing a message costs about four times writing it, so writes never
do it: a row to (re)index is queued in ``literal_backlog`` by a trigger, and
:func:`index_backlog` moves queued rows into the index in small transactions (the store runs
it on a background thread, ``backlog.py``). Rows in the backlog are never in the index; thread
search scans them exactly (``literal.py``), so a search never misses a row the index has not
reached. The triggers keep that invariant:

* insert: a searchable row is queued;
* update of the text or of a visibility flag: an indexed row leaves the index (deleted by key;
  ``contentless_delete`` needs no old values) and is queued again when still searchable; a
  queued row is left queued (the indexer reads its current values);
* delete: a queued row is unqueued, an indexed row deleted by key.

The thread part of the rule (quarantine, exclusions) is not in the index: every search applies
it to the threads it reads, so a quarantine takes effect with no index write.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import apsw

from recallbox.storage.sqlite.literal_cjk import CJK_OPTIONS, CJK_TABLE, cjk_text
from recallbox.storage.sqlite.literal_words import WORDS_TABLE, word_stream
from recallbox.text.cjk import CJK_RANGES

THREAD_SHIFT = 32
SEQ_MASK = (1 << THREAD_SHIFT) - 1
LITERAL_TABLE = "messages_literal"
BACKLOG_TABLE = "literal_backlog"
#: The message part of the visibility rule, over a row alias (``{r}``: ``m``, ``new``, ``old``).
SEARCHABLE_ROW = (
    "{r}.kind = 'message' AND {r}.model_visible = 1 AND {r}.pending = 0 "
    "AND {r}.superseded_by IS NULL"
)
#: The columns whose change moves a row out of (and back into) the index.
WATCHED_COLUMNS = ("content", "args_text", "kind", "model_visible", "pending", "superseded_by")


def message_key(thread_id: int, seq: int) -> int:
    """The rowid of a message in the literal index: ``thread_id << 32 | seq``."""
    return (thread_id << THREAD_SHIFT) | seq


def key_sql(alias: str) -> str:
    """SQL of :func:`message_key` over a row alias."""
    return f"(({alias}.thread_id << {THREAD_SHIFT}) | {alias}.seq)"


def searchable(alias: str) -> str:
    """:data:`SEARCHABLE_ROW` over ``alias``."""
    return SEARCHABLE_ROW.replace("{r}", alias)


@dataclass(frozen=True, slots=True)
class LiteralIndex:
    """The definition of ``messages_literal`` (what ``doctor`` checks and repairs)."""

    name: str = LITERAL_TABLE
    content_table: str = "messages"
    columns: tuple[str, ...] = ("content", "args_text")
    options: str = "tokenize='trigram', detail='full'"
    probe: str = "trigram"
    backlog: str = BACKLOG_TABLE
    #: Tables keyed the same way and filled from the same backlog: the triggers delete a
    #: message from each of them too, and a rebuild empties them all.
    companions: tuple[str, ...] = ()
    #: The index whose triggers serve this one (its own name when empty).
    trigger_owner: str = ""
    #: Which searchable rows it holds, over the alias ``m`` (empty: every one).
    row_filter: str = ""

    @property
    def tables(self) -> tuple[str, ...]:
        """This index and its companions."""
        return (self.name, *self.companions)

    def create_sql(self) -> str:
        cols = ", ".join(self.columns)
        return (
            f"CREATE VIRTUAL TABLE {self.name} USING fts5({cols}, content='', "
            f"contentless_delete=1, {self.options})"
        )

    def trigger_names(self) -> tuple[str, str, str]:
        owner = self.trigger_owner or self.name
        return (f"{owner}_ai", f"{owner}_ad", f"{owner}_au")

    def trigger_sql(self) -> list[str]:
        ai, ad, au = self.trigger_names()
        table, backlog = self.content_table, self.backlog
        queued_old = f"EXISTS (SELECT 1 FROM {backlog} WHERE id = old.id)"
        watched = ", ".join(WATCHED_COLUMNS)
        unindex = "".join(
            f"DELETE FROM {name} WHERE rowid = {key_sql('old')} AND {{queued}}{searchable('old')}; "
            for name in self.tables
        )
        return [
            f"CREATE TRIGGER {ai} AFTER INSERT ON {table} WHEN {searchable('new')} BEGIN "
            f"INSERT OR IGNORE INTO {backlog} (id) VALUES (new.id); END",
            f"CREATE TRIGGER {ad} AFTER DELETE ON {table} BEGIN "
            + unindex.replace("{queued}", f"NOT {queued_old} AND ")
            + f"DELETE FROM {backlog} WHERE id = old.id; END",
            f"CREATE TRIGGER {au} AFTER UPDATE OF {watched} ON {table} WHEN NOT {queued_old} "
            "BEGIN "
            + unindex.replace("{queued}", "")
            + f"INSERT OR IGNORE INTO {backlog} (id) SELECT new.id WHERE {searchable('new')}; END",
        ]

    def backlog_sql(self) -> str:
        """Create the backlog (message ids whose index entry is still to be written)."""
        return f"CREATE TABLE IF NOT EXISTS {self.backlog} (id INTEGER PRIMARY KEY)"

    def enqueue_all_sql(self) -> str:
        """Queue every searchable message (a new index, or a repair)."""
        return (
            f"INSERT OR IGNORE INTO {self.backlog} (id) SELECT m.id FROM {self.content_table} m "
            f"WHERE {searchable('m')}"
        )

    def expected_rows_sql(self) -> str:
        """``SELECT count(*)`` of the rows the index should hold (searchable, not queued)."""
        return (
            f"SELECT count(*) FROM {self.content_table} m WHERE {searchable('m')} "
            f"AND NOT EXISTS (SELECT 1 FROM {self.backlog} b WHERE b.id = m.id){self._held()}"
        )

    def _held(self) -> str:
        return f" AND {self.row_filter}" if self.row_filter else ""

    def sample_sql(self) -> str:
        """``(key, content, args_text)`` of up to ``?`` random rows the index should hold."""
        return (
            f"SELECT {key_sql('m')}, m.content, m.args_text FROM {self.content_table} m "
            f"WHERE m.id IN (SELECT id FROM {self.content_table} WHERE {searchable('messages')} "
            f"ORDER BY random() LIMIT ?) "
            f"AND NOT EXISTS (SELECT 1 FROM {self.backlog} b WHERE b.id = m.id){self._held()}"
        )


MESSAGES_LITERAL_V8 = LiteralIndex()
"""The literal index as migration 8 created it (trigram only)."""
MESSAGES_LITERAL_V14 = replace(MESSAGES_LITERAL_V8, companions=(WORDS_TABLE,))
"""The literal index as migration 14 left it: its triggers keep the word index too."""
MESSAGES_LITERAL = replace(MESSAGES_LITERAL_V8, companions=(WORDS_TABLE, CJK_TABLE))
"""The literal index since migration 16: its triggers keep the word and CJK indexes too."""
MESSAGES_WORDS = LiteralIndex(
    name=WORDS_TABLE,
    options="tokenize='ascii', detail='full'",
    probe="words",
    companions=(LITERAL_TABLE, CJK_TABLE),
    trigger_owner=LITERAL_TABLE,
)
"""The word index (``literal_words.py``): the same rows, keys, backlog and triggers."""
#: A content with a CJK character (``text/cjk.py``'s ranges, as a GLOB class).
CJK_GLOB = f"*[{CJK_RANGES}]*"
MESSAGES_CJK = LiteralIndex(
    name=CJK_TABLE,
    columns=("content",),
    options=CJK_OPTIONS,
    probe="cjk",
    companions=(LITERAL_TABLE, WORDS_TABLE),
    trigger_owner=LITERAL_TABLE,
    row_filter=f"m.content GLOB '{CJK_GLOB}'",
)
"""The CJK index (``literal_cjk.py``): the rows with CJK content, same keys and backlog."""

#: Queued text indexed per transaction, in bytes (content and argument text): indexing costs
#: 0.1–0.2 µs of CPU per byte, so a batch holds the write lock for about 0.1 s at most whatever
#: the lengths of its messages (a count of rows alone let 256 long tool outputs hold it for
#: seconds).
INDEX_BATCH_BYTES = 1 << 19
#: Messages per transaction at most (a batch of short ones): fewer, larger transactions cost
#: less per message than many small ones (measured on the scale history: 4 970 messages per
#: CPU-second in batches of 512 KiB, 4 500 in batches of 256 rows).
INDEX_BATCH_ROWS = 2_048
#: From this much queued text on, a batch computes its word and CJK streams on a worker thread
#: while SQLite writes the trigram index (apsw lets go of the GIL during a statement): the two
#: cost about the same, so a batch takes about a quarter less time. Below it, inline (a handoff
#: costs more than it saves on a few short messages, e.g. an in-memory store's every write).
OVERLAP_MIN_BYTES = 1 << 15

_INSERT_SQL = (
    f"INSERT INTO {LITERAL_TABLE} (rowid, content, args_text) "
    f"SELECT {key_sql('m')}, m.content, m.args_text FROM json_each(?) j "
    f"CROSS JOIN messages m ON m.id = j.value WHERE {searchable('m')}"
)
_ROWS_SQL = (
    f"SELECT {key_sql('m')}, m.content, m.args_text FROM json_each(?) j "
    f"CROSS JOIN messages m ON m.id = j.value WHERE {searchable('m')}"
)
_INSERT_WORDS_SQL = f"INSERT INTO {WORDS_TABLE} (rowid, content, args_text) VALUES (?, ?, ?)"
_INSERT_CJK_SQL = f"INSERT INTO {CJK_TABLE} (rowid, content) VALUES (?, ?)"
_UNQUEUE_SQL = f"DELETE FROM {BACKLOG_TABLE} WHERE id IN (SELECT value FROM json_each(?))"


def word_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[int, str, str | None]]:
    """``(key, content, args_text)`` rows as the word index stores them."""
    return [
        (int(key), word_stream(content or ""), word_stream(args) if args else None)
        for key, content, args in rows
    ]


def cjk_rows(rows: Sequence[Sequence[Any]]) -> list[tuple[int, str]]:
    """``(key, text)`` of the rows the CJK index holds, of ``(key, content, …)`` rows."""
    found = ((int(row[0]), cjk_text(row[1])) for row in rows)
    return [(key, text) for key, text in found if text is not None]


#: Word and CJK rows of a batch, as :func:`_streams` computes them.
Streams = tuple[list[tuple[int, str, str | None]], list[tuple[int, str]]]
_worker: ThreadPoolExecutor | None = None
_worker_lock = threading.Lock()


def _forget_worker() -> None:
    """In a forked child: the parent's worker thread is not there; make a new one when needed."""
    global _worker, _worker_lock
    _worker, _worker_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_worker)


def _streams(rows: Sequence[Sequence[Any]]) -> Streams:
    """The word and CJK index rows of ``(key, content, args_text)`` rows."""
    return word_rows(rows), cjk_rows(rows)


def _start_streams(rows: Sequence[Sequence[Any]]) -> Future[Streams] | None:
    """:func:`_streams` of ``rows`` on the process's stream worker (a thread made on first
    use); None when it takes no more work (the interpreter is exiting: the caller computes
    them itself)."""
    global _worker
    with _worker_lock:
        if _worker is None:
            _worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recallbox-streams")
        try:
            return _worker.submit(_streams, rows)
        except RuntimeError:
            return None


def index_backlog(
    conn: apsw.Connection,
    limit: int = INDEX_BATCH_ROWS,
    max_bytes: int = INDEX_BATCH_BYTES,
    *,
    words: bool = True,
) -> int:
    """Index queued messages (oldest first) on ``conn``, inside the caller's write
    transaction: up to ``limit`` of them, stopping once ``max_bytes`` of text are taken (at
    least one). Returns how many queued ids were taken (0: the backlog is empty).

    A queued row that is no longer searchable is just unqueued. ``words=False`` writes the
    trigram index only (migration 8, before the word and CJK indexes exist). The rows are read
    once, in this transaction, before any index is written: the word and CJK streams of a
    batch of :data:`OVERLAP_MIN_BYTES` or more are computed on a worker thread while the
    trigram index is written, and an error there is raised here (the caller rolls back).
    """
    ids: list[int] = []
    taken = 0
    queued: list[Any] = conn.execute(
        f"SELECT b.id, coalesce(octet_length(m.content) + octet_length(m.args_text), 0) "
        f"FROM {BACKLOG_TABLE} b LEFT JOIN messages m ON m.id = b.id ORDER BY b.id LIMIT ?",
        (limit,),
    ).fetchall()
    for rowid, size in queued:
        ids.append(int(rowid))
        taken += int(size)
        if taken >= max_bytes:
            break
    if not ids:
        return 0
    bound = json.dumps(ids)
    if not words:
        conn.execute(_INSERT_SQL, (bound,))
    else:
        rows = conn.execute(_ROWS_SQL, (bound,)).fetchall()
        pending = _start_streams(rows) if taken >= OVERLAP_MIN_BYTES else None
        conn.execute(_INSERT_SQL, (bound,))
        words_of, cjk_of = pending.result() if pending is not None else _streams(rows)
        conn.executemany(_INSERT_WORDS_SQL, words_of)
        conn.executemany(_INSERT_CJK_SQL, cjk_of)
    conn.execute(_UNQUEUE_SQL, (bound,))
    return len(ids)


def backlog_size(conn: apsw.Connection) -> int:
    """How many messages wait for the literal index."""
    row = conn.execute(f"SELECT count(*) FROM {BACKLOG_TABLE}").fetchone()
    return int(row[0]) if row else 0


def keys_to_uids(conn: apsw.Connection, keys: Sequence[int]) -> list[str]:
    """The message ids of ``keys`` (unknown keys dropped)."""
    if not keys:
        return []
    rows = conn.execute(
        "SELECT m.uid FROM json_each(?) j CROSS JOIN messages m "
        f"ON m.thread_id = (j.value >> {THREAD_SHIFT}) AND m.seq = (j.value & {SEQ_MASK})",
        (json.dumps(list(keys)),),
    )
    return [str(r[0]) for r in rows]
