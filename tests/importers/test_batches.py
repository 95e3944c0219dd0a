"""A streamed file imports in batches, each committed with its cursor (#14 item 2, #17).

The invariant: whatever the batch size and wherever an import stops (an error, a crash), the
database holds exactly what a sync of the file up to the last commit gives, and the next sync
finishes it to exactly what one uninterrupted import gives.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snapshots import Snapshot, snapshot  # tests/importers/snapshots.py

import recallbox
from backends import DbLocation
from recallbox.importers import sync as sync_module

SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
CHANNEL = f"claude-code:{SESSION}"
PROJECT = Path("claude-code/projects/-home-dev-app")
WRAPPED_FILE = Path(
    "codex/sessions/2025/10/29/rollout-2025-10-29T01-00-00-019a2d7a-0000-7000-8000-00000000c0de.jsonl"
)


def chunk_ids(box: recallbox.Box) -> list[str]:
    return sorted(
        h.id for h in box.search("README test verbose flag", domain="transcripts", limit=50)
    )


def import_all(db: Path | str, paths: list[Path], format: str = "claude-code") -> Snapshot:
    with recallbox.open(db) as box:
        report = box.import_transcripts(format, paths)
        assert report.errors == ()
        return snapshot(box)


@pytest.fixture
def session_files(fixtures: Path, tmp_path: Path) -> list[Path]:
    target = tmp_path / "projects"
    shutil.copytree(fixtures / "claude-code" / "projects", target)
    return [target]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(batch=st.integers(1, 12))
def test_any_batch_size_gives_what_one_import_gives(
    db_location: DbLocation,
    session_files: list[Path],
    fixtures: Path,
    batch: int,
) -> None:
    one, batched = db_location("one", fresh=True), db_location("batched", fresh=True)
    reference = import_all(one, session_files)
    codex_reference = import_all(
        db_location("one-codex", fresh=True), [fixtures / WRAPPED_FILE], "codex"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sync_module, "COMMIT_EVERY_RECORDS", batch)
        assert import_all(batched, session_files) == reference
        codex = db_location("batched-codex", fresh=True)
        assert import_all(codex, [fixtures / WRAPPED_FILE], "codex") == codex_reference
    with recallbox.open(one) as one_box, recallbox.open(batched) as many:
        assert chunk_ids(one_box) == chunk_ids(many)


def test_an_import_stopped_mid_file_keeps_its_batches_and_the_next_sync_finishes_it(
    tmp_path: Path,
    db_location: DbLocation,
    session_files: list[Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fix (#14 item 2): an error after some batches leaves those batches (a consistent
    database: what a sync of the file's first part gives) and the next sync resumes."""
    reference = import_all(db_location("one"), session_files)
    session = session_files[0] / "-home-dev-app" / f"{SESSION}.jsonl"
    monkeypatch.setattr(sync_module, "COMMIT_EVERY_RECORDS", 4)
    with recallbox.open(db_location("x")) as box:
        real_append = box.store.append
        calls = {"n": 0}

        def failing_append(channel: str, rows: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 5:
                raise RuntimeError("disk on fire")
            return real_append(channel, rows)

        monkeypatch.setattr(box.store, "append", failing_append)
        [first, *_] = box.import_transcripts("claude-code", session).files
        assert (first.status, first.error) == ("error", "RuntimeError: disk on fire")
        assert box.doctor().healthy
        partial = box.messages(CHANNEL)
        assert 0 < len(partial) < len(reference[CHANNEL][3])
        ledger = box.store.import_file(str(session))
        assert ledger is not None and ledger.size == sync_module.PARTIAL_SIZE
        # what is stored is exactly what importing the file up to the cursor gives
        prefix = tmp_path / "prefix" / session.name
        prefix.parent.mkdir()
        prefix.write_bytes(session.read_bytes()[: ledger.cursor_bytes])
        partial_view = import_all(db_location("prefix"), [prefix])
        assert snapshot(box)[CHANNEL] == partial_view[CHANNEL]
        monkeypatch.setattr(box.store, "append", real_append)
        again = box.import_transcripts("claude-code", session_files)
        assert again.errors == ()
        assert {f.status for f in again.files if f.path == str(session)} == {"appended"}
        assert snapshot(box) == reference


def test_a_rewrite_stopped_mid_file_resumes_as_the_same_pass(
    tmp_path: Path, db_location: DbLocation, fixtures: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rewritten file is read again in batches too; stopped in the middle, the next sync
    goes on with that pass, so the records the rewrite dropped are still superseded."""
    path = tmp_path / "src" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    shutil.copy(fixtures / PROJECT / f"{SESSION}.jsonl", path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    rewritten = lines[:4] + lines[6:]  # two records dropped from the middle

    def run(db: Path | str, *, fail_at: int | None) -> Snapshot:
        shutil.copy(fixtures / PROJECT / f"{SESSION}.jsonl", path)
        with recallbox.open(db) as box:
            assert box.import_transcripts("claude-code", path).errors == ()
            path.write_text("".join(rewritten), encoding="utf-8")
            real_save = box.store.save_import_file
            calls = {"n": 0}

            def failing_save(file: Any) -> Any:  # the last write of every batch
                calls["n"] += 1
                if fail_at is not None and calls["n"] == fail_at:
                    raise RuntimeError("power cut")
                return real_save(file)

            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(sync_module, "COMMIT_EVERY_RECORDS", 3)
                patch.setattr(box.store, "save_import_file", failing_save)
                [file] = box.import_transcripts("claude-code", path).files
            if fail_at is not None:
                assert file.status == "error"
                ledger = box.store.import_file(str(path))
                assert ledger is not None and sync_module.RESYNC_PASS_KEY in ledger.state
                [file] = box.import_transcripts("claude-code", path).files
                assert file.status == "appended"
            assert box.import_transcripts("claude-code", path).files[0].status == "unchanged"
            assert box.doctor().healthy
            return snapshot(box)

    reference = run(db_location("one"), fail_at=None)
    for fail_at in (3, 5):  # after one batch, after two
        assert run(db_location(f"stopped-{fail_at}"), fail_at=fail_at) == reference


@pytest.mark.sqlite_only  # the database file's pages
def test_reimporting_the_same_data_never_grows_the_file(tmp_path: Path, fixtures: Path) -> None:
    """#14 item 3: syncing the same records again (a rewrite that changed nothing a message
    holds) leaves the database file within a couple of pages of its size."""
    path = tmp_path / "src" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    original = (fixtures / PROJECT / f"{SESSION}.jsonl").read_text(encoding="utf-8")
    db = tmp_path / "x.db"
    sizes = []
    with recallbox.open(db) as box:
        for round_ in range(6):
            # a rewrite of the first line (a snapshot record) forces a full re-read each time
            head, _, rest = original.partition("\n")
            path.write_text(head.replace("}", f', "round": {round_}}}', 1) + "\n" + rest)
            report = box.import_transcripts("claude-code", path)
            assert report.errors == ()
            if round_:
                assert (report.files[0].status, report.added) == ("resynced", 0)
            box.store.pool.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            sizes.append(db.stat().st_size)
    page = 4096
    assert max(sizes[1:]) - min(sizes[1:]) <= 2 * page, sizes


@given(
    size=st.integers(sync_module.MIN_BATCH_RECORDS, sync_module.COMMIT_EVERY_RECORDS),
    records=st.integers(0, 10_000),
    seconds=st.floats(0, 100, allow_nan=False),
)
def test_a_slow_batch_makes_the_next_one_smaller(size: int, records: int, seconds: float) -> None:
    """#14 item 2: a batch whose writes held the lock past COMMIT_EVERY_SECONDS (the reading
    deadline does not see them) shrinks the next in proportion; a quick one lets it grow."""
    after = sync_module.next_batch_size(size, records, seconds)
    assert sync_module.MIN_BATCH_RECORDS <= after <= sync_module.COMMIT_EVERY_RECORDS
    if records and seconds > sync_module.COMMIT_EVERY_SECONDS:
        assert after <= size
        assert after == sync_module.MIN_BATCH_RECORDS or (
            after * seconds <= records * sync_module.COMMIT_EVERY_SECONDS + seconds
        )
    else:
        assert after >= size
