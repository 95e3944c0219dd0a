"""Mechanical decay of memory entries: ``age + evergreen + grace`` (DESIGN §4.3).

For an entry on day ``today``:

* ``age = today − created``; ``idle = today − last_referenced`` (``created`` when never
  referenced; a ``last_referenced`` earlier than ``created`` counts as ``created``). Only a
  missing ``created`` is infinitely old (a missing ``state_since`` is an infinitely old state).
* Nothing younger than the grace (age < 30 days) moves, and an evergreen entry never moves.
* ``active`` with idle ≥ 90 days → ``dormant``; ``dormant`` with idle ≥ 180 days and dormant
  for ≥ 90 days (``today − state_since``) → ``archived``. ``archived`` stays.
* A run makes at most one such transition per entry and sets ``state_since = today`` on it:
  an entry never referenced for 400 days becomes dormant on its first run and archived on the
  first run at least 90 days later. A run is idempotent for a given ``today``.

Before deciding, a run folds in the references it is given (``touch``, and the drills the
hit-log recorded since the last run), oldest first: each bumps ``ref_count`` and moves
``last_referenced`` to the reference's own date (never back). A reference revives a
``dormant`` or ``archived`` entry to ``active`` with ``state_since`` set to the reference's
date, unless the entry entered its state after that date. A revival is reported as a
transition of its own; the decay decision then looks at the revived entry (an entry revived
by a reference that is itself 90 days old goes dormant again in the same run, so that a second
run on the same day changes nothing). References dated after ``today`` are left for a later
run. Decay never deletes, and ``ref_count`` never drives it.

:func:`forecast` says when an untouched entry will move if decay runs every day.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

from recallbox.types import DecayReport, DecayTransition, MemoryEntry

STATE_ACTIVE = "active"
STATE_DORMANT = "dormant"
STATE_ARCHIVED = "archived"

#: Nothing younger than this (days since ``created``) moves.
DECAY_GRACE_DAYS = 30
#: An active entry idle this long (days) becomes dormant.
DORMANT_AFTER_IDLE_DAYS = 90
#: A dormant entry idle this long (days) ...
ARCHIVE_AFTER_IDLE_DAYS = 180
#: ... and dormant this long (days) becomes archived.
ARCHIVE_AFTER_DORMANT_DAYS = 90

_INFINITE = float("inf")


@dataclass(frozen=True, slots=True)
class Reference:
    """One reference to an entry: a ``touch`` or a drill, on the date it happened."""

    key: str
    on: date


@dataclass(frozen=True, slots=True)
class DecayOutcome:
    """What a decay run decided: the report, and the entries it changed (to store)."""

    report: DecayReport
    changed: tuple[MemoryEntry, ...]


@dataclass(frozen=True, slots=True)
class Forecast:
    """When an untouched entry moves, if decay runs every day (``None``: never, or already)."""

    dormant_on: date | None
    archived_on: date | None


def effective_last_referenced(entry: MemoryEntry) -> date | None:
    """``last_referenced`` clamped to ``created`` (``created`` when never referenced)."""
    if entry.last_referenced is None:
        return entry.created
    if entry.created is not None and entry.last_referenced < entry.created:
        return entry.created
    return entry.last_referenced


def _days_since(day: date | None, today: date) -> float:
    return _INFINITE if day is None else float((today - day).days)


def age_days(entry: MemoryEntry, today: date) -> float:
    """``today − created`` in days (infinite without ``created``)."""
    return _days_since(entry.created, today)


def idle_days(entry: MemoryEntry, today: date) -> float:
    """``today − effective_last_referenced`` in days (infinite without either date)."""
    return _days_since(effective_last_referenced(entry), today)


def apply_reference(entry: MemoryEntry, on: date) -> MemoryEntry:
    """``entry`` after one reference on ``on`` (see the module docstring)."""
    last = entry.last_referenced
    revive = entry.state != STATE_ACTIVE and (entry.state_since is None or on >= entry.state_since)
    return replace(
        entry,
        ref_count=entry.ref_count + 1,
        last_referenced=on if last is None or on > last else last,
        state=STATE_ACTIVE if revive else entry.state,
        state_since=on if revive else entry.state_since,
    )


def decide(entry: MemoryEntry, today: date) -> tuple[str, str] | None:
    """``(new_state, reason)`` when decay moves ``entry`` on ``today``, else ``None``."""
    if entry.evergreen:
        return None
    age = age_days(entry, today)
    if age < DECAY_GRACE_DAYS:
        return None
    idle = idle_days(entry, today)
    if entry.state == STATE_ACTIVE and idle >= DORMANT_AFTER_IDLE_DAYS:
        return STATE_DORMANT, f"idle {_days(idle)} (≥ {DORMANT_AFTER_IDLE_DAYS} days)"
    if entry.state == STATE_DORMANT:
        dormant = _days_since(entry.state_since, today)
        if idle >= ARCHIVE_AFTER_IDLE_DAYS and dormant >= ARCHIVE_AFTER_DORMANT_DAYS:
            return STATE_ARCHIVED, (
                f"idle {_days(idle)} (≥ {ARCHIVE_AFTER_IDLE_DAYS} days), dormant "
                f"{_days(dormant)} (≥ {ARCHIVE_AFTER_DORMANT_DAYS} days)"
            )
    return None


def _days(value: float) -> str:
    return "forever" if value == _INFINITE else f"{int(value)} days"


def _fold(
    entry: MemoryEntry, references: Sequence[Reference], transitions: list[DecayTransition]
) -> MemoryEntry:
    for reference in sorted(references, key=lambda r: r.on):
        before = entry.state
        entry = apply_reference(entry, reference.on)
        if entry.state != before:
            transitions.append(
                DecayTransition(
                    entry.key, before, entry.state, reference.on, f"referenced on {reference.on}"
                )
            )
    return entry


def run_decay(
    entries: Sequence[MemoryEntry],
    today: date,
    references: Sequence[Reference] = (),
    *,
    dry_run: bool = False,
) -> DecayOutcome:
    """One decay run over ``entries`` on ``today``, after folding ``references`` in.

    ``dry_run`` only marks the report: the caller stores ``changed`` unless it is a dry run.
    References to keys not in ``entries`` are ignored.
    """
    by_key: dict[str, list[Reference]] = {}
    deferred = 0
    for reference in references:
        if reference.on > today:
            deferred += 1
        else:
            by_key.setdefault(reference.key, []).append(reference)
    transitions: list[DecayTransition] = []
    changed: list[MemoryEntry] = []
    folded = 0
    for entry in entries:
        mine = by_key.get(entry.key, ())
        folded += len(mine)
        updated = _fold(entry, mine, transitions)
        decision = decide(updated, today)
        if decision is not None:
            new_state, reason = decision
            transitions.append(DecayTransition(entry.key, updated.state, new_state, today, reason))
            updated = replace(updated, state=new_state, state_since=today)
        if updated != entry:
            changed.append(updated)
    report = DecayReport(
        today=today,
        dry_run=dry_run,
        checked=len(entries),
        transitions=tuple(transitions),
        references_folded=folded,
        references_deferred=deferred,
    )
    return DecayOutcome(report, tuple(changed))


def _latest(*days: date | None) -> date:
    known = [day for day in days if day is not None]
    return max(known)


def _plus(day: date | None, days: int) -> date | None:
    if day is None:
        return None
    try:
        return day + timedelta(days=days)
    except OverflowError:
        return date.max


def forecast(entry: MemoryEntry, today: date) -> Forecast:
    """When ``entry`` goes dormant and archived if nothing touches it and decay runs daily.

    Active: dormant on ``max(today, last_referenced + 90, created + 30)``, archived on
    ``max(dormant date + 90, last_referenced + 180)``. Dormant: archived on ``max(today,
    state_since + 90, last_referenced + 180, created + 30)``. Evergreen or archived: never.
    """
    if entry.evergreen or entry.state == STATE_ARCHIVED:
        return Forecast(None, None)
    last = effective_last_referenced(entry)
    grace_end = _plus(entry.created, DECAY_GRACE_DAYS)
    if entry.state == STATE_ACTIVE:
        dormant_on = _latest(today, _plus(last, DORMANT_AFTER_IDLE_DAYS), grace_end)
        archived_on = _latest(
            _plus(dormant_on, ARCHIVE_AFTER_DORMANT_DAYS),
            _plus(last, ARCHIVE_AFTER_IDLE_DAYS),
        )
        return Forecast(dormant_on, archived_on)
    archived_on = _latest(
        today,
        _plus(entry.state_since, ARCHIVE_AFTER_DORMANT_DAYS),
        _plus(last, ARCHIVE_AFTER_IDLE_DAYS),
        grace_end,
    )
    return Forecast(None, archived_on)
