"""Records of the code domain's parsing layer (DESIGN §2 "Code symbol", §4.5; issue #11).

Everything here is a frozen value: what one file yields (:class:`FileIndex`: its
:class:`Symbol` and :class:`Edge` records), what a repository walk skipped and why, and the
:class:`CodeIndexReport` an indexing run returns. No storage, no tree-sitter.

Ids. A symbol id is ``<path>::<qualname>``: ``path`` relative to the indexed root and
``/``-separated, ``qualname`` the dotted chain of enclosing definitions
(``src/box.py::Box.search_memory``, ``app.py::outer.inner``). A file's module symbol has the
bare path as its id. A second definition of the same qualname in one file (a property setter,
an ``if``/``else`` pair, two trait impls of one method) gets ``#2``, ``#3``, ... appended, so
ids are unique per file and therefore per scope.

Edges. ``calls`` (a call, a constructor call or a decorator applied to the source symbol),
``imports`` and ``extends`` (a base class, an implemented interface or trait, an embedded Go
type). ``target_name`` is the target as far as the file alone can qualify it (import aliases
expanded, ``self``/``this``/receiver calls written ``Class.method``); ``target_id`` is the
resolved symbol id or ``None``; ``confidence`` says how the target was found.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

SymbolKind = Literal[
    "module",
    "class",
    "function",
    "method",
    "interface",
    "struct",
    "enum",
    "trait",
    "type",
    "namespace",
]
EdgeKind = Literal["calls", "imports", "extends"]
Confidence = Literal["exact", "resolved", "name-only"]

EDGE_CALLS: Final[EdgeKind] = "calls"
EDGE_IMPORTS: Final[EdgeKind] = "imports"
EDGE_EXTENDS: Final[EdgeKind] = "extends"
EDGE_KINDS: Final[tuple[EdgeKind, ...]] = ("calls", "imports", "extends")

#: The target is defined in the same file (an enclosing scope, the same class, the module).
CONFIDENCE_EXACT: Final[Confidence] = "exact"
#: The target was found in another file through an import, a package or a base class.
CONFIDENCE_RESOLVED: Final[Confidence] = "resolved"
#: Only the name matched (one candidate of that name and kind in the whole index), or nothing did.
CONFIDENCE_NAME_ONLY: Final[Confidence] = "name-only"
CONFIDENCES: Final[tuple[Confidence, ...]] = ("exact", "resolved", "name-only")

#: Kinds that hold methods.
CLASS_KINDS: Final = frozenset({"class", "interface", "struct", "enum", "trait"})

SkipReason = Literal[
    "gitignored",
    "vendored",
    "generated",
    "binary",
    "minified",
    "too_large",
    "symlink",
    "symlink_outside",
    "unreadable",
    "grammar_missing",
]
SKIP_REASONS: Final[tuple[SkipReason, ...]] = (
    "gitignored",
    "vendored",
    "generated",
    "binary",
    "minified",
    "too_large",
    "symlink",
    "symlink_outside",
    "unreadable",
    "grammar_missing",
)


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition: a module, class, function, method, interface, struct, enum, trait or type.

    Lines are 1-based and inclusive; a decorated definition starts at its first decorator.
    ``signature`` is the definition's header with whitespace collapsed (``def f(a, b) -> int``),
    ``doc`` the first line of its docstring or leading doc comment (``""`` when none).
    ``name_seg`` holds the identifier's words for the ``*_seg`` column.
    """

    id: str
    name: str
    qualname: str
    kind: SymbolKind
    file: str
    start_line: int
    end_line: int
    language: str
    signature: str = ""
    doc: str = ""
    decorators: tuple[str, ...] = ()
    name_seg: str = ""

    @property
    def parent_id(self) -> str | None:
        """The id of the enclosing definition (the module for a top-level one; ``None`` for a module)."""
        if not self.qualname:
            return None
        head, _, _ = self.qualname.rpartition(".")
        return symbol_id(self.file, head)


@dataclass(frozen=True, slots=True)
class Edge:
    """A directed relation from a symbol to a target (see the module docstring)."""

    kind: EdgeKind
    source_id: str
    target_name: str
    line: int
    target_id: str | None = None
    confidence: Confidence = "name-only"


@dataclass(frozen=True, slots=True)
class FileIndex:
    """What one source file yields.

    ``error`` is ``None`` when the file parsed cleanly; otherwise it names the first syntax
    error (the symbols tree-sitter recovered are still listed) or the failure that stopped the
    extraction (then ``symbols`` and ``edges`` are empty).
    """

    path: str
    language: str
    hash: str
    symbols: tuple[Symbol, ...]
    edges: tuple[Edge, ...]
    error: str | None = None
    size: int = 0
    mtime_ns: int = 0


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file (or a pruned directory, its path ending in ``/``) left out of the index, and why."""

    path: str
    reason: SkipReason
    detail: str = ""


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A file that could not be parsed cleanly, with the error."""

    path: str
    error: str


@dataclass(frozen=True, slots=True)
class CodeIndexReport:
    """The outcome of indexing one repository (issue #11 item 1).

    ``files_seen`` counts the candidate source files the walk found; each one is parsed,
    unchanged (its hash matched the previous index), or skipped (``skipped`` counts by
    reason, ``skipped_files`` lists them). ``failed`` lists the parsed files with an error
    (they are indexed as far as they parsed). ``languages`` counts parsed files per language,
    ``languages_skipped`` the files of a language whose grammar is not installed.

    Stored indexes (``box.index_code``) also report the scope's totals after the run
    (``total_files``, ``total_symbols``, ``total_edges``), how the edges were resolved
    (``full_resolution``: every edge of the scope, else only those a change can affect),
    how many stored edges of unchanged files were resolved again (``edges_reresolved``) and
    how many of those now point elsewhere (``edges_updated``).
    """

    root: str
    scope: str
    files_seen: int
    files_parsed: int
    files_unchanged: int
    files_deleted: int
    symbols: int
    edges: int
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_files: tuple[SkippedFile, ...] = ()
    failed: tuple[FileFailure, ...] = ()
    languages: dict[str, int] = field(default_factory=dict)
    languages_skipped: dict[str, int] = field(default_factory=dict)
    commit: str | None = None
    total_files: int = 0
    total_symbols: int = 0
    total_edges: int = 0
    full_resolution: bool = True
    edges_reresolved: int = 0
    edges_updated: int = 0


def symbol_id(path: str, qualname: str) -> str:
    """The id of the definition ``qualname`` in ``path`` (the bare path for the module)."""
    return f"{path}::{qualname}" if qualname else path


def split_symbol_id(symbol: str) -> tuple[str, str]:
    """``(path, qualname)`` of a symbol id; the qualname is ``""`` for a module id."""
    path, _, qualname = symbol.partition("::")
    return path, qualname


__all__ = [
    "CLASS_KINDS",
    "CONFIDENCES",
    "CONFIDENCE_EXACT",
    "CONFIDENCE_NAME_ONLY",
    "CONFIDENCE_RESOLVED",
    "EDGE_CALLS",
    "EDGE_EXTENDS",
    "EDGE_IMPORTS",
    "EDGE_KINDS",
    "SKIP_REASONS",
    "CodeIndexReport",
    "Confidence",
    "Edge",
    "EdgeKind",
    "FileFailure",
    "FileIndex",
    "SkipReason",
    "SkippedFile",
    "Symbol",
    "SymbolKind",
    "split_symbol_id",
    "symbol_id",
]
