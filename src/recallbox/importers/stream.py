"""Streaming transcript readers: a file is read line by line from a byte cursor, and what a
reader has finished leaves it as :class:`Output` values, so memory does not grow with the file.

This is the incremental face of the parsers (:func:`~recallbox.importers.parse_claude_code`
and friends read a whole file into :class:`~recallbox.importers.ParsedTranscript` values; a
reader maps records the same way, with the same code, but a piece at a time and resumable):

* :func:`read_lines` yields the complete lines after a byte offset. An unterminated last line
  that is not valid JSON is a **truncated tail**: it is not yielded, and the cursor stays before
  it so the next sync reads it again once the writer has finished it.
* A reader is fed the decoded lines (:meth:`StreamReader.feed`) and hands back finished items
  (:meth:`StreamReader.drain`) with a **record key**: the identity of the item inside its file
  (a Claude Code record uuid or API message id, else a hash of the source line), which the sync
  ledger uses to add each record once.
* A reader's :meth:`~StreamReader.state` is a small JSON object; a reader made with it continues
  where the last one stopped.

Claude Code branch structure (``parentUuid``) is kept in a :class:`NodeIndex` (the sync ledger,
or :class:`MemoryNodeIndex`), never in the reader.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from recallbox.errors import NotFound
from recallbox.importers._common import SOURCE_ENCODING, SOURCE_ERRORS, FileReport
from recallbox.importers.records import ThreadItem
from recallbox.limits import DEPTH_REASON, MAX_RECORD_BYTES, SIZE_REASON, TooDeep, loads_bounded
from recallbox.storage.base import ImportNode

RECORD_KEY_DIGEST_BYTES = 16
READ_BLOCK_BYTES = 1 << 20
"""Block size of the hash passes over a file."""
LINE_KEY_PREFIX = "line:"
"""Record keys of records without an id of their own: the hash of the source line."""


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One complete line of a transcript file: 1-based number, byte span, raw bytes."""

    number: int
    start: int
    end: int
    raw: bytes

    @property
    def terminated(self) -> bool:
        return self.raw.endswith(b"\n")

    def key(self) -> str:
        """The record key of a record identified by its text: a hash of the line."""
        digest = hashlib.blake2b(self.raw.rstrip(b"\r\n"), digest_size=RECORD_KEY_DIGEST_BYTES)
        return LINE_KEY_PREFIX + digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Output:
    """A finished thread item with its record key.

    ``node`` is the Claude Code uuid the item hangs on (its branch status follows that node).
    ``merge`` marks an assistant message that continues a message already stored under ``key``
    (records of one API message split across two syncs): its content and tool calls are added
    to that message instead of making a new one.
    """

    channel: str
    item: ThreadItem
    key: str
    parent_channel: str | None = None
    node: str | None = None
    merge: bool = False


class NodeIndex(Protocol):
    """Where a reader keeps the ``uuid -> parent`` forest of a file (the ledger, or memory)."""

    def get(self, uuid: str) -> ImportNode | None:
        """The node ``uuid`` of this file, or ``None``."""

    def add(self, node: ImportNode) -> None:
        """Record a node (its ``root`` already resolved)."""

    def last_conversational(self, root: str, side: bool) -> str | None:
        """The uuid of the last conversational node (by line) of a tree, or ``None``."""


@dataclass(slots=True)
class MemoryNodeIndex:
    """A :class:`NodeIndex` in a dict (tests, and files read whole)."""

    nodes: dict[str, ImportNode] = field(default_factory=dict)

    def get(self, uuid: str) -> ImportNode | None:
        return self.nodes.get(uuid)

    def add(self, node: ImportNode) -> None:
        self.nodes[node.uuid] = node

    def last_conversational(self, root: str, side: bool) -> str | None:
        best: ImportNode | None = None
        for node in self.nodes.values():
            in_tree = node.root == root and node.side == side and node.conversational
            if in_tree and (best is None or node.line > best.line):
                best = node
        return best.uuid if best else None


class StreamReader(Protocol):
    """The incremental parser of one transcript format."""

    report: FileReport

    def feed(self, line: SourceLine, data: dict[str, Any]) -> None:
        """One decoded JSON object line, in file order."""

    def drain(self, *, final: bool) -> list[Output]:
        """Remove and return the finished items; ``final`` at the end of the readable file."""

    def hold_line(self) -> int | None:
        """A line from which the file must be read again next time (a record still waiting
        for its continuation), or ``None``. Only meaningful after a final drain."""

    def dirty_trees(self, *, full: bool = False) -> set[tuple[str, bool]]:
        """Claude Code trees ``(root, side)`` whose live branch may have moved (with ``full``,
        every tree this reader saw)."""

    def titles(self, is_live: Any) -> dict[str, str | None]:
        """The title of each thread this file names (``is_live(uuid) -> bool``)."""

    def state(self) -> dict[str, Any]:
        """A JSON object to resume from."""


def read_lines(path: Path, *, start_byte: int = 0, start_line: int = 0) -> Iterator[SourceLine]:
    """The lines of ``path`` after byte ``start_byte`` (line numbers continue ``start_line``).

    The last line is yielded even without a newline; the caller decides whether it is a
    truncated tail (see :func:`decode_line`). When ``start_byte`` is inside a line (the last
    read ended with a complete record that had no newline yet), the rest of that line keeps
    its number ``start_line``.

    Raises:
        NotFound: there is no file at ``path``.
    """
    try:
        stream = path.open("rb")
    except FileNotFoundError as exc:
        raise NotFound(f"no transcript file at {path}; check the path") from exc
    with stream:
        number = start_line
        if start_byte > 0:
            stream.seek(start_byte - 1)
            if stream.read(1) != b"\n":
                number -= 1
        stream.seek(start_byte)
        offset = start_byte
        for raw in stream:
            number += 1
            yield SourceLine(number=number, start=offset, end=offset + len(raw), raw=raw)
            offset += len(raw)


class TruncatedTail(Exception):
    """The unterminated last line of a file does not parse: the writer is still writing it."""


def decode_line(line: SourceLine, report: FileReport) -> dict[str, Any] | None:
    """The JSON object on ``line``, or ``None`` (blank, or skipped with its reason in ``report``).

    The same rules as the whole-file parsers (``iter_json_objects``): a line longer than
    ``MAX_RECORD_BYTES`` or nested deeper than ``MAX_JSON_DEPTH`` is skipped with its reason.

    Raises:
        TruncatedTail: an unterminated line that does not parse (``report.truncated_tail`` set).
    """
    if len(line.raw) > MAX_RECORD_BYTES and len(line.raw.rstrip(b"\r\n")) > MAX_RECORD_BYTES:
        if not line.terminated:
            report.truncated_tail = True
            raise TruncatedTail
        report.skip(line.number, SIZE_REASON)  # never decoded nor parsed
        return None
    text = line.raw.decode(SOURCE_ENCODING, SOURCE_ERRORS)
    if not text.strip():
        return None
    try:
        value: object = loads_bounded(text)
    except TooDeep:
        report.skip(line.number, DEPTH_REASON)
        return None
    except json.JSONDecodeError as exc:
        if line.terminated:
            report.skip(line.number, f"invalid JSON: {exc.msg} (column {exc.colno})")
            return None
        report.truncated_tail = True
        raise TruncatedTail from exc
    if not isinstance(value, dict):
        report.skip(line.number, f"not a JSON object: {type(value).__name__}")
        return None
    return value
