"""The knowledge and memory tables of the SQLite backend: FTS5 discipline, doctor, migration."""

from __future__ import annotations

from datetime import date, timedelta

import apsw

import recallbox
from recallbox.storage.base import DocumentWrite, SectionWrite
from recallbox.storage.sqlite.schema import (
    FTS_INDEXES,
    KNOWLEDGE_SECTIONS_FTS,
    LATEST_VERSION,
    LITERAL_INDEXES,
    MEMORY_ENTRIES_FTS,
)
from recallbox.text.markdown import split_markdown

DOC = "## One\nalpha words\n\n## Two\nbeta words\n"


def conn(box: recallbox.Box) -> apsw.Connection:
    return box.store.pool.connection()  # type: ignore[attr-defined,no-any-return]


def index_state(box: recallbox.Box, name: str) -> list[tuple[object, ...]]:
    """The FTS5 index's own storage: any write to the index changes it."""
    return [tuple(r) for r in conn(box).execute(f"SELECT id, block FROM {name}_data ORDER BY id")]


def test_both_indexes_are_checked_by_doctor(box: recallbox.Box) -> None:
    names = {ix.table for ix in box.doctor().indexes}
    assert {KNOWLEDGE_SECTIONS_FTS.name, MEMORY_ENTRIES_FTS.name} <= names
    assert box.store.schema_version() == LATEST_VERSION
    assert set(FTS_INDEXES) | set(LITERAL_INDEXES) == names


def test_the_index_is_written_only_when_the_indexed_text_changes(box: recallbox.Box) -> None:
    box.add_document(DOC, "a.md")
    entry = box.remember("a lesson about alpha")
    sections, memory = KNOWLEDGE_SECTIONS_FTS.name, MEMORY_ENTRIES_FTS.name
    before = (index_state(box, sections), index_state(box, memory))
    rows = box.store.document_sections(None, "a.md")
    moved = tuple(  # the same sections two lines further down: a move
        SectionWrite(row.id, s.heading, s.level, s.start_line + 2, s.end_line + 2,
                     (s.heading_line or 0) + 2, s.content, s.content_hash, s.body_hash)
        for row, s in zip(rows, split_markdown(DOC), strict=True)
    )  # fmt: skip
    box.store.write_document(DocumentWrite("a.md", None, "a.md", "a.md", None, None, moved))
    assert [s.start_line for s in box.store.document_sections(None, "a.md")] == [3, 6]
    box.touch(entry.key)
    box.decay(date.today() + timedelta(days=400))  # a state change
    assert (index_state(box, sections), index_state(box, memory)) == before
    box.add_document(DOC.replace("beta", "gamma"), "a.md")
    assert index_state(box, sections) != before[0]
    assert box.doctor().healthy


def test_a_removed_section_leaves_the_index_and_keeps_its_row(box: recallbox.Box) -> None:
    _one, two = box.add_document(DOC, "a.md")
    box.add_document("## One\nalpha words\n\n", "a.md")
    row = conn(box).execute(
        "SELECT removed, content, content_seg FROM knowledge_sections WHERE uid = ?", (two.id,)
    ).fetchone()
    assert row == (1, two.content, "")
    found = conn(box).execute(
        "SELECT count(*) FROM knowledge_sections_fts WHERE knowledge_sections_fts MATCH 'beta'"
    ).fetchone()
    assert found == (0,) and box.doctor().healthy


def test_doctor_detects_and_repairs_a_desync_of_both(box: recallbox.Box) -> None:
    for i in range(25):
        box.add_document(f"## Part {i}\ndeploy note number {i}\n", f"n{i}.md")
        box.remember(f"lesson number {i} about deploys")
    assert box.doctor().healthy
    db = conn(box)
    for index in (KNOWLEDGE_SECTIONS_FTS, MEMORY_ENTRIES_FTS):
        for trigger in index.trigger_names():
            db.execute(f"DROP TRIGGER {trigger}")
    db.execute("UPDATE knowledge_sections SET content_seg = 'other words entirely'")
    db.execute("UPDATE memory_entries SET content_seg = 'other words entirely'")
    report = box.doctor()
    broken = {ix.table for ix in report.indexes if not ix.healthy}
    assert broken == {KNOWLEDGE_SECTIONS_FTS.name, MEMORY_ENTRIES_FTS.name}
    assert box.doctor(repair=True).healthy
    assert len(box.memories()) == 25
    assert [h.source for h in box.search("entirely", domain="knowledge", limit=50)]
    box.remember("after the repair")  # the triggers are back
    assert box.doctor().healthy
