"""One source file in, one :class:`~recallbox.code.types.FileIndex` out; never raises on content.

tree-sitter always returns a tree: a file with syntax errors is still extracted as far as the
grammar recovered, and its ``error`` names the first error's position. Any failure of the
extractor itself (a bug, a pathological tree) is caught and reported as the file's ``error``
with no symbols, so one bad file never stops an indexing run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from recallbox.code.builder import FileBuilder
from recallbox.code.incremental import file_hash
from recallbox.code.langs import golang, javascript, python, rust
from recallbox.code.languages import CODE_EXTRA_HINT, parser_for
from recallbox.code.types import FileIndex
from recallbox.errors import DependencyMissing

if TYPE_CHECKING:
    from tree_sitter import Node

#: Module/member separator in ``target_name`` per language (``.`` unless listed).
SEPARATORS = {"rust": "::"}


def extract_file(path: str, source: bytes, language: str, *, mtime_ns: int = 0) -> FileIndex:
    """Parse ``source`` as ``language`` and extract its symbols and edges.

    Args:
        path: the file's path relative to the indexed root, ``/``-separated (ids start with it).
        source: the file's bytes (any bytes: invalid UTF-8 is decoded leniently).
        language: one of :data:`recallbox.code.languages.LANGUAGE_NAMES`.
        mtime_ns: the file's mtime, recorded on the result for staleness checks.

    Returns:
        The file's index; ``error`` set when it did not parse cleanly.

    Raises:
        DependencyMissing: tree-sitter or the language's grammar is not installed.
    """
    parser = parser_for(language)
    if parser is None:
        raise DependencyMissing(f"no tree-sitter grammar for {language}: {CODE_EXTRA_HINT}")
    digest = file_hash(source)
    builder = FileBuilder(path, language, source, separator=SEPARATORS.get(language, "."))
    try:
        tree = parser.parse(source)
        EXTRACTORS[language](builder, tree.root_node)
        edges = builder.finish()
        error = syntax_error(tree.root_node) if tree.root_node.has_error else None
    except Exception as exc:
        return FileIndex(
            path, language, digest, (), (), f"{type(exc).__name__}: {exc}", len(source), mtime_ns
        )
    return FileIndex(
        path, language, digest, tuple(builder.symbols), tuple(edges), error, len(source), mtime_ns
    )


def syntax_error(root: Node) -> str:
    """Where the first syntax error of a tree is (``syntax error at line L, column C``)."""
    node = root
    while True:
        if node.is_missing:
            return f"syntax error at line {node.start_point.row + 1}, column {node.start_point.column + 1}: missing {node.type}"
        if node.is_error:
            break
        child = next((c for c in node.children if c.has_error), None)
        if child is None:
            break
        node = child
    return f"syntax error at line {node.start_point.row + 1}, column {node.start_point.column + 1}"


EXTRACTORS: dict[str, Callable[[FileBuilder, Node], None]] = {
    "python": python.extract,
    "javascript": javascript.extract,
    "typescript": javascript.extract,
    "tsx": javascript.extract,
    "go": golang.extract,
    "rust": rust.extract,
}

__all__ = ["EXTRACTORS", "SEPARATORS", "extract_file", "syntax_error"]
