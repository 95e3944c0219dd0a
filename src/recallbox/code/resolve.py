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

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

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
_METHOD_KINDS = frozenset({"method"})
#: Distinct target names whose parts are remembered (a bounded cache of a pure function).
SPLIT_CACHE_SIZE = 1 << 16


class _Index:
    def __init__(self, files: Sequence[FileIndex], root_name: str | None) -> None:
        self.files = {file.path: file for file in files}
        self.modules = ModuleMap.build(((file.path, file.language) for file in files), root_name)
        self.symbols: dict[str, Symbol] = {}
        self.by_name: dict[str, list[Symbol]] = defaultdict(list)
        # Per file: the first part of each import (what makes a name qualified) and its
        # imports by last part (what a re-export lookup follows).
        self.import_heads: dict[str, frozenset[str]] = {}
        self.imports_by_last: dict[str, dict[str, list[str]]] = {}
        for file in files:
            for symbol in file.symbols:
                self.symbols[symbol.id] = symbol
                if symbol.kind != "module":
                    self.by_name[symbol.name].append(symbol)
            imported = [e.target_name for e in file.edges if e.kind == "imports"]
            separator = "::" if file.language == "rust" else "."
            self.import_heads[file.path] = frozenset(n.split(separator, 1)[0] for n in imported)
            by_last: dict[str, list[str]] = defaultdict(list)
            for name in imported:
                by_last[last_part(name)].append(name)
            self.imports_by_last[file.path] = by_last
        self.bases: dict[str, list[str]] = defaultdict(list)
        # Classes with a base that is not ``exact`` (another file's, or unresolved): a method
        # found past one of them depends on other files, so it is never ``exact``.
        self.open_bases: set[str] = set()
        self._named: dict[tuple[str, frozenset[str], frozenset[str]], _Named] = {}

    def named(self, name: str, kinds: frozenset[str], family: frozenset[str]) -> _Named:
        """The symbols called ``name`` of ``kinds`` in ``family``, grouped by class name."""
        key = (name, kinds, family)
        found = self._named.get(key)
        if found is None:
            symbols = [
                s for s in self.by_name.get(name, ()) if s.kind in kinds and s.language in family
            ]
            by_class: dict[str, list[Symbol]] = defaultdict(list)
            for symbol in symbols:
                by_class[_class_name(symbol).casefold()].append(symbol)
            found = self._named[key] = _Named(symbols, dict(by_class))
        return found

    def lookup(self, path: str, rest: Sequence[str], hops: int = 0) -> str | None:
        """The id of ``rest`` (qualname parts) defined in ``path``, following re-exports."""
        ident = symbol_id(path, ".".join(rest))
        if ident in self.symbols:
            return ident
        file = self.files.get(path)
        if not rest or file is None or hops >= MAX_REEXPORT_HOPS:
            return None
        for target_name in self.imports_by_last[path].get(rest[0], ()):
            for module, inner in self.modules.split(path, file.language, target_name):
                found = self.lookup(module, (*inner, *rest[1:]), hops + 1)
                if found is not None:
                    return found
        return None


class _Named:
    """Symbols of one name (and kinds, language family), and the same grouped by class name."""

    __slots__ = ("by_class", "ids", "symbols")

    def __init__(self, symbols: list[Symbol], by_class: dict[str, list[Symbol]]) -> None:
        self.symbols = symbols
        self.ids = frozenset(symbol.id for symbol in symbols)
        self.by_class = by_class


def resolve_edges(
    files: Sequence[FileIndex],
    *,
    root_name: str | None = None,
    only: Callable[[FileIndex, Edge], bool] | None = None,
) -> list[Edge]:
    """Every edge of ``files``, with targets resolved across them (see the module docstring).

    Args:
        files: all the files of one index (one scope), as extracted or as stored.
        root_name: the indexed root directory's name; when the root is itself a Python
            package (it holds ``__init__.py``), ``<root_name>.<module>`` names its modules.
        only: the edges to resolve (again); the others are returned as given, their targets
            taken as resolved (a stored base class still leads to its methods). ``None``: all.

    Returns:
        The edges in file order, then extraction order; ``exact`` edges unchanged.
    """
    index = _Index(files, root_name)
    resolved: dict[int, Edge] = {}
    ordered = [(file, edge) for file in files for edge in file.edges]

    def wanted(file: FileIndex, edge: Edge) -> bool:
        return edge.confidence != CONFIDENCE_EXACT and (only is None or only(file, edge))

    # Bases first, so inherited methods can be found through them.
    for position, (file, edge) in enumerate(ordered):
        if edge.kind == "extends":
            result = _resolve(index, file, edge) if wanted(file, edge) else edge
            resolved[position] = result
            if result.target_id is not None:
                index.bases[edge.source_id].append(result.target_id)
            if result.confidence != CONFIDENCE_EXACT:
                index.open_bases.add(edge.source_id)
    for position, (file, edge) in enumerate(ordered):
        if position not in resolved:
            resolved[position] = _resolve(index, file, edge) if wanted(file, edge) else edge
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
    return Edge(edge.kind, edge.source_id, edge.target_name, edge.line, target, confidence)


def _through_module(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    name = edge.target_name
    if file.language == "go" and edge.kind == "imports":
        name += ":"  # a Go import names a package: its files' module symbols
    for module, rest in index.modules.split(file.path, file.language, name):
        found = index.lookup(module, rest)
        if found is not None and found != edge.source_id:
            # ``exact`` only for a definition of the file itself found without a re-export:
            # an exact edge is never resolved again, so it must not depend on another file.
            direct = module == file.path and found == symbol_id(module, ".".join(rest))
            return found, CONFIDENCE_EXACT if direct else CONFIDENCE_RESOLVED
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
    return head in index.import_heads[file.path]


def _through_bases(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    parts = _split(edge.target_name)
    if len(parts) < 2:
        return None, CONFIDENCE_NAME_ONLY
    owner = symbol_id(file.path, ".".join(parts[:-1]))
    if owner not in index.symbols:
        return None, CONFIDENCE_NAME_ONLY
    frontier, seen = [owner], {owner}
    local = True  # every class looked through so far has only ``exact`` bases
    for _ in range(MAX_BASE_DEPTH):
        following: list[str] = []
        for current in frontier:
            local = local and current not in index.open_bases
            for base in index.bases.get(current, ()):
                if base in seen:
                    continue
                seen.add(base)
                candidate = f"{base}.{parts[-1]}" if "::" in base else f"{base}::{parts[-1]}"
                if candidate in index.symbols:
                    exact = local and index.symbols[candidate].file == file.path
                    return candidate, CONFIDENCE_EXACT if exact else CONFIDENCE_RESOLVED
                following.append(base)
        frontier = following
    return None, CONFIDENCE_NAME_ONLY


def _by_name(index: _Index, file: FileIndex, edge: Edge) -> tuple[str | None, Confidence]:
    parts = _split(edge.target_name)
    name = parts[-1] if parts else ""
    kinds = (
        CLASS_KINDS
        if edge.kind == "extends"
        else (_METHOD_KINDS if len(parts) > 1 else _CALLABLE_KINDS)
    )
    family = JS_FAMILY if file.language in JS_FAMILY else frozenset({file.language})
    named = index.named(name, kinds, family)
    # The candidates are the named symbols but the source itself (a recursive call).
    count = len(named.symbols) - (edge.source_id in named.ids)
    if count > 1 and len(parts) > 1:
        receiver = parts[-2].strip("_").casefold()
        narrowed = [s for s in named.by_class.get(receiver, ()) if s.id != edge.source_id]
        if len(narrowed) == 1:
            return narrowed[0].id, CONFIDENCE_NAME_ONLY
    if count == 1:
        return next(s.id for s in named.symbols if s.id != edge.source_id), CONFIDENCE_NAME_ONLY
    return None, CONFIDENCE_NAME_ONLY


def _class_name(symbol: Symbol) -> str:
    head = symbol.qualname.rpartition(".")[0]
    return head.rpartition(".")[2].split("#", 1)[0]


@lru_cache(maxsize=SPLIT_CACHE_SIZE)
def _split(name: str) -> tuple[str, ...]:
    tail = name.rpartition(":")[2] if ":" in name.replace("::", "") else name
    return tuple(part for part in _PARTS.split(tail) if part)


def name_parts(name: str) -> tuple[str, ...]:
    """The parts of a target name that a lookup reads (``pkg.mod:Box.search`` → ``("Box",
    "search")``, ``pkg.box.Box`` → ``("pkg", "box", "Box")``): after a JavaScript or Go
    module path only the member's parts, otherwise every ``.``/``::`` part."""
    return _split(name)


def last_part(name: str) -> str:
    """The last part of a target name (``pkg.mod:Box.search`` → ``search``): what name-only
    resolution looks up."""
    parts = _split(name)
    return parts[-1] if parts else ""


def resolved_counts(edges: Iterable[Edge]) -> dict[str, int]:
    """How many edges have a target, by confidence (unresolved ones under ``"unresolved"``)."""
    counts: dict[str, int] = defaultdict(int)
    for edge in edges:
        counts[edge.confidence if edge.target_id is not None else "unresolved"] += 1
    return dict(counts)


__all__ = [
    "MAX_BASE_DEPTH",
    "MAX_REEXPORT_HOPS",
    "last_part",
    "name_parts",
    "resolve_edges",
    "resolved_counts",
]
