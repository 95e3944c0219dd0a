"""A phrase's keys in thread-search order, read lazily from the literal index (DESIGN §3.2).

Search order is threads by last activity (newest first), generation descending, ``seq``
ascending; the index is keyed ``thread_id << 32 | seq`` (``literal_index.py``), so a thread
is a key range and a generation a sub-range of it. FTS5 reads a doclist forward cheaply from
any key (its doclist index skips pages) but backwards only from the end of the doclist (a
descending read below a bound reads every page above it: 7 ms for a common word at 1M), so a
:class:`Walk` reads key ranges **ascending** and orders them itself:

* Threads follow each other in search order in *blocks*: consecutive threads with decreasing
  ids (new threads get higher ids, so most of the order is one long such run), read as one
  key range. A block starts at one thread and doubles after each block that held fewer than
  :data:`SPARSE_BLOCK_KEYS` keys, so a rare phrase costs a few reads, not one per thread.
* A block whose read reaches :data:`BLOCK_READ_KEYS` keys is split in two (newer threads
  first), down to one thread; a thread past the limit is read one generation at a time
  (newest first), each generation ascending in batches that double from
  :data:`FIRST_BATCH_KEYS` to :data:`MAX_BATCH_KEYS`, so a common phrase costs the first
  batches only.
* Keys of a range that belong to no thread of its block (a thread walked earlier, or one out
  of scope) are skipped.

No statement stays open between reads. Every key read is kept (:attr:`Walk.found`), so the
case-sensitive and the case-insensitive pass of a term and the "more hits" count read each
key once.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apsw

from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.literal_index import SEQ_MASK, THREAD_SHIFT

FIRST_BATCH_KEYS = 64
MAX_BATCH_KEYS = 4_096
BLOCK_READ_KEYS = 4_096
SPARSE_BLOCK_KEYS = 256


def fts_keys(conn: apsw.Connection, sql: str, params: Sequence[Any]) -> list[int]:
    """``rowid`` of an FTS5 query; none when FTS5 refuses the expression (a tokenizer corner
    of quoted user text, never a caller error)."""
    try:
        return [int(r[0]) for r in conn.execute(sql, params)]
    except apsw.SQLError as exc:
        if "fts5" not in str(exc):
            raise
        return []


def _low(thread: int) -> int:
    return thread << THREAD_SHIFT


def _high(thread: int) -> int:
    return (thread << THREAD_SHIFT) | SEQ_MASK


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
        self._pool, self._match, self._order = pool, match, list(order)
        self._first_seqs = first_seqs
        self._sql = (
            f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid LIMIT ?"
        )
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

    def _read(self, low: int, high: int, limit: int) -> list[int]:
        """Up to ``limit`` keys in ``[low, high]``, ascending."""
        if low > high:
            return []
        with self._pool.reading() as conn:
            return fts_keys(conn, self._sql, (self._match, low, high, limit))

    def _generate(self) -> Iterator[list[int]]:
        size = 1
        for block in _runs(self._order):
            at = 0
            while at < len(block):
                threads = block[at : at + size]
                at += len(threads)
                keys = self._read(_low(threads[-1]), _high(threads[0]), BLOCK_READ_KEYS + 1)
                if len(keys) > BLOCK_READ_KEYS:
                    size = 1
                    yield from self._dense(threads)
                    continue
                size = size * 2 if len(keys) < SPARSE_BLOCK_KEYS else 1
                yield from self._groups(threads, keys)

    def _groups(self, threads: list[int], keys: list[int]) -> Iterator[list[int]]:
        """The keys of a block's read (ascending) in search order: thread by thread, each
        generation newest first (keys of threads outside the block are never asked for)."""
        by_thread: dict[int, list[int]] = {}
        for key in keys:
            by_thread.setdefault(key >> THREAD_SHIFT, []).append(key)
        for thread in threads:
            yield from self._generations(thread, by_thread.get(thread, []))

    def _dense(self, threads: list[int]) -> Iterator[list[int]]:
        """A block with more than :data:`BLOCK_READ_KEYS` keys: its halves (newer first), each
        read whole when it has fewer, down to one thread read generation by generation."""
        if len(threads) == 1:
            yield from self._by_generation(threads[0])
            return
        half = len(threads) // 2
        for part in (threads[:half], threads[half:]):
            keys = self._read(_low(part[-1]), _high(part[0]), BLOCK_READ_KEYS + 1)
            if len(keys) > BLOCK_READ_KEYS:
                yield from self._dense(part)
            else:
                yield from self._groups(part, keys)

    def _generations(self, thread: int, keys: list[int]) -> Iterator[list[int]]:
        """``keys`` of ``thread`` (ascending) as generations, newest first."""
        if not keys:
            return
        firsts = self._first_seqs(thread)
        bounds = [bisect.bisect_left(keys, _low(thread) | first) for first in firsts[1:]]
        cuts = [0, *bounds, len(keys)]
        for end, start in zip(cuts[:0:-1], cuts[-2::-1], strict=True):
            yield keys[start:end]

    def _by_generation(self, thread: int) -> Iterator[list[int]]:
        """The keys of a thread too big for one read: each generation newest first, each in
        ascending batches that double."""
        firsts = self._first_seqs(thread) or [0]
        limits = [*firsts[1:], SEQ_MASK + 1]
        for first, after in zip(firsts[::-1], limits[::-1], strict=True):
            low, high = _low(thread) | first, _low(thread) | (after - 1)
            batch = FIRST_BATCH_KEYS
            while True:
                keys = self._read(low, high, batch)
                yield keys
                if len(keys) < batch:
                    break
                low = keys[-1] + 1
                batch = min(batch * 2, MAX_BATCH_KEYS)


def _runs(order: Sequence[int]) -> Iterator[list[int]]:
    """``order`` cut into runs of consecutive threads with decreasing ids."""
    run: list[int] = []
    for thread in order:
        if run and thread > run[-1]:
            yield run
            run = []
        run.append(thread)
    if run:
        yield run
