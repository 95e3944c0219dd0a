"""Which stored edges a re-index resolves again (issue #11 item 2), without reading them all.

After files changed, the edges of the *unchanged* files whose resolution may differ are those
whose lookup touched a changed file. :func:`~recallbox.code.resolve.resolve_edges` finds a
target by its name: a module lookup ends on a symbol whose name is the target's last part,
a base-class lookup on ``<base>.<last part>``, a name-only lookup on the symbols called the last
part. So when only symbols and calls changed, an unchanged file's ``calls`` edge can change only
if its target's last part (:func:`target_last`) is the name of a symbol the changed files held
before or hold now: those edges are re-resolved, the others keep their stored resolution.

Everything else falls back to resolving every edge of the scope (:attr:`ResolutionPlan.full`):
a file added or deleted (the module map changes), a changed file whose ``imports`` or
``extends`` edges changed (re-exports and base classes are followed through files) or that
gained or lost its module symbol. A re-resolved ``extends`` edge whose target changed means
the class hierarchy moved: the caller then resolves in full too (:func:`bases_changed`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from recallbox.code.incremental import FileChanges
from recallbox.code.resolve import last_part
from recallbox.code.types import EDGE_EXTENDS, EDGE_IMPORTS, Edge, FileIndex


@dataclass(frozen=True, slots=True)
class ResolutionPlan:
    """Resolve every edge (``full``), or only the ``calls`` edges of unchanged files whose
    target's last part is in ``names`` (the edges of changed files are always resolved)."""

    full: bool
    names: frozenset[str] = frozenset()


FULL = ResolutionPlan(full=True)


def target_last(name: str) -> str:
    """The last part of an edge's target name (``pkg.mod:Box.search`` → ``search``)."""
    return last_part(name)


def _shape(file: FileIndex) -> tuple[bool, frozenset[tuple[str, str]]]:
    """What of a file other files' resolution may pass through: its module symbol and its
    import and base-class edges."""
    module = any(symbol.kind == "module" for symbol in file.symbols)
    links = frozenset(
        (edge.kind, edge.target_name)
        for edge in file.edges
        if edge.kind in (EDGE_IMPORTS, EDGE_EXTENDS)
    )
    return module, links


def plan_resolution(
    changes: FileChanges, old: Mapping[str, FileIndex], new: Sequence[FileIndex]
) -> ResolutionPlan:
    """The plan for one re-index (see the module docstring).

    Args:
        changes: what the walk found changed.
        old: the stored versions of the changed files (symbols, imports and extends edges).
        new: the changed files as parsed now.
    """
    if changes.added or changes.deleted:
        return FULL
    names: set[str] = set()
    for file in new:
        before = old.get(file.path)
        if before is None or _shape(before) != _shape(file):
            return FULL
        names.update(symbol.name for symbol in (*before.symbols, *file.symbols))
    return ResolutionPlan(full=False, names=frozenset(names))


def bases_changed(stored: Iterable[Edge], resolved: Iterable[Edge]) -> bool:
    """Whether an ``extends`` edge resolves to another target than it did (pairwise)."""
    return any(
        before.kind == EDGE_EXTENDS and before.target_id != after.target_id
        for before, after in zip(stored, resolved, strict=True)
    )


__all__ = ["FULL", "ResolutionPlan", "bases_changed", "plan_resolution", "target_last"]
