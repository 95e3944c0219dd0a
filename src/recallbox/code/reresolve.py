"""Which stored edges a re-index resolves again (issue #11 item 2), without reading them all.

After files changed, an edge of an *unchanged* file can resolve differently only if its lookup
in :func:`~recallbox.code.resolve.resolve_edges` reads something of a changed file that
changed. A lookup reads two things of a file it passes through:

* **whether a symbol exists** — ``<file>::<rest>`` through a module or a re-export, ``<base>.
  <last>`` through a base class, every symbol called ``<last>`` by name. The symbol's last
  part is always the target's last part (:func:`target_last`; a re-export swaps the first
  parts of the name, never the last), so such an edge can change only if its last part is
  the name of a symbol a changed file gained or lost (:func:`symbol_names`: the symmetric
  difference of ``(id, name, kind)``; a symbol that only moved lines reads the same);
* **its imports of one last part** — a re-export is followed by the imports whose last part is
  the first part left of the name (``pkg.Box.run`` in ``pkg/__init__.py`` follows the imports
  ending in ``Box``). Such an edge can change only if a part of its name is a *key* whose
  imports a changed file changed (:func:`import_keys`), or a key reached through another
  file's import on the way: :func:`reexport_closure` adds the last part of every import of the
  scope that names a key among its other parts.

So an unchanged file's edge is resolved again when its last part is among
:attr:`ResolutionPlan.names` or one of its parts among :attr:`ResolutionPlan.keys`
(:meth:`ResolutionPlan.selects`); the edges of the changed files always are.

Everything else falls back to resolving every edge of the scope (:attr:`ResolutionPlan.full`):
a file added or deleted (the module map changes), a changed file that gained or lost its
module symbol, more than :data:`MAX_PARTIAL_KEYS` keys, and — found while resolving — a base
class that moved: an ``extends`` edge of a changed file that resolves elsewhere than it did
(:func:`bases_of`), or a re-resolved one of an unchanged file (:func:`bases_changed`), since
a class hierarchy is followed through files by every method lookup.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from recallbox.code.incremental import FileChanges
from recallbox.code.resolve import last_part, name_parts
from recallbox.code.types import EDGE_EXTENDS, EDGE_IMPORTS, Edge, FileIndex


@dataclass(frozen=True, slots=True)
class ResolutionPlan:
    """Resolve every edge (``full``), or only the edges of unchanged files that
    :meth:`selects` (the edges of changed files are always resolved)."""

    full: bool
    #: Names of symbols the changed files gained or lost: an edge whose last part is one.
    names: frozenset[str] = frozenset()
    #: Import keys whose imports changed, closed over re-exports: an edge with such a part.
    keys: frozenset[str] = frozenset()

    def selects(self, target_name: str) -> bool:
        """Whether an unchanged file's edge to ``target_name`` is resolved again."""
        if self.full:
            return True
        if not self.names and not self.keys:
            return False
        parts = name_parts(target_name)
        if (parts[-1] if parts else "") in self.names:
            return True
        return bool(self.keys) and not self.keys.isdisjoint(parts)


FULL = ResolutionPlan(full=True)
#: More import keys than this (after the re-export closure) and every edge is resolved again:
#: each key is a substring test on every stored call of the scope, so past this many the
#: selection would cost about what resolving everything costs.
MAX_PARTIAL_KEYS = 128


def target_last(name: str) -> str:
    """The last part of an edge's target name (``pkg.mod:Box.search`` → ``search``)."""
    return last_part(name)


def _has_module(file: FileIndex) -> bool:
    return any(symbol.kind == "module" for symbol in file.symbols)


def symbol_names(before: FileIndex, after: FileIndex) -> set[str]:
    """The names of the symbols one file gained or lost (by id, name and kind)."""
    old = {(s.id, s.name, s.kind) for s in before.symbols}
    new = {(s.id, s.name, s.kind) for s in after.symbols}
    return {name for _, name, _ in old ^ new}


def _imports_by_last(file: FileIndex) -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for edge in file.edges:
        if edge.kind == EDGE_IMPORTS:
            found[last_part(edge.target_name)].append(edge.target_name)
    return found


def import_keys(before: FileIndex, after: FileIndex) -> set[str]:
    """The last parts whose imports (in file order) differ between two versions of a file."""
    old, new = _imports_by_last(before), _imports_by_last(after)
    return {key for key in old.keys() | new.keys() if old.get(key) != new.get(key)}


def reexport_closure(keys: Iterable[str], imports: Iterable[str]) -> frozenset[str]:
    """``keys`` and the last part of every import in ``imports`` (target names of the scope)
    that names one of them among its other parts, repeated until nothing is added."""
    found = set(keys)
    if not found:
        return frozenset()
    names = [parts for parts in {name_parts(name) for name in imports} if len(parts) > 1]
    grown = True
    while grown:
        grown = False
        for parts in names:
            if parts[-1] not in found and not found.isdisjoint(parts[:-1]):
                found.add(parts[-1])
                grown = True
    return frozenset(found)


def plan_resolution(
    changes: FileChanges,
    old: Mapping[str, FileIndex],
    new: Sequence[FileIndex],
    imports: Iterable[str] = (),
) -> ResolutionPlan:
    """The plan for one re-index (see the module docstring).

    Args:
        changes: what the walk found changed.
        old: the stored versions of the changed files (symbols, imports and extends edges).
        new: the changed files as parsed now.
        imports: the target names of every ``imports`` edge of the scope, old and new.
    """
    if changes.added or changes.deleted:
        return FULL
    names: set[str] = set()
    keys: set[str] = set()
    for file in new:
        before = old.get(file.path)
        if before is None or _has_module(before) != _has_module(file):
            return FULL
        names |= symbol_names(before, file)
        keys |= import_keys(before, file)
    closed = reexport_closure(keys, imports)
    if len(closed) > MAX_PARTIAL_KEYS:
        return FULL
    return ResolutionPlan(full=False, names=frozenset(names), keys=closed)


def bases_of(edges: Iterable[Edge]) -> list[tuple[str, str | None]]:
    """What a file's ``extends`` edges say, in order: ``(class, base)`` pairs."""
    return [(edge.source_id, edge.target_id) for edge in edges if edge.kind == EDGE_EXTENDS]


def bases_changed(stored: Iterable[Edge], resolved: Iterable[Edge]) -> bool:
    """Whether an ``extends`` edge resolves to another target than it did (pairwise)."""
    return any(
        before.kind == EDGE_EXTENDS and before.target_id != after.target_id
        for before, after in zip(stored, resolved, strict=True)
    )


__all__ = [
    "FULL",
    "MAX_PARTIAL_KEYS",
    "ResolutionPlan",
    "bases_changed",
    "bases_of",
    "import_keys",
    "plan_resolution",
    "reexport_closure",
    "symbol_names",
    "target_last",
]
