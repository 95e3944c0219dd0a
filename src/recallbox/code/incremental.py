"""What changed since the last index: file hashes, the diff of two hash maps, staleness.

A re-index parses only the files whose content hash changed and drops the files that are gone
(issue #11 item 2). The hash is over the bytes (SHA-256, hex), so touching a file or checking
it out again without a change re-parses nothing. Staleness is cheaper: a file is *possibly*
stale when its size or mtime differs from the indexed stamp, and stale when its hash then
differs too, so a search can flag a changed file without hashing every file each time.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path


def file_hash(data: bytes) -> str:
    """The content hash of a source file (SHA-256, lower-case hex)."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True, slots=True)
class FileChanges:
    """The difference between the indexed files and the files now present, by path (sorted)."""

    added: tuple[str, ...]
    changed: tuple[str, ...]
    deleted: tuple[str, ...]
    unchanged: tuple[str, ...]

    @property
    def to_parse(self) -> tuple[str, ...]:
        """The files that need parsing: added and changed, sorted."""
        return tuple(sorted((*self.added, *self.changed)))


def diff_hashes(previous: Mapping[str, str], current: Mapping[str, str]) -> FileChanges:
    """Compare ``{path: hash}`` of the last index with the files present now.

    Args:
        previous: the indexed files and their hashes (empty for a first index).
        current: the files found now and their hashes.

    Returns:
        Which paths were added, changed, deleted and unchanged.
    """
    added = sorted(path for path in current if path not in previous)
    deleted = sorted(path for path in previous if path not in current)
    both = sorted(path for path in current if path in previous)
    changed = [path for path in both if current[path] != previous[path]]
    unchanged = [path for path in both if current[path] == previous[path]]
    return FileChanges(tuple(added), tuple(changed), tuple(deleted), tuple(unchanged))


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What the index recorded about one file: its hash, size, mtime (nanoseconds) and file
    identity (``"<device>:<inode>"``, ``None`` when unknown)."""

    path: str
    hash: str
    size: int
    mtime_ns: int
    identity: str | None = None

    def same_stat(self, size: int, mtime_ns: int) -> bool:
        """Whether a file with this size and mtime is taken as unchanged without reading it."""
        return self.size == size and self.mtime_ns == mtime_ns


def stale_files(root: Path, stamps: Iterable[FileStamp]) -> list[str]:
    """The indexed files that changed or vanished since they were indexed, sorted.

    A file whose size and mtime match its stamp is taken as unchanged without reading it; one
    whose stat differs is hashed, so a touch without an edit is not stale.

    Args:
        root: the indexed root directory.
        stamps: the stamps recorded at indexing time (paths relative to ``root``).
    """
    stale: list[str] = []
    for stamp in stamps:
        path = root / stamp.path
        try:
            stat = os.stat(path, follow_symlinks=False)
        except OSError:
            stale.append(stamp.path)
            continue
        if stamp.same_stat(stat.st_size, stat.st_mtime_ns):
            continue
        try:
            data = path.read_bytes()
        except OSError:
            stale.append(stamp.path)
            continue
        if file_hash(data) != stamp.hash:
            stale.append(stamp.path)
    return sorted(stale)


__all__ = ["FileChanges", "FileStamp", "diff_hashes", "file_hash", "stale_files"]
