"""A MEMORY.md exported before a decay and imported after it (#15 item 1, found by the
concurrent-writers run: a MEMORY.md import beside ``decay``): the stale file's states are not
applied — the entries keep the state decay gave them, the import lists them as ignored — while
an edit the person made after the store's state is applied as before."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import recallbox
from backends import DbLocation

LATER = date.today() + timedelta(days=200)


def test_a_stale_export_does_not_undo_a_decay(db_location: DbLocation, tmp_path: Path) -> None:
    with recallbox.open(db_location("m")) as box:
        entry = box.remember("deploy staging only after the smoke test", "guideline")
        exported = box.export_memory()
        moved = box.decay(today=LATER)
        assert [(t.key, t.to_state) for t in moved.transitions] == [(entry.key, "dormant")]
        report = box.import_memory(exported)
        assert report.updated == ()
        assert [i.line for i in report.ignored] and "state" in report.ignored[0].reason
        [now] = box.memories()
        assert (now.state, now.state_since) == ("dormant", LATER)


def test_a_state_edited_after_the_decay_is_applied(db_location: DbLocation, tmp_path: Path) -> None:
    with recallbox.open(db_location("m")) as box:
        entry = box.remember("deploy staging only after the smoke test", "guideline")
        box.decay(today=LATER)
        edited = box.export_memory().replace("state=dormant", "state=active")
        report = box.import_memory(edited)
        assert [u.key for u in report.updated] == [entry.key]
        [now] = box.memories()
        assert now.state == "active"
