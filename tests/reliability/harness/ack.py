"""The acknowledgement side log: a write counts once its id is here, fsync'ed.

A writer calls :meth:`AckLog.record` after a recallbox call returned and before its next
write; ``record`` appends one JSON line, flushes and fsyncs it. A kill can tear the last
line: :func:`read_acks` ignores a torn tail (that write was never acknowledged).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any


class AckLog:
    """An append-only, fsync'ed JSON-lines file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        size = os.fstat(self._fd).st_size
        if size and os.pread(self._fd, 1, size - 1) != b"\n":
            os.write(self._fd, b"\n")  # end a torn line so the next record stands alone

    def record(self, **fields: Any) -> None:
        """Append one acknowledgement and make it durable before returning."""
        line = json.dumps(fields, ensure_ascii=False, separators=(",", ":")) + "\n"
        os.write(self._fd, line.encode("utf-8"))
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)

    def __enter__(self) -> AckLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def read_acks(path: Path) -> list[dict[str, Any]]:
    """Every complete acknowledgement in ``path`` (a missing file has none)."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    for line in path.read_bytes().split(b"\n"):
        if not line:
            continue
        try:
            out.append(json.loads(line))
        except ValueError:  # the torn tail of a killed writer: never acknowledged
            continue
    return out
