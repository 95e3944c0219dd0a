"""Resolve edge targets across the files of one index (issue #11: confidence levels).

Extraction already resolved what one file shows (``exact``: a definition in an enclosing scope,
the same class, the module). Here every other edge is looked at again, with all files known:

1. **Through a module** (``resolved``): the target names an import of the source file (its
   first part is one the file imports, or it is written ``module:member``), a relative module
   (``.m.x``, ``./m:x``, ``self::x``), a crate path or — in Go — a name of the same package.
   The module's file is found by :class:`~recallbox.code.modules.ModuleMap` and the rest of the
   name is looked up inside it, following re-exports (``from .box import Box`` in an
   ``__init__.py``) up to :data:`MAX_REEXPORT_HOPS` times.
2. **Through a base class** (``resolved``, or ``exact`` when the base is in the same file):
   ``Class.method`` not defined on ``Class`` is looked up on its bases (``extends`` edges
   resolved in step 1), breadth-first, up to :data:`MAX_BASE_DEPTH` levels.
3. **By name** (``name-only``): the last part of the name against every symbol of that name in
   the same language family — methods for ``x.name()``, functions and classes for ``name()``,
   class-like kinds for a base. One candidate wins; several are narrowed to those whose class
   name matches the receiver (``box.search_memory`` → ``Box.search_memory``); still several, or
   none, leaves the target unresolved (``target_id`` None).

Imports resolve by step 1 only (an import of an outside library has no target). Every edge that
is not ``exact`` is recomputed from its ``target_name`` each time, so a stored index can be
re-resolved after some of its files changed.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from recallbox.code.modules import JS_FAMILY, ModuleMap
from recallbox.code.types import (
    CLASS_KINDS,
    CONFIDENCE_EXACT,
    CONFIDENCE_NAME_ONLY,
    CONFIDENCE_RESOLVED,
    Confidence,
    Edge,
    FileIndex,
    Symbol,
    symbol_id,
)

#: How many re-exports (``from .m import x`` in the module the name points at) are followed.
MAX_REEXPORT_HOPS = 3
#: How many levels of base classes are searched for an inherited method.
MAX_BASE_DEPTH = 5

_PARTS = re.compile(r"::|\.")
_CALLABLE_KINDS = frozenset({"function", "class", "struct", "enum", "interface", "trait", "type"})


class _Index:
    def __init__(self, files: Sequence[FileIndex], root_name: str | None) -> None:
        self.files = {file.path: file for file in files}
        self.modules = ModuleMap.build(((file.path, file.language) for file in files), root_name)
        self.symbols: dict[str, Symbol] = {}
        self.by_name: dict[str, list[Symbol]] = defaultdict(list)
        self.imports: dict[str, list[str]] = defaultdict(list)
        for file in files:
            for symbol in file.symbols:
                self.symbols[symbol.id] = symbol
                if symbol.kind != "module":
                    self.by_name[symbol.name].append(symbol)
            self.imports[file.path] = [e.target_name for e in file.edges if e.kind == "imports"]
        self.bases: dict[str, list[str]] = defaultdict(list)

    def lookup(self, path: str, rest: Sequence[str], hops: int = 0) -> str | None:
        """The id of ``rest`` (qualname parts) defined in ``path``, following re-exports."""
        ident = symbol_id(path, ".".join(rest))
        if ident in self.symbols:
            return ident
        file = self.files.get(path)
        if not rest or file is None or hops >= MAX_REEXPORT_HOPS:
            return None
        for edge in file.edges:
            if edge.kind == "imports" and _last(edge.target_name) == rest[0]:
                for module, inner in self.modules.split(path, file.language, edge.target_name):
                    found = self.lookup(module, (*inner, *rest[1:]), hops + 1)
                    if found is not None:
                        return found
        return None


def resolve_edges(files: Sequence[FileIndex], *, root_name: str | None = None) -> list[Edge]:
    """Every edge of ``files``, with targets resolved across them (see the module docstring).

    Args:
        files: all the files of one index (one scope), as extracted or as stored.
        root_name: the indexed root directory's name; when the root is itself a Python
            package (it holds ``__init__.py``), ``<root_name>.<module>`` names its modules.

    Returns:
        The edges in file order, then extraction order; ``exact`` edges unchanged.
    """
    index = _Index(files, root_name)
    resolved: dict[int, Edge] = {}
    ordered = [(file, edge) for file in files for edge in file.edges]
    # Bases first, so inherited methods can be found through them.
    for position, (file, edge) in enumerate(ordered):
        if edge.kind == "extends":
            result = _resolve(index, file, edge) if edge.confidence != CONFIDENCE_EXACT else edge
            resolved[position] = result
            if result.target_id is not None:
                index.bases[edge.source_id].append(result.target_id)
    for position, (file, edge) in enumerate(ordered):
        if position not in resolved:
            resolved[position] = (
                edge if edge.confidence == CONFIDENCE_EXACT else _resolve(index, file, edge)
            )
    return [resolved[position] for position in range(len(ordered))]


def _resolve(index: _Index, file: FileIndex, edge: Edge) -> Edge:
    qualified = _qualified(index, file, edge.target_name)
    target: str | None = None
    confidence: Confidence = CONFIDENCE_NAME_ONLY
    if qualified or edge.kind == "imports" or file.language == "go":
        target, confidence = _through_module(index, file, edge)
    if target is None and edge.kind != "imports":
        target, confidence = _through_bases(index, file, edge)
    # A name qualified by an import that is not in the index names an outside library.
    if target is None and edge.kind != "imports" and not qualified:
        target, confidence = _by_name(index, file, edge)
    return dataclasses.replace(edge, target_id=target, confidence=confidence)


def _through_module(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    name = edge.target_name
    if file.language == "go" and edge.kind == "imports":
        name += ":"  # a Go import names a package: its files' module symbols
    for module, rest in index.modules.split(file.path, file.language, name):
        found = index.lookup(module, rest)
        if found is not None and found != edge.source_id:
            return found, CONFIDENCE_RESOLVED if module != file.path else CONFIDENCE_EXACT
    return None, CONFIDENCE_NAME_ONLY


def _qualified(index: _Index, file: FileIndex, name: str) -> bool:
    """Whether ``name`` starts with a module: an import of the file or a relative/crate path."""
    if file.language in JS_FAMILY or file.language == "go":
        return ":" in name.replace("::", "")
    separator = "::" if file.language == "rust" else "."
    head = name.split(separator, 1)[0]
    if file.language == "rust" and head in ("crate", "self", "super"):
        return True
    if file.language == "python" and name.startswith("."):
        return True
    return any(imported.split(separator, 1)[0] == head for imported in index.imports[file.path])


def _through_bases(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    parts = _split(edge.target_name)
    if len(parts) < 2:
        return None, CONFIDENCE_NAME_ONLY
    owner = symbol_id(file.path, ".".join(parts[:-1]))
    if owner not in index.symbols:
        return None, CONFIDENCE_NAME_ONLY
    frontier, seen = [owner], {owner}
    for _ in range(MAX_BASE_DEPTH):
        following: list[str] = []
        for base in (b for current in frontier for b in index.bases.get(current, ())):
            if base in seen:
                continue
            seen.add(base)
            candidate = f"{base}.{parts[-1]}" if "::" in base else f"{base}::{parts[-1]}"
            if candidate in index.symbols:
                same_file = index.symbols[candidate].file == file.path
                return candidate, CONFIDENCE_EXACT if same_file else CONFIDENCE_RESOLVED
            following.append(base)
        frontier = following
    return None, CONFIDENCE_NAME_ONLY


def _by_name(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    parts = _split(edge.target_name)
    name = parts[-1] if parts else ""
    kinds = (
        CLASS_KINDS
        if edge.kind == "extends"
        else (frozenset({"method"}) if len(parts) > 1 else _CALLABLE_KINDS)
    )
    family = JS_FAMILY if file.language in JS_FAMILY else frozenset({file.language})
    candidates = [
        symbol
        for symbol in index.by_name.get(name, ())
        if symbol.kind in kinds and symbol.language in family and symbol.id != edge.source_id
    ]
    if len(candidates) > 1 and len(parts) > 1:
        receiver = parts[-2].strip("_").casefold()
        candidates = [s for s in candidates if _class_name(s).casefold() == receiver] or candidates
    if len(candidates) == 1:
        return candidates[0].id, CONFIDENCE_NAME_ONLY
    return None, CONFIDENCE_NAME_ONLY


def _class_name(symbol: Symbol) -> str:
    head = symbol.qualname.rpartition(".")[0]
    return head.rpartition(".")[2].split("#", 1)[0]


def _split(name: str) -> list[str]:
    tail = name.rpartition(":")[2] if ":" in name.replace("::", "") else name
    return [part for part in _PARTS.split(tail) if part]


def _last(name: str) -> str:
    parts = _split(name)
    return parts[-1] if parts else ""


def resolved_counts(edges: Iterable[Edge]) -> dict[str, int]:
    """How many edges have a target, by confidence (unresolved ones under ``"unresolved"``)."""
    counts: dict[str, int] = defaultdict(int)
    for edge in edges:
        counts[edge.confidence if edge.target_id is not None else "unresolved"] += 1
    return dict(counts)


__all__ = ["MAX_BASE_DEPTH", "MAX_REEXPORT_HOPS", "resolve_edges", "resolved_counts"]
