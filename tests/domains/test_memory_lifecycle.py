"""Decay and MEMORY.md through the Box and a real database (DESIGN §4.3, #10)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest

import recallbox
from backends import DbLocation
from recallbox.domains.memory_ops import memory_write, remember
from recallbox.types import DecayTransition

TODAY = date.today()


def days_ago(n: int) -> date:
    return TODAY - timedelta(days=n)


def state(box: recallbox.Box, key: str) -> str:
    entry = box.store.memory_entry(key)
    assert entry is not None
    return entry.state


@pytest.mark.parametrize(
    ("age", "expected"),
    [(0, "active"), (29, "active"), (30, "active"), (89, "active"), (90, "dormant"),
     (179, "dormant"), (180, "dormant"), (400, "dormant")],
)  # fmt: skip
def test_a_first_run_over_stored_entries(box: recallbox.Box, age: int, expected: str) -> None:
    never = remember(box.store, "never referenced", today=days_ago(age))
    pinned = remember(box.store, "pinned", memory_type="principle", today=days_ago(age))
    report = box.decay(TODAY)
    assert (state(box, never.key), state(box, pinned.key)) == (expected, "active")
    moved = [t.key for t in report.transitions]
    assert moved == ([never.key] if expected != "active" else [])
    assert report.checked == 2 and not report.dry_run


def test_an_entry_never_referenced_for_400_days_is_archived_90_days_after(
    box: recallbox.Box,
) -> None:
    entry = remember(box.store, "old lesson", today=days_ago(400))
    box.decay(days_ago(100))
    assert state(box, entry.key) == "dormant"
    assert box.decay(days_ago(11)).transitions == ()  # dormant for 89 days only
    (moved,) = box.decay(days_ago(10)).transitions
    assert (moved.from_state, moved.to_state, moved.on) == ("dormant", "archived", days_ago(10))
    assert state(box, entry.key) == "archived"


def test_a_drill_in_the_hit_log_revives_an_archived_entry(box: recallbox.Box) -> None:
    entry = remember(box.store, "an archived lesson about zebras", today=days_ago(400))
    box.decay(days_ago(100))
    box.decay(days_ago(10))
    assert state(box, entry.key) == "archived"
    result = box.recall_context("zebras")  # recall writes only the hit-log
    assert result.drilled == (entry.key,) and state(box, entry.key) == "archived"
    report = box.decay(TODAY)
    assert report.references_folded == 1
    assert report.transitions == (
        DecayTransition(entry.key, "archived", "active", TODAY, f"referenced on {TODAY}"),
    )
    revived = box.store.memory_entry(entry.key)
    assert revived is not None
    assert (revived.state, revived.state_since, revived.last_referenced, revived.ref_count) == (
        "active",
        TODAY,
        TODAY,
        1,
    )


def test_a_dry_run_changes_nothing(box: recallbox.Box) -> None:
    entry = remember(box.store, "old lesson", today=days_ago(400))
    box.store.record_drill(entry.key, domain="memory")
    before = box.memories()
    dry = box.decay(TODAY + timedelta(days=200), dry_run=True)
    assert dry.dry_run and dry.references_folded == 1 and len(dry.transitions) == 1
    assert box.memories() == before and box.store.decay_watermark() == 0
    real = box.decay(TODAY + timedelta(days=200))
    assert replace(real, dry_run=True) == dry
    assert box.memories() != before


def test_running_twice_on_the_same_day_changes_nothing_the_second_time(
    box: recallbox.Box,
) -> None:
    remember(box.store, "old lesson", today=days_ago(400))
    remember(box.store, "older lesson", today=days_ago(500))
    box.store.record_drill("GDL01", domain="memory")
    first = box.decay(TODAY + timedelta(days=120))
    assert first.references_folded == 1 and len(first.transitions) == 2
    after = box.memories()
    second = box.decay(TODAY + timedelta(days=120))
    assert (second.transitions, second.references_folded) == ((), 0)
    assert box.memories() == after


def test_drills_dated_after_today_wait_for_a_later_run(box: recallbox.Box) -> None:
    entry = remember(box.store, "old lesson", today=days_ago(400))
    box.store.record_drill(entry.key, domain="memory")
    early = box.decay(days_ago(5))
    assert (early.references_folded, early.references_deferred) == (0, 1)
    assert state(box, entry.key) == "dormant"
    late = box.decay(TODAY)
    assert (late.references_folded, late.references_deferred) == (1, 0)
    assert state(box, entry.key) == "active"


def test_decay_refuses_a_non_date(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        box.decay("2025-01-01")  # type: ignore[arg-type]


# -- MEMORY.md --------------------------------------------------------------------------------
def seed(box: recallbox.Box) -> None:
    remember(box.store, "Quote the exact error\nbefore a fix.", memory_type="principle", title="Evidence", today=days_ago(300))  # fmt: skip
    remember(box.store, "[not a header] and \\ a backslash\n\n  indented *stars*", memory_type="pitfall", today=days_ago(200))  # fmt: skip
    old = remember(box.store, "use replica 1", memory_type="decision", today=days_ago(50))
    remember(
        box.store, "use replica 2", memory_type="decision", supersedes=old.key, today=days_ago(40)
    )
    box.store.update_memory_entries(
        [memory_write(replace(old, state="dormant", ref_count=3, last_referenced=days_ago(45)))]
    )
    remember(box.store, "召回 entries keep CJK", memory_type="model", title="Title with * and \\")


def test_export_import_into_a_fresh_database_export_is_identical(
    db_location: DbLocation, tmp_path: Path
) -> None:
    with recallbox.open(db_location("a")) as box:
        seed(box)
        exported = box.export_memory()
        entries = box.memories()
    with recallbox.open(db_location("fresh")) as fresh:
        report = fresh.import_memory(exported)
        assert report.created == tuple(e.key for e in entries) and report.updated == ()
        assert fresh.export_memory() == exported
        assert fresh.memories() == entries
        assert fresh.remember("a new decision", type="decision").key == "DEC03"  # counters follow
        again = fresh.import_memory(fresh.export_memory())
        assert (again.unchanged, again.created, again.updated) == (len(entries) + 1, (), ())


def test_an_edit_of_one_title_one_body_and_one_state_changes_exactly_those(
    box: recallbox.Box,
) -> None:
    seed(box)
    before = {e.key: e for e in box.memories()}
    text = box.export_memory()
    text = text.replace("- **Evidence**", "- **Evidence first**")
    text = text.replace("  use replica 2", "  use replica 2, the rebuilt one")
    text = text.replace("key=PIT01 type=pitfall state=active", "key=PIT01 type=pitfall state=archived")  # fmt: skip
    text = text.replace("use replica 2\n", "use replica 2, the rebuilt one\n")
    report = box.import_memory(text)
    assert {c.key: c.fields for c in report.updated} == {
        "PRI01": ("title",),
        "DEC02": ("body",),
        "PIT01": ("state", "state_since"),
    }
    after = {e.key: e for e in box.memories()}
    assert after["PRI01"] == replace(before["PRI01"], title="Evidence first")
    assert after["DEC02"] == replace(before["DEC02"], body="use replica 2, the rebuilt one")
    assert after["PIT01"] == replace(before["PIT01"], state="archived", state_since=TODAY)
    assert {k: v for k, v in after.items() if k not in ("PRI01", "DEC02", "PIT01")} == {
        k: v for k, v in before.items() if k not in ("PRI01", "DEC02", "PIT01")
    }
    assert box.search("rebuilt", domain="memory")[0].id == "DEC02"


def test_a_malformed_comment_refuses_the_whole_file_with_its_line(box: recallbox.Box) -> None:
    seed(box)
    before = box.memories()
    lines = box.export_memory().split("\n")
    comment = next(i for i, line in enumerate(lines) if "key=PRI01" in line)
    lines[comment] = lines[comment].replace("ref_count=0", "ref_count=lots")
    edited = [line.replace("use replica 1", "changed!") for line in lines]
    edited.append("## Guidelines\n\n- a new bullet that must not be added")
    with pytest.raises(recallbox.InvalidArgument) as refused:
        box.import_memory("\n".join(edited))
    assert f"line {comment + 1}: malformed metadata comment" in str(refused.value)
    assert box.memories() == before


def test_new_bullets_become_entries_and_removed_ones_are_only_reported(
    box: recallbox.Box,
) -> None:
    seed(box)
    text = box.export_memory()
    start = text.index("- **Evidence**")
    end = text.index("-->", start) + len("-->\n")
    text = text[:start] + text[end:]
    text = text.replace(
        "## Guidelines\n", "## Guidelines\n\n- **Fresh**\n  a brand new guideline\n"
    )
    text += "a stray line\n"
    report = box.import_memory(text)
    assert report.added == ("GDL01",) and report.removed == ("PRI01",)
    assert [(p.reason) for p in report.unknown] == ["not part of an entry"]
    assert box.store.memory_entry("PRI01") is not None  # never deleted
    fresh = box.store.memory_entry("GDL01")
    assert fresh is not None and (fresh.title, fresh.body) == ("Fresh", "a brand new guideline")
