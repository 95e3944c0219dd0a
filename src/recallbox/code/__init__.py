"""The code domain's parsing layer (issue #11): walk a repository, extract symbols and edges.

No storage and no SQL here. :func:`parse_repository` walks a root (respecting ``.gitignore``),
parses new or changed files with tree-sitter grammars from the ``code`` extra and reports what
it skipped; :func:`resolve_edges` resolves call, import and base-class targets across the
files of one index. Importing this package imports no tree-sitter: a missing extra surfaces as
:class:`~recallbox.errors.DependencyMissing` on the first parse.
"""

from __future__ import annotations

from recallbox.code.extract import extract_file
from recallbox.code.index import ParsedRepository, parse_repository
from recallbox.code.resolve import resolve_edges
from recallbox.code.types import CodeIndexReport, Edge, FileIndex, SkippedFile, Symbol

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
