"""The file-level helpers of transcript sync (``recallbox.importers.sync``): progress, the
hashes that tell an unchanged or appended file, and the branch-node index over the ledger."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recallbox.importers.stream import READ_BLOCK_BYTES, read_lines
from recallbox.storage.base import ImportNode, SyncStore
from recallbox.text.normalize import normalize_text
from recallbox.types import ImportProgress

TAIL_HASH_BYTES = 64 * 1024
"""How much of the consumed prefix (its end) the unchanged-file check hashes."""
NODE_CACHE_SIZE = 4096
"""Recent branch nodes kept in memory (a record's parent is almost always a recent one)."""

ProgressCallback = Callable[[ImportProgress], None]


@dataclass(slots=True)
class Progress:
    callback: ProgressCallback | None
    files_total: int
    bytes_total: int
    files_done: int = 0
    bytes_before: int = 0
    path: str = ""
    records: int = 0

    def start_file(self, path: Path, index: int) -> None:
        self.path, self.files_done = normalize_text(str(path)), index

    def update(self, file_bytes: int) -> None:
        if self.callback is not None:
            self.callback(
                ImportProgress(
                    path=self.path,
                    files_done=self.files_done,
                    files_total=self.files_total,
                    bytes_done=min(self.bytes_before + file_bytes, self.bytes_total),
                    bytes_total=self.bytes_total,
                    records=self.records,
                )
            )

    def finish_file(self, size: int) -> None:
        self.bytes_before += size
        self.files_done += 1
        self.update(0)


# --- hashing -------------------------------------------------------------------------------


def new_hasher() -> Any:
    return hashlib.blake2b(digest_size=16)


def prefix_hasher(path: Path, length: int) -> Any:
    """A blake2b object fed the first ``length`` bytes of ``path`` (streamed)."""
    hasher = new_hasher()
    remaining = length
    with path.open("rb") as stream:
        while remaining > 0:
            block = stream.read(min(READ_BLOCK_BYTES, remaining))
            if not block:
                break
            hasher.update(block)
            remaining -= len(block)
    return hasher


def tail_hash(path: Path, end: int) -> str:
    """The hash of the ``TAIL_HASH_BYTES`` before byte ``end`` (the cheap unchanged check)."""
    start = max(0, end - TAIL_HASH_BYTES)
    with path.open("rb") as stream:
        stream.seek(start)
        data = stream.read(end - start)
    return str(hashlib.blake2b(data, digest_size=16).hexdigest())


class LedgerNodes:
    """The reader's :class:`~recallbox.importers.stream.NodeIndex` over the ledger.

    New nodes are buffered and written in batches; until then the cache answers for them.
    """

    def __init__(self, store: SyncStore, file_id: int) -> None:
        self._store = store
        self._file_id = file_id
        self._cache: dict[str, ImportNode] = {}
        self._pending: list[ImportNode] = []

    def get(self, uuid: str) -> ImportNode | None:
        node = self._cache.get(uuid)
        if node is None:
            node = self._store.import_node(self._file_id, uuid)
        return node

    def add(self, node: ImportNode) -> None:
        if len(self._cache) >= NODE_CACHE_SIZE:
            self.flush()
            self._cache.clear()
        self._cache[node.uuid] = node
        self._pending.append(node)

    def last_conversational(self, root: str, side: bool) -> str | None:
        self.flush()
        return self._store.last_conversational_node(self._file_id, root, side)

    def flush(self) -> None:
        if self._pending:
            self._store.add_import_nodes(self._file_id, self._pending)
            self._pending = []


def line_start(path: Path, line_number: int) -> tuple[int, int, str]:
    """Byte offset, line count and prefix hash at the start of 1-based line ``line_number``."""
    hasher = new_hasher()
    offset = 0
    for line in read_lines(path):
        if line.number >= line_number:
            break
        hasher.update(line.raw)
        offset = line.end
    return offset, line_number - 1, hasher.hexdigest()
