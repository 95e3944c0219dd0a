"""The inspector's audit reads (#20): documents with their section counts, hit-log rows per day."""

from __future__ import annotations

from datetime import UTC, datetime

from recallbox.storage.base import HitRow, Store

from .helpers import document, remove_document

RUNBOOK = "# Runbook\n\n## Deploy\nmake deploy\n\n## Rollback\nmake rollback\n"
NOTES = "# Notes\n\n## One\nfirst\n"


def test_documents_are_listed_with_live_and_removed_counts(store: Store) -> None:
    assert store.knowledge_documents() == []
    document(store, "runbook.md", RUNBOOK, root="/notes")
    document(store, "notes.md", NOTES, scope="proj")
    document(store, "gone.md", NOTES, root="/notes")
    remove_document(store, "gone.md")
    listed = {(d.scope, d.source): d for d in store.knowledge_documents()}
    assert [d.source for d in store.knowledge_documents()] == ["gone.md", "notes.md", "runbook.md"]
    runbook = listed[(None, "runbook.md")]
    assert (runbook.sections, runbook.removed_sections, runbook.root) == (2, 0, "/notes")
    assert runbook.last_sync.tzinfo is not None
    assert (listed[("proj", "notes.md")].sections, listed[("proj", "notes.md")].root) == (1, None)
    assert listed[(None, "gone.md")].sections == 0 and listed[(None, "gone.md")].removed_sections >= 1


def test_hit_days_groups_rows_by_utc_day_and_domain(store: Store) -> None:
    day1 = datetime(2026, 3, 1, 23, 59, tzinfo=UTC)
    day2 = datetime(2026, 3, 2, 0, 1, tzinfo=UTC)
    assert store.append_hit_rows([
        HitRow(day1, "sessions", "m_1", query="q"), HitRow(day1, "sessions", "m_2", query="q"),
        HitRow(day1, "memory", "GDL01", query="q"), HitRow(day2, "sessions", "m_1", verb="read_message"),
        HitRow(day2, "code", "a.py::f", query="q"),
    ])  # fmt: skip
    rows = [(r.day, r.domain, r.hits, r.drills) for r in store.hit_days(since="2026-03-01", until="2026-03-03")]
    assert rows == [
        ("2026-03-01", "memory", 1, 0),
        ("2026-03-01", "sessions", 2, 0),
        ("2026-03-02", "code", 1, 0),
        ("2026-03-02", "sessions", 0, 1),
    ]
    assert [r.day for r in store.hit_days(since="2026-03-02", until="2026-03-03")] == ["2026-03-02"] * 2
    assert store.hit_days(since="2026-03-01", until="2026-03-02")[-1].day == "2026-03-01"
    assert store.hit_days(since="2027-01-01", until="2027-01-02") == []
