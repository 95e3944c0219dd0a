"""A phrase's keys in thread-search order, read lazily from the literal index (DESIGN §3.2).

Search order is threads by last activity (newest first), generation descending, ``seq``
ascending; the index is keyed ``thread_id << 32 | seq`` (``literal_index.py``), so a thread is
a key range and, inside it, a descending read meets the generations newest first. A
:class:`Walk` reads the index **descending, in batches that double** (from
:data:`FIRST_BATCH_KEYS` to :data:`MAX_BATCH_KEYS`), so a common phrase costs the first few
small reads and a rare one a few large reads — never one statement per thread or generation
(each FTS5 statement has a fixed cost, which a walk of thousands of generations multiplies).
No statement stays open between batches.

* Most threads are met in about key order (new threads get higher ids). A thread is read by
  the **shared** descending read when at most :data:`LOOKAHEAD_THREADS` threads still to walk
  lie between where that read is and the thread: the read passes them on its way, and keeps
  their keys (up to :data:`BUFFER_MAX_KEYS`) for their turn. Keys of threads already walked
  or out of scope are skipped.
* Any other thread (an old thread active again) is read alone, through its own key range.
  After :data:`OUT_OF_ORDER_READS_MAX` of them, the rest of the phrase's keys are read at once
  (up to :data:`GATHER_MAX_KEYS`) and handed out thread by thread.
* Keys of one generation are gathered (descending) and handed out ascending.

Every key read is kept (:attr:`Walk.found`), so the case-sensitive and the case-insensitive
pass of a term and the "more hits" count read each key once.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apsw

from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.literal_index import SEQ_MASK, THREAD_SHIFT

FIRST_BATCH_KEYS = 32
MAX_BATCH_KEYS = 4_096
LOOKAHEAD_THREADS = 8
OUT_OF_ORDER_READS_MAX = 8
BUFFER_MAX_KEYS = 20_000
GATHER_MAX_KEYS = 50_000


def fts_keys(conn: apsw.Connection, sql: str, params: Sequence[Any]) -> list[int]:
    """``rowid`` of an FTS5 query; none when FTS5 refuses the expression (a tokenizer corner
    of quoted user text, never a caller error)."""
    try:
        return [int(r[0]) for r in conn.execute(sql, params)]
    except apsw.SQLError as exc:
        if "fts5" not in str(exc):
            raise
        return []


class KeyRange:
    """The phrase's keys in ``[low, high]``, descending, read in doubling batches."""

    def __init__(self, pool: ConnectionPool, table: str, match: str, low: int, high: int) -> None:
        self._pool, self._match, self._low, self._high = pool, match, low, high
        self._sql = (
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT ?"
        )
        self._batch = FIRST_BATCH_KEYS
        self._buffer: list[int] = []
        self._at = 0
        self.exhausted = False

    def peek(self) -> int | None:
        """The next key (without taking it), or ``None`` past the range."""
        if self._at >= len(self._buffer):
            if self.exhausted or self._high < self._low:
                return None
            with self._pool.reading() as conn:
                keys = fts_keys(conn, self._sql, (self._match, self._low, self._high, self._batch))
            self._buffer, self._at = keys, 0
            if len(keys) < self._batch:
                self.exhausted = True
            if keys:
                self._high = keys[-1] - 1
            self._batch = min(self._batch * 2, MAX_BATCH_KEYS)
            if not keys:
                return None
        return self._buffer[self._at]

    def take(self) -> None:
        self._at += 1


class Walk:
    """Every key of ``match`` in the threads of ``order`` (search order), lazily, memoized;
    ``first_seqs(thread)`` is the first ``seq`` of each of its generations, ascending."""

    def __init__(
        self,
        pool: ConnectionPool,
        table: str,
        match: str,
        order: Sequence[int],
        first_seqs: Callable[[int], list[int]],
    ) -> None:
        self._pool, self._table, self._match = pool, table, match
        self._order = list(order)
        self._first_seqs = first_seqs
        self.found: list[int] = []
        self._source = self._generate()
        self.finished = False

    def each(self) -> Iterator[int]:
        """Every key from the first, reading more only as the caller goes on."""
        at = 0
        while True:
            if at < len(self.found):
                yield self.found[at]
                at += 1
            elif not self._extend():
                return

    def _extend(self) -> bool:
        if self.finished:
            return False
        for batch in self._source:
            if batch:
                self.found.extend(batch)
                return True
        self.finished = True
        return False

    def _range(self, low: int, high: int) -> KeyRange:
        return KeyRange(self._pool, self._table, self._match, low, high)

    def _generations(self, thread: int, keys: Iterator[int]) -> Iterator[list[int]]:
        """``keys`` of ``thread`` (descending) as generations, each ascending."""
        firsts = self._first_seqs(thread) or [0]
        index = len(firsts) - 1
        group: list[int] = []
        for key in keys:
            seq = key & SEQ_MASK
            if seq < firsts[index]:
                yield group[::-1]
                group = []
                while index > 0 and seq < firsts[index]:
                    index -= 1
            group.append(key)
        yield group[::-1]

    def _generate(self) -> Iterator[list[int]]:
        order = self._order
        if not order:
            return
        if len(order) == 1:
            yield from self._alone(order[0])
            return
        shared = _Shared(self._range(0, ((max(order) + 1) << THREAD_SHIFT) - 1), order)
        alone = 0
        for position, thread in enumerate(order):
            if shared.passed(thread):
                keys = shared.buffered(thread)
                yield from (
                    self._alone(thread) if keys is None else self._generations(thread, keys)
                )
            elif shared.between(thread) <= LOOKAHEAD_THREADS:
                yield from self._generations(thread, shared.advance(thread))
            elif alone < OUT_OF_ORDER_READS_MAX:
                alone += 1
                yield from self._alone(thread)
            else:
                yield from self._gathered(order[position:], shared.walked)
                return
            shared.walk(thread)

    def _alone(self, thread: int) -> Iterator[list[int]]:
        low = thread << THREAD_SHIFT
        return self._generations(thread, _drain(self._range(low, low | SEQ_MASK)))

    def _gathered(self, rest: Sequence[int], walked: set[int]) -> Iterator[list[int]]:
        """The threads of ``rest`` from one read of the phrase's keys (the bounded fallback)."""
        wanted = set(rest) - walked
        with self._pool.reading() as conn:
            keys = fts_keys(
                conn,
                f"SELECT rowid FROM {self._table} WHERE {self._table} MATCH ? "
                "ORDER BY rowid DESC LIMIT ?",
                (self._match, GATHER_MAX_KEYS + 1),
            )
        if len(keys) > GATHER_MAX_KEYS:
            for thread in rest:  # too many to hold: one thread at a time after all
                low = thread << THREAD_SHIFT
                yield from self._generations(thread, _drain(self._range(low, low | SEQ_MASK)))
            return
        by_thread: dict[int, list[int]] = {}
        for key in keys:
            if (key >> THREAD_SHIFT) in wanted:
                by_thread.setdefault(key >> THREAD_SHIFT, []).append(key)
        for thread in rest:
            yield from self._generations(thread, iter(by_thread.get(thread, ())))


class _Shared:
    """The shared descending read of a walk: where it is, the threads it has passed, and the
    keys it met of threads still to come (kept up to :data:`BUFFER_MAX_KEYS`)."""

    def __init__(self, keys: KeyRange, order: Sequence[int]) -> None:
        self.keys = keys
        self.low = (max(order) + 1) << THREAD_SHIFT  # every key at or above was read
        self.pending = sorted(order)  # threads not walked yet, by id
        self._pending = set(order)
        self.walked: set[int] = set()
        self._kept: dict[int, list[int]] = {}
        self._kept_keys = 0
        self._dropped: set[int] = set()

    def passed(self, thread: int) -> bool:
        return (thread << THREAD_SHIFT) >= self.low

    def between(self, thread: int) -> int:
        """Threads still to walk that the read would pass before reaching ``thread``."""
        top = bisect.bisect_left(self.pending, self.low >> THREAD_SHIFT)
        return top - bisect.bisect_right(self.pending, thread)

    def buffered(self, thread: int) -> Iterator[int] | None:
        """The kept keys of a passed thread (descending), or None when they were dropped."""
        if thread in self._dropped:
            return None
        keys = self._kept.pop(thread, [])
        self._kept_keys -= len(keys)
        return iter(keys)

    def advance(self, thread: int) -> Iterator[int]:
        """Read down to ``thread``, keeping keys of threads still to come; yield its keys."""
        low, high = thread << THREAD_SHIFT, (thread << THREAD_SHIFT) | SEQ_MASK
        while (key := self.keys.peek()) is not None and key >= low:
            self.keys.take()
            if key <= high:
                yield key
                continue
            owner = key >> THREAD_SHIFT
            if owner in self._pending and owner not in self._dropped:
                self._keep(owner, key)
        self.low = low

    def _keep(self, owner: int, key: int) -> None:
        self._kept.setdefault(owner, []).append(key)
        self._kept_keys += 1
        if self._kept_keys > BUFFER_MAX_KEYS:  # the biggest is read alone when it comes
            biggest = max(self._kept, key=lambda t: len(self._kept[t]))
            self._kept_keys -= len(self._kept.pop(biggest))
            self._dropped.add(biggest)

    def walk(self, thread: int) -> None:
        self.walked.add(thread)
        self._pending.discard(thread)
        at = bisect.bisect_left(self.pending, thread)
        if at < len(self.pending) and self.pending[at] == thread:
            del self.pending[at]


def _drain(keys: KeyRange) -> Iterator[int]:
    while (key := keys.peek()) is not None:
        keys.take()
        yield key
