"""Planning a MEMORY.md import (#10 item 5): fresh store, person edits, all-or-nothing."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from recallbox.domains.memory_import import (
    EntryUpdate,
    IgnoredEdit,
    NewEntry,
    plan_memory_import,
)
from recallbox.domains.memory_md import export_memory_md, parse_memory_md
from recallbox.errors import InvalidArgument
from recallbox.types import MemoryEntry

DAY = date(2025, 3, 1)
TODAY = date(2025, 4, 1)


def make(key: str, memory_type: str, title: str | None, body: str, **kw: object) -> MemoryEntry:
    base = MemoryEntry(key, memory_type, title, body, "active", DAY, None, DAY)
    return replace(base, **kw)  # type: ignore[arg-type]


ENTRIES = [
    make("PRI01", "principle", "Small steps", "One change at a time.", evergreen=True),
    make("GDL01", "guideline", "Tests first", "Run them\nbefore a commit.", ref_count=4),
    make("PIT02", "pitfall", None, "Never force-push main.", state="dormant", state_since=DAY),
]


def apply(stored: list[MemoryEntry], text: str) -> list[MemoryEntry]:
    plan = plan_memory_import(parse_memory_md(text), stored, TODAY)
    out = {e.key: e for e in stored}
    out.update({e.key: e for e in plan.creates})
    out.update({u.entry.key: u.entry for u in plan.updates})
    return list(out.values())


def test_export_import_into_a_fresh_store_export_is_identical() -> None:
    text = export_memory_md(ENTRIES)
    plan = plan_memory_import(parse_memory_md(text), [], TODAY)
    assert plan.updates == plan.new_entries == plan.removed == () and plan.unchanged == 0
    assert export_memory_md(list(plan.creates)) == text
    again = plan_memory_import(parse_memory_md(text), list(plan.creates), TODAY)
    assert (again.creates, again.updates, again.unchanged) == ((), (), 3)


def test_editing_one_title_one_body_one_state_changes_exactly_those() -> None:
    text = export_memory_md(ENTRIES)
    text = text.replace("- **Small steps**", "- **Smaller steps**")
    text = text.replace("  before a commit.", "  before every commit.")
    text = text.replace(
        "key=PIT02 type=pitfall state=dormant", "key=PIT02 type=pitfall state=archived"
    )
    plan = plan_memory_import(parse_memory_md(text), ENTRIES, TODAY)
    lines = text.split("\n")
    assert plan.updates == (
        EntryUpdate(
            lines.index("- **Smaller steps**") + 1,
            replace(ENTRIES[0], title="Smaller steps"),
            ("title",),
        ),
        EntryUpdate(
            lines.index("- **Tests first**") + 1,
            replace(ENTRIES[1], body="Run them\nbefore every commit."),
            ("body",),
        ),
        EntryUpdate(
            lines.index("- Never force-push main.") + 1,
            replace(ENTRIES[2], state="archived", state_since=TODAY),
            ("state", "state_since"),
        ),
    )
    assert plan.unchanged == 0 and plan.ignored == () and plan.creates == ()


def test_state_since_edited_with_the_state_is_taken() -> None:
    text = export_memory_md(ENTRIES).replace(
        "state=dormant state_since=2025-03-01", "state=active state_since=2025-03-20"
    )
    (update,) = plan_memory_import(parse_memory_md(text), ENTRIES, TODAY).updates
    assert (update.entry.state, update.entry.state_since) == ("active", date(2025, 3, 20))


def test_evergreen_edit_store_fields_ignored_new_and_removed() -> None:
    text = export_memory_md(ENTRIES)
    text = text.replace("ref_count=4 evergreen=no", "ref_count=99 evergreen=yes")
    text = text.replace("## Models\n", "## Models\n\n- **Caches**\n  They lie.\n")
    without_pri = "\n".join(
        line for line in text.split("\n") if "PRI01" not in line and "Small steps" not in line
    )
    plan = plan_memory_import(parse_memory_md(without_pri), ENTRIES, TODAY)
    line = without_pri.split("\n").index("- **Tests first**") + 1
    assert plan.updates == (EntryUpdate(line, replace(ENTRIES[1], evergreen=True), ("evergreen",)),)
    assert plan.ignored == (IgnoredEdit(line, "GDL01", ("ref_count",)),)
    assert plan.new_entries == (
        NewEntry(without_pri.split("\n").index("- **Caches**") + 1, "model", "Caches", "They lie."),
    )
    assert plan.removed == ("PRI01",) and plan.unchanged == 1
    assert [e.key for e in apply(ENTRIES, without_pri)] == ["PRI01", "GDL01", "PIT02"]


def test_a_malformed_comment_refuses_the_whole_file_with_its_line() -> None:
    text = export_memory_md(ENTRIES).replace("- **Small steps**", "- **Changed**")
    lines = text.split("\n")
    bad = next(i for i, line in enumerate(lines) if "key=PIT02" in line)
    lines[bad] = lines[bad].replace("created=2025-03-01", "created=March")
    with pytest.raises(InvalidArgument) as info:
        plan_memory_import(parse_memory_md("\n".join(lines)), ENTRIES, TODAY)
    assert str(info.value).startswith(f"MEMORY.md not imported (nothing changed): line {bad + 1}:")
    assert "not a date" in str(info.value)
