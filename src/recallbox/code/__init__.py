"""The code domain's parsing layer (issue #11): walk a repository, extract symbols and edges.

No storage and no SQL here. :func:`parse_repository` walks a root (respecting ``.gitignore``),
parses new or changed files with tree-sitter grammars from the ``code`` extra and reports what
it skipped; :func:`resolve_edges` resolves call, import and base-class targets across the
files of one index. Importing this package imports no tree-sitter, and its names load lazily
(a search reads ``recallbox.code.incremental`` without the walker and the extractors): a
missing extra surfaces as :class:`~recallbox.errors.DependencyMissing` on the first parse.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from recallbox.code.extract import extract_file
    from recallbox.code.index import ParsedRepository, parse_repository
    from recallbox.code.resolve import resolve_edges
    from recallbox.code.types import CodeIndexReport, Edge, FileIndex, SkippedFile, Symbol

_WHERE = {
    "extract_file": "recallbox.code.extract",
    "ParsedRepository": "recallbox.code.index",
    "parse_repository": "recallbox.code.index",
    "resolve_edges": "recallbox.code.resolve",
    "CodeIndexReport": "recallbox.code.types",
    "Edge": "recallbox.code.types",
    "FileIndex": "recallbox.code.types",
    "SkippedFile": "recallbox.code.types",
    "Symbol": "recallbox.code.types",
}


def __getattr__(name: str) -> object:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'recallbox.code' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "CodeIndexReport",
    "Edge",
    "FileIndex",
    "ParsedRepository",
    "SkippedFile",
    "Symbol",
    "extract_file",
    "parse_repository",
    "resolve_edges",
]
