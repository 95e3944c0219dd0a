"""Decay exactly as DESIGN §4.3 (#10 item 4): table-driven, and its invariants."""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.memory_model import default_evergreen
from recallbox.ranking.decay import (
    Forecast,
    Reference,
    apply_reference,
    forecast,
    run_decay,
)
from recallbox.types import DecayTransition, MemoryEntry

TODAY = date(2025, 6, 1)
AGES = [0, 29, 30, 89, 90, 179, 180, 400]


def ago(days: int | None) -> date | None:
    return None if days is None else TODAY - timedelta(days=days)


def make(
    *,
    age: int | None = 400,
    idle: int | None = None,
    state: str = "active",
    since: int | None = None,
    memory_type: str = "guideline",
    evergreen: bool | None = None,
    key: str = "GDL01",
) -> MemoryEntry:
    created = ago(age)
    return MemoryEntry(
        key=key,
        type=memory_type,
        title=None,
        body="text",
        state=state,
        created=created,
        last_referenced=ago(idle),
        state_since=ago(since) if since is not None else created,
        evergreen=default_evergreen(memory_type, evergreen),
    )


def state_after(entry: MemoryEntry, today: date = TODAY, refs: tuple[Reference, ...] = ()) -> str:
    outcome = run_decay([entry], today, refs)
    return outcome.changed[0].state if outcome.changed else entry.state


@pytest.mark.parametrize(
    ("age", "expected"),
    [
        (0, "active"),
        (29, "active"),
        (30, "active"),
        (89, "active"),
        (90, "dormant"),
        (179, "dormant"),
        (180, "dormant"),
        (400, "dormant"),
    ],
)
def test_never_referenced_active(age: int, expected: str) -> None:
    assert state_after(make(age=age)) == expected


@pytest.mark.parametrize(
    ("idle", "expected"),
    [
        (0, "active"),
        (29, "active"),
        (30, "active"),
        (89, "active"),
        (90, "dormant"),
        (179, "dormant"),
        (180, "dormant"),
        (400, "dormant"),
    ],
)
def test_referenced_active(idle: int, expected: str) -> None:
    assert state_after(make(age=400, idle=idle)) == expected


@pytest.mark.parametrize(
    ("idle", "expected"),
    [
        (0, "dormant"),
        (29, "dormant"),
        (30, "dormant"),
        (89, "dormant"),
        (90, "dormant"),
        (179, "dormant"),
        (180, "archived"),
        (400, "archived"),
    ],
)
def test_referenced_dormant_for_90_days(idle: int, expected: str) -> None:
    assert state_after(make(age=500, idle=idle, state="dormant", since=90)) == expected


@pytest.mark.parametrize(
    ("dormant_days", "expected"),
    [
        (0, "dormant"),
        (29, "dormant"),
        (30, "dormant"),
        (89, "dormant"),
        (90, "archived"),
        (179, "archived"),
        (180, "archived"),
        (400, "archived"),
    ],
)
def test_never_referenced_dormant(dormant_days: int, expected: str) -> None:
    assert state_after(make(age=400, state="dormant", since=dormant_days)) == expected


@pytest.mark.parametrize("age", AGES)
def test_grace_holds_even_a_dormant_entry(age: int) -> None:
    young = make(age=age, state="dormant", since=400, idle=None)
    assert state_after(young) == ("dormant" if age < 180 else "archived")


@pytest.mark.parametrize("age", AGES)
@pytest.mark.parametrize(
    ("memory_type", "flag"),
    [("principle", None), ("correction", None), ("guideline", True), ("pitfall", True)],
)
def test_evergreen_never_moves(age: int, memory_type: str, flag: bool | None) -> None:
    for state in ("active", "dormant"):
        entry = make(age=age, memory_type=memory_type, evergreen=flag, state=state, since=400)
        assert run_decay([entry], TODAY).changed == ()
        assert forecast(entry, TODAY) == Forecast(None, None)


def test_evergreen_default_can_be_turned_off() -> None:
    assert state_after(make(age=400, memory_type="principle", evergreen=False)) == "dormant"


def test_missing_created_is_infinitely_old() -> None:
    assert state_after(make(age=None)) == "dormant"
    assert state_after(make(age=None, idle=10)) == "active"
    assert state_after(make(age=None, state="dormant", since=90)) == "archived"
    assert state_after(make(age=None, state="dormant", since=None)) == "archived"


def test_last_referenced_before_created_is_clamped() -> None:
    assert state_after(make(age=50, idle=200)) == "active"
    assert state_after(make(age=100, idle=200)) == "dormant"


def test_never_referenced_for_400_days_then_90_days_later() -> None:
    entry = make(age=400)
    first = run_decay([entry], TODAY)
    assert first.report.transitions == (
        DecayTransition("GDL01", "active", "dormant", TODAY, "idle 400 days (≥ 90 days)"),
    )
    (dormant,) = first.changed
    assert dormant.state_since == TODAY
    assert state_after(dormant, TODAY + timedelta(days=89)) == "dormant"
    later = run_decay([dormant], TODAY + timedelta(days=90))
    assert [(t.to_state, t.reason) for t in later.report.transitions] == [
        ("archived", "idle 490 days (≥ 180 days), dormant 90 days (≥ 90 days)")
    ]


def test_a_drill_revives_an_archived_entry() -> None:
    archived = replace(make(age=500, state="archived", since=100), ref_count=2)
    drill = Reference("GDL01", ago(5))  # type: ignore[arg-type]
    outcome = run_decay([archived], TODAY, [drill, Reference("GDL99", TODAY)])
    (revived,) = outcome.changed
    assert revived == replace(
        archived, state="active", state_since=ago(5), last_referenced=ago(5), ref_count=3
    )
    assert outcome.report.transitions == (
        DecayTransition("GDL01", "archived", "active", ago(5), f"referenced on {ago(5)}"),  # type: ignore[arg-type]
    )
    assert outcome.report.references_folded == 1


def test_an_old_drill_revives_then_decay_applies_in_the_same_run() -> None:
    archived = make(age=500, state="archived", since=300)
    outcome = run_decay([archived], TODAY, [Reference("GDL01", ago(120))])  # type: ignore[arg-type]
    assert [(t.from_state, t.to_state) for t in outcome.report.transitions] == [
        ("archived", "active"),
        ("active", "dormant"),
    ]
    assert run_decay(outcome.changed, TODAY).changed == ()


def test_reference_rules() -> None:
    entry = make(age=100, idle=10, state="dormant", since=20)
    touched = apply_reference(entry, ago(30))  # type: ignore[arg-type]
    # older than the state: counted, does not revive, last_referenced never moves back
    assert (touched.state, touched.ref_count, touched.last_referenced) == ("dormant", 1, ago(10))
    future = run_decay([entry], TODAY, [Reference("GDL01", TODAY + timedelta(days=1))])
    assert (future.report.references_deferred, future.report.references_folded) == (1, 0)


def test_dry_run_reports_the_same_transitions() -> None:
    entries = [make(age=400, key="GDL01"), make(age=10, key="GDL02")]
    wet, dry = run_decay(entries, TODAY), run_decay(entries, TODAY, dry_run=True)
    assert dry.report == replace(wet.report, dry_run=True) and dry.changed == wet.changed
    assert entries == [make(age=400, key="GDL01"), make(age=10, key="GDL02")]


def test_twice_the_same_day_changes_nothing_the_second_time() -> None:
    entries = [make(age=a, key=f"GDL{i:02d}") for i, a in enumerate(AGES, start=1)]
    first = run_decay(entries, TODAY)
    stored = {e.key: e for e in entries} | {e.key: e for e in first.changed}
    second = run_decay(list(stored.values()), TODAY)
    assert second.changed == () and second.report.transitions == ()


def test_forecast_formulas() -> None:
    assert forecast(make(age=400), TODAY) == Forecast(TODAY, TODAY + timedelta(days=90))
    assert forecast(make(age=10), TODAY) == Forecast(ago(-80), ago(-170))
    assert forecast(make(age=400, idle=10), TODAY) == Forecast(ago(-80), ago(-170))
    dormant = make(age=400, idle=100, state="dormant", since=30)
    assert forecast(dormant, TODAY) == Forecast(None, ago(-80))
    assert forecast(make(state="archived"), TODAY) == Forecast(None, None)


_offsets = st.one_of(st.none(), st.integers(-60, 500))


@st.composite
def entries(draw: st.DrawFn) -> MemoryEntry:
    return make(
        age=draw(_offsets),
        idle=draw(_offsets),
        state=draw(st.sampled_from(["active", "dormant", "archived"])),
        since=draw(st.integers(-30, 500)),
        memory_type=draw(st.sampled_from(["guideline", "principle", "model"])),
        evergreen=draw(st.one_of(st.none(), st.booleans())),
    )


@given(entries(), st.lists(st.integers(-10, 400), max_size=3))
def test_idempotent_for_a_day_and_one_decay_transition(entry: MemoryEntry, refs: list[int]) -> None:
    references = [Reference(entry.key, ago(r)) for r in refs]  # type: ignore[arg-type]
    first = run_decay([entry], TODAY, references)
    decays = [t for t in first.report.transitions if not t.reason.startswith("referenced")]
    assert len(decays) <= 1
    after = first.changed[0] if first.changed else entry
    second = run_decay([after], TODAY)
    assert second.changed == () and second.report.transitions == ()


@given(entries())
def test_forecast_agrees_with_deciding_day_by_day(entry: MemoryEntry) -> None:
    predicted = forecast(entry, TODAY)
    dormant_on = archived_on = None
    day, current = TODAY, entry
    horizon = TODAY + timedelta(days=1200)
    while day <= horizon and archived_on is None:
        outcome = run_decay([current], day)
        if outcome.changed:
            current = outcome.changed[0]
            if current.state == "dormant":
                dormant_on = day
            elif current.state == "archived":
                archived_on = day
        day += timedelta(days=1)
    if entry.state == "dormant":
        dormant_on = None
    assert predicted == Forecast(dormant_on, archived_on)
