"""The rows of the code index (:class:`~recallbox.storage.base.CodeStore`, DESIGN §2, §4.5).

A *scope* is one indexed root (its folder's name unless named otherwise); inside it a file is
known by its path relative to the root (``/``-separated, as indexed) and a symbol by its id
``<path>::<Qual.name>``, unique per scope. Across scopes the same id may exist twice, so the
code corpus's public id is the *key* ``<scope>\\x1f<symbol id>`` (:func:`code_key`): a scope
never holds a control character (names are normalised text). Edges are kept per file in
extraction order (``ordinal``), so a re-index can change one edge's resolution in place.

Frozen, slotted dataclasses, no SQL, no behaviour beyond the key helpers.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

#: Joins a scope and a symbol id into the code corpus's public id.
CODE_KEY_SEPARATOR = "\x1f"


def code_key(scope: str, symbol_id: str) -> str:
    """The public id of symbol ``symbol_id`` of ``scope``."""
    return f"{scope}{CODE_KEY_SEPARATOR}{symbol_id}"


def parse_code_key(key: str) -> tuple[str, str] | None:
    """``(scope, symbol id)`` of a key, or ``None`` when ``key`` is not one."""
    scope, separator, symbol = key.partition(CODE_KEY_SEPARATOR)
    if not separator or not scope or not symbol:
        return None
    return scope, symbol


@dataclass(frozen=True, slots=True)
class CodeScope:
    """One indexed root: where it was, what it was built from, when, and what it holds.

    ``commit`` is the repository's HEAD when the root is in a git repository (else ``None``:
    the files' mtimes, kept per file, are what the index was built from).
    """

    name: str
    root: str
    commit: str | None
    indexed_at: datetime
    files: int
    symbols: int
    edges: int


@dataclass(frozen=True, slots=True)
class CodeFile:
    """A file's stamp as indexed: language, content hash, size, mtime, file identity, and the
    parse error it had (``None`` when it parsed cleanly).

    ``source`` is the path as the privacy gate compares it: normalised by
    ``recallbox.domains.privacy.normalize_source_path`` (casefolded, ``/``-separated); its
    last segment is the basename an exclusion without ``/`` matches.
    """

    path: str
    source: str
    language: str
    hash: str
    size: int
    mtime_ns: int
    identity: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CodeSymbolRecord:
    """One symbol as written: the parsed fields, the excerpt a hit shows, and the text the
    indexes read.

    ``snippet`` is the symbol's first source lines (its signature and the start of its body);
    ``name_seg`` the words of its name, ``content_seg`` the segmented text the ranked index
    reads (``recallbox.text.identifiers``); ``content_hash`` the hash of what its vector
    describes (signature and docstring).
    """

    symbol_id: str
    name: str
    qualname: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    doc: str
    snippet: str
    name_seg: str
    content_seg: str
    content_hash: str


@dataclass(frozen=True, slots=True)
class CodeEdgeRecord:
    """One edge of a file, in extraction order (``ordinal``).

    ``target_last`` is the last part of ``target_name`` (what name-only resolution looks up):
    a re-index re-resolves the edges of unchanged files whose target name ends with the name of
    a changed symbol.
    """

    ordinal: int
    kind: str
    source_id: str
    target_name: str
    target_last: str
    line: int
    target_id: str | None
    confidence: str


@dataclass(frozen=True, slots=True)
class CodeFileWrite:
    """A new or changed file with everything it now holds (its old symbols and edges go)."""

    file: CodeFile
    symbols: tuple[CodeSymbolRecord, ...]
    edges: tuple[CodeEdgeRecord, ...]


@dataclass(frozen=True, slots=True)
class CodeEdgeFix:
    """A new resolution of a stored edge (file ``path``, position ``ordinal``)."""

    path: str
    ordinal: int
    target_id: str | None
    confidence: str


@dataclass(frozen=True, slots=True)
class CodeIndexWrite:
    """One index run of one scope, applied in one transaction.

    ``files`` are written whole, ``deleted`` paths lose their file, symbols and edges,
    ``restamped`` unchanged files get their new size, mtime and identity, ``fixes`` change the
    resolution of stored edges, and the scope records ``root``, ``commit`` and the time.
    """

    scope: str
    root: str
    commit: str | None
    files: tuple[CodeFileWrite, ...] = ()
    deleted: tuple[str, ...] = ()
    restamped: tuple[CodeFile, ...] = ()
    fixes: tuple[CodeEdgeFix, ...] = ()


@dataclass(frozen=True, slots=True)
class CodeSymbolRef:
    """What re-resolution reads of a stored symbol (no text)."""

    symbol_id: str
    name: str
    qualname: str
    kind: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class CodeGraphFile:
    """A stored file with its symbols and its ``imports`` and ``extends`` edges (calls edges
    come from :meth:`~recallbox.storage.base.CodeStore.code_call_edges`)."""

    file: CodeFile
    symbols: tuple[CodeSymbolRef, ...]
    edges: tuple[CodeEdgeRecord, ...]


@dataclass(frozen=True, slots=True)
class CodeSymbolRow:
    """A visible symbol as a search reads it.

    ``key`` is its public id (:func:`code_key`); ``root`` the scope's indexed root and
    ``file_hash``/``file_size``/``file_mtime_ns`` the file's stamp (what staleness is checked
    against); ``callers`` how many visible symbols call it.
    """

    key: str
    scope: str
    symbol_id: str
    name: str
    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    language: str
    signature: str
    doc: str
    snippet: str
    content_hash: str
    root: str
    file_hash: str
    file_size: int
    file_mtime_ns: int
    callers: int


__all__ = [
    "CODE_KEY_SEPARATOR",
    "CodeEdgeFix",
    "CodeEdgeRecord",
    "CodeFile",
    "CodeFileWrite",
    "CodeGraphFile",
    "CodeIndexWrite",
    "CodeScope",
    "CodeSymbolRecord",
    "CodeSymbolRef",
    "CodeSymbolRow",
    "code_key",
    "parse_code_key",
]
