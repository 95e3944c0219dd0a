"""Applying an edited MEMORY.md to the stored memory entries, as a plan (DESIGN §4.3).

Applying a file (:func:`plan_memory_import`) changes only what a person may edit: the title,
the body, the state (``state_since`` becomes the comment's when it was edited too, else the
import day) and the evergreen flag. Other metadata that differs is listed as ignored, and so is
a state older than the store's (its ``state_since`` before the stored one: the entry decayed or
was revived after the file was exported, so a stale file never undoes that). Keys
the store does not hold are created as written (an export imported into a fresh database),
bullets without a comment become new entries, and stored entries missing from the file are
reported as removed, never deleted.

The plan is pure: the store applies it in one transaction, or not at all when the file has
errors (:func:`plan_memory_import` raises before anything is planned).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date

from recallbox.domains.memory_md import FileProblem, ParsedEntry, ParsedMemoryFile, export_order
from recallbox.errors import InvalidArgument
from recallbox.types import MemoryEntry

#: The fields an import applies; the others are the store's.
EDITABLE_FIELDS: tuple[str, ...] = ("title", "body", "state", "evergreen")
#: The metadata an import never changes (a different value in the file is reported).
STORE_FIELDS: tuple[str, ...] = (
    "state_since",
    "created",
    "last_referenced",
    "ref_count",
    "superseded_by",
)
#: At most this many problems are named in the message of a refused import.
MAX_PROBLEMS_IN_MESSAGE = 20


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A bullet without a metadata comment: ``remember(body, type, title)`` on import."""

    line: int
    type: str
    title: str | None
    body: str


@dataclass(frozen=True, slots=True)
class EntryUpdate:
    """A stored entry a person edited: ``entry`` is its new version; ``fields`` names what
    changes (of :data:`EDITABLE_FIELDS`, plus ``state_since`` with a state)."""

    line: int
    entry: MemoryEntry
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IgnoredEdit:
    """Metadata of :data:`STORE_FIELDS` the file gives differently; left as stored."""

    line: int
    key: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MemoryImportPlan:
    """What importing a MEMORY.md changes; the store applies it in one transaction.

    ``creates``: entries whose keys the store does not hold, to insert as written (their
    numbers count as issued); ``new_entries``: bullets to remember; ``updates``: edited stored
    entries; ``unchanged``: entries the file leaves as stored; ``removed``: stored keys the
    file no longer lists (reported, kept); ``ignored``: metadata edits not applied;
    ``unknown``: lines that were not used.
    """

    creates: tuple[MemoryEntry, ...] = ()
    new_entries: tuple[NewEntry, ...] = ()
    updates: tuple[EntryUpdate, ...] = ()
    unchanged: int = 0
    removed: tuple[str, ...] = ()
    ignored: tuple[IgnoredEdit, ...] = ()
    unknown: tuple[FileProblem, ...] = ()


def refusal_message(errors: Sequence[FileProblem]) -> str:
    """One message naming every error (up to :data:`MAX_PROBLEMS_IN_MESSAGE`) by line."""
    shown = [f"line {p.line}: {p.reason}" for p in errors[:MAX_PROBLEMS_IN_MESSAGE]]
    more = len(errors) - len(shown)
    tail = f"; and {more} more" if more > 0 else ""
    return "MEMORY.md not imported (nothing changed): " + "; ".join(shown) + tail


def _update(parsed: ParsedEntry, stored: MemoryEntry, today: date) -> EntryUpdate | None:
    meta = parsed.metadata
    assert meta is not None
    new = replace(stored, title=parsed.title, body=parsed.body, evergreen=meta.evergreen)
    fields = [
        name
        for name in ("title", "body", "evergreen")
        if getattr(new, name) != getattr(stored, name)
    ]
    if meta.state != stored.state and not _stale_state(parsed, stored):
        edited_since = meta.state_since is not None and meta.state_since != stored.state_since
        since = meta.state_since if edited_since else today
        new = replace(new, state=meta.state, state_since=since)
        fields.extend(["state", "state_since"])
    return EntryUpdate(parsed.line, new, tuple(fields)) if fields else None


def _stale_state(parsed: ParsedEntry, stored: MemoryEntry) -> bool:
    """The file's state is older than the store's: the stored state began after the file's
    (a decay or a revival since the export), so the file's is not applied."""
    meta = parsed.metadata
    assert meta is not None
    return (
        meta.state != stored.state
        and meta.state_since is not None
        and stored.state_since is not None
        and meta.state_since < stored.state_since
    )


def _ignored(
    parsed: ParsedEntry, stored: MemoryEntry, update: EntryUpdate | None
) -> IgnoredEdit | None:
    meta = parsed.metadata
    assert meta is not None
    changed = update.fields if update is not None else ()
    fields: tuple[str, ...] = ("state",) if _stale_state(parsed, stored) else ()
    fields += tuple(
        name
        for name in STORE_FIELDS
        if getattr(meta, name) != getattr(stored, name) and name not in changed
    )
    return IgnoredEdit(parsed.line, stored.key, fields) if fields else None


def plan_memory_import(
    parsed: ParsedMemoryFile, stored: Sequence[MemoryEntry], today: date
) -> MemoryImportPlan:
    """What applying ``parsed`` to the ``stored`` entries changes (see the module docstring).

    Raises:
        InvalidArgument: the file has errors; the message names each by line, nothing applies.
    """
    if parsed.errors:
        raise InvalidArgument(refusal_message(parsed.errors))
    by_key = {entry.key: entry for entry in stored}
    creates: list[MemoryEntry] = []
    new_entries: list[NewEntry] = []
    updates: list[EntryUpdate] = []
    ignored: list[IgnoredEdit] = []
    unchanged = 0
    listed: set[str] = set()
    for item in parsed.entries:
        meta = item.metadata
        if meta is None:
            new_entries.append(NewEntry(item.line, item.type, item.title, item.body))
            continue
        listed.add(meta.key)
        current = by_key.get(meta.key)
        if current is None:
            creates.append(replace(meta, title=item.title, body=item.body))
            continue
        update = _update(item, current, today)
        if update is None:
            unchanged += 1
        else:
            updates.append(update)
        skipped = _ignored(item, current, update)
        if skipped is not None:
            ignored.append(skipped)
    removed = tuple(e.key for e in export_order(stored) if e.key not in listed)
    return MemoryImportPlan(
        creates=tuple(creates),
        new_entries=tuple(new_entries),
        updates=tuple(updates),
        unchanged=unchanged,
        removed=removed,
        ignored=tuple(ignored),
        unknown=parsed.unknown,
    )
