"""Incremental re-sync of knowledge documents as a plan, one file at a time (DESIGN §4, #10).

Given a document's new sections and the rows stored for its source, :func:`plan_file` says
what happens to each, so that the store applies one file in one transaction:

1. ``keep`` — a stored live section with the same content hash and lines: nothing is written.
2. ``move`` — the same content at other lines (an earlier section grew): only the line range
   changes; the index is not touched.
3. ``rename`` — the same non-blank body under another heading line: the row keeps its id.
4. ``edit`` — the same heading, other content: the row keeps its id, its content changes.
5. ``restore`` — the content of a row marked removed earlier comes back: the row is live
   again (its id, drills and vectors with it).
6. ``add`` — anything else new: a new row.
7. ``remove`` — a stored live section matched by nothing: marked removed, never deleted.

Matching goes in that order, each step over what earlier steps left, in document order, so a
document with repeated headings or repeated bodies is matched first to first. A file that
disappeared from the sync root has all its live rows removed (:func:`plan_removed_file`);
a file that is still there but was skipped (unreadable, binary, …) keeps its rows as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from recallbox.storage.base import StoredSection
from recallbox.text.markdown import MarkdownSection
from recallbox.types import SkippedFile, SyncReport

ACTION_KEEP = "keep"
ACTION_MOVE = "move"
ACTION_RENAME = "rename"
ACTION_EDIT = "edit"
ACTION_RESTORE = "restore"
ACTION_ADD = "add"
ACTION_REMOVE = "remove"
#: Actions that write nothing to the full-text index.
INDEX_UNTOUCHED_ACTIONS = frozenset({ACTION_KEEP, ACTION_MOVE})

FILE_ADDED = "added"
FILE_CHANGED = "changed"
FILE_UNCHANGED = "unchanged"
FILE_REMOVED = "removed"


@dataclass(frozen=True, slots=True)
class SectionChange:
    """One step of a file's plan: ``section_id`` is the stored row (``None`` for ``add``),
    ``section`` the new version (``None`` for ``remove``)."""

    action: str
    section_id: str | None
    section: MarkdownSection | None


@dataclass(frozen=True, slots=True)
class FilePlan:
    """Everything a re-sync does to one source, in document order, removals last."""

    source: str
    status: str
    changes: tuple[SectionChange, ...]

    def count(self, action: str) -> int:
        """How many changes of ``action`` the plan holds."""
        return sum(1 for change in self.changes if change.action == action)

    @property
    def writes(self) -> bool:
        """True when the store has anything to write for this file."""
        return any(change.action != ACTION_KEEP for change in self.changes)


class _Pool:
    """Stored rows not matched yet, in stored order."""

    def __init__(self, rows: Iterable[StoredSection]) -> None:
        self.rows = sorted(rows, key=lambda r: (r.start_line, r.id))
        self.used: set[str] = set()

    def take(self, wanted: MarkdownSection, test: str) -> StoredSection | None:
        best: StoredSection | None = None
        for row in self.rows:
            if row.id in self.used or not _fits(row, wanted, test):
                continue
            if best is None or (row.start_line == wanted.start_line):
                best = row
                if row.start_line == wanted.start_line:
                    break
        if best is not None:
            self.used.add(best.id)
        return best

    def unused(self) -> list[StoredSection]:
        return [row for row in self.rows if row.id not in self.used]


def _fits(row: StoredSection, wanted: MarkdownSection, test: str) -> bool:
    if test == "content":
        return row.content_hash == wanted.content_hash
    if test == "body":
        return row.body_hash == wanted.body_hash and wanted.body.strip() != ""
    return row.heading == wanted.heading


def plan_file(
    source: str, sections: Sequence[MarkdownSection], stored: Sequence[StoredSection]
) -> FilePlan:
    """The plan that turns the ``stored`` rows of ``source`` into ``sections``."""
    live = _Pool(row for row in stored if not row.removed)
    gone = _Pool(row for row in stored if row.removed)
    matched: dict[int, SectionChange] = {}
    for test, action in (
        ("content", ACTION_KEEP),
        ("body", ACTION_RENAME),
        ("heading", ACTION_EDIT),
    ):
        for index, section in enumerate(sections):
            if index in matched:
                continue
            row = live.take(section, test)
            if row is None:
                continue
            if action == ACTION_KEEP and (row.start_line, row.end_line) != section.lines:
                action_here = ACTION_MOVE
            else:
                action_here = action
            matched[index] = SectionChange(action_here, row.id, section)
    for index, section in enumerate(sections):
        if index not in matched:
            row = gone.take(section, "content")
            matched[index] = (
                SectionChange(ACTION_RESTORE, row.id, section)
                if row is not None
                else SectionChange(ACTION_ADD, None, section)
            )
    changes = [matched[index] for index in range(len(sections))]
    changes.extend(SectionChange(ACTION_REMOVE, row.id, None) for row in live.unused())
    return FilePlan(source, _status(stored, changes), tuple(changes))


def _status(stored: Sequence[StoredSection], changes: Sequence[SectionChange]) -> str:
    if all(change.action == ACTION_KEEP for change in changes):
        return FILE_UNCHANGED
    if not any(not row.removed for row in stored):
        return FILE_ADDED
    return FILE_CHANGED


def plan_removed_file(source: str, stored: Sequence[StoredSection]) -> FilePlan:
    """The plan for a source whose file is gone: every live row marked removed."""
    changes = tuple(
        SectionChange(ACTION_REMOVE, row.id, None)
        for row in sorted(stored, key=lambda r: (r.start_line, r.id))
        if not row.removed
    )
    return FilePlan(source, FILE_REMOVED if changes else FILE_UNCHANGED, changes)


def removed_sources(stored_sources: Iterable[str], present: Iterable[str]) -> list[str]:
    """Stored sources (of one root and scope) whose file is no longer there, sorted.

    ``stored_sources`` are the sources with live rows; ``present`` every source the walk
    found, skipped files included (a skipped file keeps its rows).
    """
    here = set(present)
    return sorted(set(stored_sources) - here)


def sync_report(
    root: str,
    scope: str | None,
    plans: Sequence[FilePlan],
    skipped: Sequence[SkippedFile],
) -> SyncReport:
    """The :class:`SyncReport` of a sync that applied ``plans`` and skipped ``skipped``."""

    def total(action: str) -> int:
        return sum(plan.count(action) for plan in plans)

    def files(status: str) -> int:
        return sum(1 for plan in plans if plan.status == status)

    return SyncReport(
        root=root,
        scope=scope,
        files_seen=sum(1 for plan in plans if plan.status != FILE_REMOVED)
        + sum(1 for skip in skipped if not skip.source.endswith("/")),
        files_added=files(FILE_ADDED),
        files_changed=files(FILE_CHANGED),
        files_unchanged=files(FILE_UNCHANGED),
        files_removed=files(FILE_REMOVED),
        sections_added=total(ACTION_ADD),
        sections_updated=total(ACTION_EDIT),
        sections_renamed=total(ACTION_RENAME),
        sections_moved=total(ACTION_MOVE),
        sections_restored=total(ACTION_RESTORE),
        sections_unchanged=total(ACTION_KEEP),
        sections_removed=total(ACTION_REMOVE),
        skipped=tuple(skipped),
    )
