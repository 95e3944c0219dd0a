"""Incremental re-sync plans (#10 item 1): keep, move, rename, edit, restore, add, remove."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.knowledge_files import Document, iter_documents, split_document
from recallbox.domains.knowledge_plan import (
    ACTION_ADD,
    ACTION_EDIT,
    ACTION_KEEP,
    ACTION_MOVE,
    ACTION_REMOVE,
    ACTION_RENAME,
    ACTION_RESTORE,
    FILE_ADDED,
    FILE_CHANGED,
    FILE_REMOVED,
    FILE_UNCHANGED,
    FilePlan,
    StoredSection,
    plan_file,
    plan_removed_file,
    removed_sources,
    sync_report,
)
from recallbox.text.markdown import MarkdownSection, split_markdown
from recallbox.types import SkippedFile, SyncReport


class FakeIndex:
    """Applies plans the way the store will: rows are never deleted, only marked removed."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, tuple[StoredSection, str]]] = {}
        self.ids = itertools.count(1)
        self.writes = 0

    def stored(self, source: str) -> list[StoredSection]:
        return [row for row, _ in self.rows.get(source, {}).values()]

    def live(self) -> dict[str, list[tuple[str | None, str]]]:
        out: dict[str, list[tuple[str | None, str]]] = {}
        for source, rows in sorted(self.rows.items()):
            kept = sorted(
                (r for r in rows.values() if not r[0].removed), key=lambda r: r[0].start_line
            )
            if kept:
                out[source] = [(row.heading, content) for row, content in kept]
        return out

    def apply(self, plan: FilePlan) -> None:
        rows = self.rows.setdefault(plan.source, {})
        for change in plan.changes:
            if change.action == ACTION_KEEP:
                continue
            self.writes += 1
            if change.action == ACTION_REMOVE:
                assert change.section_id is not None
                row, content = rows[change.section_id]
                rows[change.section_id] = (replace(row, removed=True), content)
                continue
            section = change.section
            assert section is not None
            ident = change.section_id or f"s{next(self.ids)}"
            rows[ident] = (row_of(ident, section), section.content)

    def sync(self, root: Path) -> SyncReport:
        plans, skipped, present = [], [], []
        for item in iter_documents(root):
            if isinstance(item, SkippedFile):
                skipped.append(item)
                present.append(item.source)
                continue
            assert isinstance(item, Document)
            present.append(item.source)
            plan = plan_file(
                item.source, split_document(item.source, item.text), self.stored(item.source)
            )
            plans.append(plan)
        live_sources = [
            s for s, rows in self.rows.items() if any(not r.removed for r, _ in rows.values())
        ]
        plans.extend(
            plan_removed_file(source, self.stored(source))
            for source in removed_sources(live_sources, present)
        )
        for plan in plans:
            self.apply(plan)
        return sync_report(str(root), None, plans, skipped)


def row_of(ident: str, section: MarkdownSection) -> StoredSection:
    return StoredSection(
        ident,
        section.heading,
        section.start_line,
        section.end_line,
        section.content_hash,
        section.body_hash,
    )


def actions(plan: FilePlan) -> list[tuple[str, str | None]]:
    return [(c.action, c.section.heading if c.section else c.section_id) for c in plan.changes]


def test_fixture_directory_edit_delete_rename_binary(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "deploy.md").write_text(
        "# Deploy\n\n## Steps\nbuild\n\n## Rollback\nrevert\n", encoding="utf-8"
    )
    (tmp_path / "docs" / "faq.md").write_text("intro\n## Why\nbecause\n", encoding="utf-8")
    (tmp_path / "docs" / "old.md").write_text("## Gone\nsoon\n", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("plain\n## not a split\n", encoding="utf-8")
    index = FakeIndex()
    first = index.sync(tmp_path)
    assert (first.files_seen, first.files_added, first.sections_added) == (4, 4, 6)

    (tmp_path / "deploy.md").write_text(
        "# Deploy\n\n## Steps\nbuild\ntest\n\n## Undo\nrevert\n", encoding="utf-8"
    )  # one section edited, one heading renamed
    (tmp_path / "docs" / "old.md").unlink()
    (tmp_path / "image.md").write_bytes(b"\x89PNG\x00\x00")
    ids_before = {h: i for i, (r, _) in index.rows["deploy.md"].items() for h in [r.heading]}
    second = index.sync(tmp_path)
    assert second == SyncReport(
        root=str(tmp_path),
        scope=None,
        files_seen=4,
        files_changed=1,
        files_unchanged=2,
        files_removed=1,
        sections_updated=1,
        sections_renamed=1,
        sections_moved=0,
        sections_unchanged=3,
        sections_removed=1,
        skipped=(SkippedFile("image.md", "binary (holds a NUL byte)"),),
    )
    assert index.live() == {
        "deploy.md": [
            ("Steps", "# Deploy\n\n## Steps\nbuild\ntest\n\n"),
            ("Undo", "## Undo\nrevert\n"),
        ],
        "docs/faq.md": [(None, "intro\n"), ("Why", "## Why\nbecause\n")],
        "notes.txt": [(None, "plain\n## not a split\n")],
    }
    renamed = {r.heading: i for i, (r, _) in index.rows["deploy.md"].items()}
    assert renamed["Undo"] == ids_before["Rollback"] and renamed["Steps"] == ids_before["Steps"]
    (old_row,) = index.stored("docs/old.md")
    assert old_row.removed and old_row.heading == "Gone"  # kept, marked removed

    writes = index.writes
    third = index.sync(tmp_path)
    assert index.writes == writes  # a second sync with no change writes nothing
    assert (third.files_unchanged, third.sections_unchanged, third.files_changed) == (3, 5, 0)
    assert len(third.skipped) == 1


def test_moves_restores_and_duplicates() -> None:
    old = split_markdown("## A\na\n## B\nb\n## B\nb2\n")
    stored = [row_of(f"s{i}", s) for i, s in enumerate(old)]
    new = split_markdown("intro\n\n## A\na\n## B\nb2\n## B\nb\n")
    plan = plan_file("x.md", new, stored)
    assert [(c.action, c.section_id) for c in plan.changes] == [
        (ACTION_ADD, None),
        (ACTION_MOVE, "s0"),
        (ACTION_KEEP, "s2"),
        (ACTION_MOVE, "s1"),
    ]
    assert plan.status == FILE_CHANGED and plan.writes

    gone = [replace(row, removed=True) for row in stored]
    back = plan_file("x.md", old, gone)
    assert [(c.action, c.section_id) for c in back.changes] == [
        (ACTION_RESTORE, "s0"),
        (ACTION_RESTORE, "s1"),
        (ACTION_RESTORE, "s2"),
    ]
    assert back.status == FILE_ADDED


def test_blank_bodies_are_no_evidence_of_a_rename() -> None:
    stored = [row_of("s0", s) for s in split_markdown("## A\n")]
    plan = plan_file("x.md", split_markdown("## B\n"), stored)
    assert actions(plan) == [(ACTION_ADD, "B"), (ACTION_REMOVE, "s0")]


def test_removed_file_and_sources() -> None:
    stored = [row_of(f"s{i}", s) for i, s in enumerate(split_markdown("## A\na\n## B\nb\n"))]
    plan = plan_removed_file("x.md", stored)
    assert (plan.status, actions(plan)) == (
        FILE_REMOVED,
        [(ACTION_REMOVE, "s0"), (ACTION_REMOVE, "s1")],
    )
    assert plan_removed_file("x.md", [replace(r, removed=True) for r in stored]).changes == ()
    assert removed_sources(["a.md", "b.md", "c.md"], ["b.md", "d.md"]) == ["a.md", "c.md"]
    assert plan_file("x.md", split_markdown("## A\na\n## B\nb\n"), stored).status == FILE_UNCHANGED


_sections = st.lists(
    st.tuples(st.sampled_from(["A", "B", "C", "D"]), st.sampled_from(["x", "y", "z", ""])),
    max_size=6,
)


def _doc(parts: list[tuple[str, str]]) -> str:
    return "".join(f"## {h}\n{b}\n" if b else f"## {h}\n" for h, b in parts)


@given(_sections, _sections)
def test_a_plan_turns_the_old_rows_into_the_new_document(old: list, new: list) -> None:
    index = FakeIndex()
    index.apply(plan_file("x.md", split_markdown(_doc(old)), []))
    plan = plan_file("x.md", split_markdown(_doc(new)), index.stored("x.md"))
    used = [c.section_id for c in plan.changes if c.section_id is not None]
    assert len(used) == len(set(used))  # a stored row is used at most once
    index.apply(plan)
    expected = [(s.heading, s.content) for s in split_markdown(_doc(new))]
    assert index.live().get("x.md", []) == expected
    again = plan_file("x.md", split_markdown(_doc(new)), index.stored("x.md"))
    assert all(c.action == ACTION_KEEP for c in again.changes)
    assert {c.action for c in plan.changes} <= {
        ACTION_KEEP,
        ACTION_MOVE,
        ACTION_RENAME,
        ACTION_EDIT,
        ACTION_RESTORE,
        ACTION_ADD,
        ACTION_REMOVE,
    }
