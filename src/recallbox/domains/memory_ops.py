"""Memory entries through the store: remember, the lifecycle verbs, decay, MEMORY.md (DESIGN §4.3).

The rules are the pure modules' (``memory_model``, ``ranking.decay``, ``memory_md``,
``memory_import``); this module reads and writes through
:class:`~recallbox.storage.base.MemoryStore`, each verb in one transaction:

* ``remember`` issues the next key of the type from the store's highest-issued number (so a
  key is never reused); a text identical to a non-superseded entry returns that entry,
  referenced (``ref_count`` + 1, revived when dormant or archived) instead of a duplicate.
* ``touch`` is a reference today; ``restore`` makes an entry active and current again
  (referenced today, its ``superseded_by`` cleared); ``supersede`` marks one entry replaced.
* ``decay`` folds the hit-log's drills of entries (above the stored watermark, in order, up
  to the first dated after ``today``) into ``last_referenced``/``ref_count`` first, then runs
  the mechanical decay; a dry run writes nothing (not even the watermark).
* ``export``/``import``: MEMORY.md out, and a person's edits back in, all or nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime

from recallbox.domains.memory_import import NewEntry, plan_memory_import, refusal_message
from recallbox.domains.memory_md import (
    FileProblem,
    export_memory_md,
    export_order,
    parse_memory_md,
)
from recallbox.domains.memory_model import (
    MEMORY_STATES,
    default_evergreen,
    find_identical,
    format_key,
    identity_hash,
    parse_key,
    validate_state,
    validate_type,
)
from recallbox.domains.privacy import memory_excluded
from recallbox.errors import InvalidArgument, NotFound
from recallbox.ranking.decay import STATE_ACTIVE, Reference, apply_reference, run_decay
from recallbox.storage.base import MemoryDrill, MemoryWrite, Store
from recallbox.text.markdown import content_hash
from recallbox.text.normalize import normalize_text
from recallbox.types import (
    DecayReport,
    MemoryEntry,
    MemoryFieldChange,
    MemoryFileLine,
    MemoryImportReport,
)

#: Longest text ``remember`` accepts (2 000 tokens of ASCII: one entry always fits a
#: ``recall_context`` slice whole). Reference text belongs in knowledge (``add_document``).
MEMORY_TEXT_MAX_CHARS = 8_000
#: Longest title.
MEMORY_TITLE_MAX_CHARS = 200


def indexed_text(entry: MemoryEntry) -> str:
    """What the keyword index and the vectors read of an entry: its title and body."""
    return entry.body if entry.title is None else f"{entry.title}\n{entry.body}"


def memory_write(entry: MemoryEntry) -> MemoryWrite:
    """The store's row of ``entry``."""
    text = indexed_text(entry)
    return MemoryWrite(
        entry=entry,
        number=parse_key(entry.key)[1],
        content=text,
        content_hash=content_hash(text),
        identity_hash=identity_hash(entry.body),
    )


def check_day(today: object) -> date:
    """``today`` as a date (``None``: the local date today).

    Raises:
        InvalidArgument: not a date.
    """
    if today is None:
        return date.today()
    if isinstance(today, datetime):
        return today.date()
    if isinstance(today, date):
        return today
    raise InvalidArgument(f"today must be a datetime.date or None, got {today!r}")


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidArgument(f"text must be a string, got {type(text).__name__}")
    body = normalize_text(text)
    if not body.strip():
        raise InvalidArgument("remember needs the lesson's text (got an empty text)")
    if len(body) > MEMORY_TEXT_MAX_CHARS:
        raise InvalidArgument(
            f"a memory entry holds at most {MEMORY_TEXT_MAX_CHARS} characters (got "
            f"{len(body)}); keep the lesson short, and put reference text in knowledge "
            "(add_document)"
        )
    return body


def _check_title(title: object) -> str | None:
    if title is None:
        return None
    if not isinstance(title, str):
        raise InvalidArgument(f"title must be a string or None, got {type(title).__name__}")
    cleaned = " ".join(normalize_text(title).split())
    if len(cleaned) > MEMORY_TITLE_MAX_CHARS:
        raise InvalidArgument(f"a title holds at most {MEMORY_TITLE_MAX_CHARS} characters")
    return cleaned or None


def _entry(store: Store, key: object) -> MemoryEntry:
    if not isinstance(key, str):
        raise InvalidArgument(f"a memory key is a string such as 'PIT03', got {key!r}")
    found = store.memory_entry(key)
    if found is None:
        raise NotFound(f"unknown memory key {key[:80]!r}; keys come from memories() or recall")
    return found


def _save(store: Store, *entries: MemoryEntry) -> None:
    store.update_memory_entries([memory_write(entry) for entry in entries])


def remember(
    store: Store,
    text: object,
    memory_type: object = "guideline",
    title: object = None,
    evergreen: object = None,
    supersedes: object = None,
    *,
    today: date | None = None,
) -> MemoryEntry:
    """Store a lesson (see ``Box.remember``)."""
    kind = validate_type(memory_type)
    body, heading = _check_text(text), _check_title(title)
    if evergreen is not None and not isinstance(evergreen, bool):
        raise InvalidArgument(f"evergreen must be True, False or None, got {evergreen!r}")
    day = check_day(today)
    with store.transaction():
        old = _entry(store, supersedes) if supersedes is not None else None
        same = find_identical(body, store.memory_entries_with_identity(identity_hash(body)))
        if same is not None:
            entry = apply_reference(same, day)
            _save(store, entry)
        else:
            key = format_key(kind, store.highest_memory_number(kind) + 1)
            entry = MemoryEntry(
                key, kind, heading, body, STATE_ACTIVE, day, None, day,
                evergreen=default_evergreen(kind, evergreen),
            )  # fmt: skip
            store.create_memory_entries([memory_write(entry)])
        if old is not None and old.key != entry.key:
            _save(store, replace(old, superseded_by=entry.key))
    return entry


def memories(store: Store, state: object = None) -> list[MemoryEntry]:
    """Every entry (or those in ``state``) in MEMORY.md order, each flagged ``excluded`` when
    the policy excludes ``MEMORY.md`` (the person-facing audit verb ``Box.memories``)."""
    if state is not None:
        validate_state(state)
    excluded = memory_excluded(store.policy().excluded_sources)
    return [
        replace(entry, excluded=excluded)
        for entry in export_order(store.memory_entries())
        if state is None or entry.state == state
    ]


def supersede(store: Store, key: object, by: object) -> MemoryEntry:
    """Mark ``key`` superseded by ``by`` (see ``Box.supersede_memory``)."""
    with store.transaction():
        entry, newer = _entry(store, key), _entry(store, by)
        if entry.key == newer.key:
            raise InvalidArgument(f"{entry.key} cannot supersede itself")
        updated = replace(entry, superseded_by=newer.key)
        _save(store, updated)
    return updated


def restore(store: Store, key: object, *, today: date | None = None) -> MemoryEntry:
    """Make ``key`` active and current again (see ``Box.restore``)."""
    day = check_day(today)
    with store.transaction():
        entry = apply_reference(_entry(store, key), day)
        since = entry.state_since if entry.state == STATE_ACTIVE else day
        restored = replace(entry, state=STATE_ACTIVE, state_since=since, superseded_by=None)
        _save(store, restored)
    return restored


def touch(store: Store, key: object, *, today: date | None = None) -> MemoryEntry:
    """A reference to ``key`` today (see ``Box.touch``)."""
    day = check_day(today)
    with store.transaction():
        entry = apply_reference(_entry(store, key), day)
        _save(store, entry)
    return entry


def _references(drills: Sequence[MemoryDrill], today: date) -> tuple[list[Reference], int, int]:
    """The drills to fold in (in id order, up to the first dated after ``today``), the last
    hit-log id folded (0: none) and how many are left for a later run."""
    folded: list[Reference] = []
    last = 0
    for index, drill in enumerate(drills):
        on = drill.at.astimezone().date()
        if on > today:
            return folded, last, len(drills) - index
        folded.append(Reference(drill.key, on))
        last = drill.hit_id
    return folded, last, 0


def decay(store: Store, today: object = None, *, dry_run: bool = False) -> DecayReport:
    """One decay run (see ``Box.decay``)."""
    day = check_day(today)
    if not isinstance(dry_run, bool):
        raise InvalidArgument(f"dry_run must be True or False, got {dry_run!r}")
    with store.read_snapshot() if dry_run else store.transaction():
        entries = store.memory_entries()
        references, last, later = _references(
            store.memory_drills(after=store.decay_watermark()), day
        )
        outcome = run_decay(entries, day, references, dry_run=dry_run)
        if not dry_run:
            _save(store, *outcome.changed)
            if last:
                store.set_decay_watermark(last)
    report = outcome.report
    return replace(report, references_deferred=report.references_deferred + later)


def export_memory(store: Store) -> str:
    """MEMORY.md of every entry, in every state (``memory_md``)."""
    return export_memory_md(store.memory_entries())


def _remember_line(store: Store, new: NewEntry, day: date) -> str:
    try:
        return remember(store, new.body, new.type, new.title, today=day).key
    except InvalidArgument as exc:
        raise InvalidArgument(refusal_message([FileProblem(new.line, "", str(exc))])) from exc


def import_memory(store: Store, text: object, *, today: date | None = None) -> MemoryImportReport:
    """Apply an edited MEMORY.md, all or nothing (see ``Box.import_memory``)."""
    if not isinstance(text, str):
        raise InvalidArgument(f"MEMORY.md text must be a string, got {type(text).__name__}")
    day = check_day(today)
    # edited titles and bodies are normalised as remember's are (a lone surrogate, a control)
    parsed = parse_memory_md(normalize_text(text))
    with store.transaction():
        plan = plan_memory_import(parsed, store.memory_entries(), day)
        store.create_memory_entries([memory_write(entry) for entry in plan.creates])
        _save(store, *(update.entry for update in plan.updates))
        added = [_remember_line(store, new, day) for new in plan.new_entries]
    return MemoryImportReport(
        created=tuple(entry.key for entry in plan.creates),
        added=tuple(added),
        updated=tuple(MemoryFieldChange(u.entry.key, u.fields) for u in plan.updates),
        unchanged=plan.unchanged,
        removed=plan.removed,
        ignored=tuple(
            MemoryFileLine(i.line, f"{i.key}: {', '.join(i.fields)} not applied (the store's)")
            for i in plan.ignored
        ),
        unknown=tuple(MemoryFileLine(p.line, p.reason) for p in plan.unknown),
    )


__all__ = [
    "MEMORY_STATES",
    "MEMORY_TEXT_MAX_CHARS",
    "check_day",
    "decay",
    "export_memory",
    "import_memory",
    "indexed_text",
    "memories",
    "memory_write",
    "remember",
    "restore",
    "supersede",
    "touch",
]
