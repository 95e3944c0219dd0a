"""Transcript importers: agent transcript files into threads.

* Parsing (pure, no storage): ``PARSERS[format](path)`` returns the threads of one file as
  :class:`ParsedTranscript` values.
* Streaming readers (:mod:`.stream`, :mod:`.claude_stream`, :mod:`.codex_stream`): the same
  mapping, a piece at a time and resumable from a byte cursor.
* Incremental sync (:mod:`.sync`, behind ``box.import_transcripts``): files into the store,
  each record once, through the import ledger of the storage protocol.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from recallbox.importers.claude_code import parse_claude_code
from recallbox.importers.codex import parse_codex
from recallbox.importers.openai_json import parse_openai
from recallbox.importers.paths import default_paths
from recallbox.importers.records import (
    FORMAT_CLAUDE_CODE,
    FORMAT_CODEX,
    FORMAT_OPENAI,
    FORMATS,
    Compaction,
    ImportedMessage,
    ParsedTranscript,
    SkippedLine,
    ThreadItem,
)

Parser = Callable[[Path], list[ParsedTranscript]]

PARSERS: dict[str, Parser] = {
    FORMAT_CLAUDE_CODE: parse_claude_code,
    FORMAT_CODEX: parse_codex,
    FORMAT_OPENAI: parse_openai,
}

__all__ = [
    "FORMATS",
    "PARSERS",
    "Compaction",
    "ImportedMessage",
    "ParsedTranscript",
    "Parser",
    "SkippedLine",
    "ThreadItem",
    "default_paths",
    "parse_claude_code",
    "parse_codex",
    "parse_openai",
]
