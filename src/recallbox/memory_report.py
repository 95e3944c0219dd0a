"""What a MEMORY.md import did, line by line (``import_memory``; re-exported by ``types``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MemoryFieldChange:
    """An entry a MEMORY.md import changed, and which fields (``memory import``)."""

    key: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MemoryFileLine:
    """A line of MEMORY.md an import did not use or did not apply, with its number and why."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class MemoryImportReport:
    """What ``import_memory`` did (all of it in one transaction).

    ``created``: keys of the file the store did not hold, inserted as written (an export
    imported into a fresh database); ``added``: keys of bullets without metadata (new entries,
    or the existing entry holding the same text); ``updated``: edited entries and their
    fields; ``unchanged``: entries left as stored; ``removed``: stored keys the file no longer
    lists (reported, never deleted); ``ignored``: metadata edits an import never applies;
    ``unknown``: lines that were not used.
    """

    created: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    updated: tuple[MemoryFieldChange, ...] = ()
    unchanged: int = 0
    removed: tuple[str, ...] = ()
    ignored: tuple[MemoryFileLine, ...] = ()
    unknown: tuple[MemoryFileLine, ...] = ()


# -- tool outputs and injection (#12)
