"""Corruption and faults (#15 item 3): each gets a clear error naming the fix and, where
possible, a repair (`doctor --repair`) that loses no base row.

Faults are injected for real: an index emptied behind its content table, a dropped ``vec0``
table, a WAL cut inside a frame, a schema row from the future, ``chattr +i`` on the file or its
folder (the suite runs as root, so permissions alone would not stop a write), a page cap that
makes SQLite report SQLITE_FULL, and an apsw VFS shim that fails the Nth write or sync.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import recallbox
from recallbox.cli import cli
from recallbox.storage.sqlite.literal_index import LITERAL_TABLE
from recallbox.storage.sqlite.schema import LATEST_VERSION
from reliability.harness import faults
from reliability.harness.invariants import check_store, structure_problems

TRACEBACK = "Traceback (most recent call last)"
SEED_MESSAGES = 60
# SQLite's own faults (its files, WAL, VFS); PostgreSQL's: tests/storage/postgres/test_faults.py.
pytestmark = pytest.mark.sqlite_only


def seed(db: Path, n: int = SEED_MESSAGES, *, embed: bool = False) -> list[str]:
    with recallbox.open(db, embedder="hash" if embed else None) as box:
        ids = [box.append(f"t{i % 3}", "user", f"deploy staging item{i}").id for i in range(n)]
        if embed:
            assert box.embed_all() == n
    return ids


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), obj={})
    assert TRACEBACK not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr


def error_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith("Error: ")]
    return line.removeprefix("Error: ")


def all_present(db: Path, ids: list[str]) -> None:
    with recallbox.open(db) as box:
        for message_id in ids:
            assert box.message(message_id).id == message_id
    assert structure_problems(db) == []


# -- a desynced FTS index -------------------------------------------------------------------------
@pytest.mark.parametrize("table", ["messages_fts", LITERAL_TABLE])
def test_a_desynced_index_is_reported_and_repaired_without_losing_a_row(
    db_path: Path, table: str
) -> None:
    ids = seed(db_path)
    with recallbox.open(db_path) as box:
        box.store.indexer.drain()  # every row in the literal index, none left in its backlog
    faults.desync_fts(db_path, table)
    with recallbox.open(db_path) as box:
        [sick] = [ix for ix in box.doctor().indexes if not ix.healthy]
        assert sick.table == table
        if table == LITERAL_TABLE:  # contentless: its integrity check cannot see the content
            assert (sick.content_rows, sick.index_rows) == (len(ids), 0) and sick.probe_misses
        else:
            assert not sick.integrity_ok
    code, out, _ = run_cli("--db", str(db_path), "doctor")
    assert code == 1 and out.splitlines()[-1] == "unhealthy: run `recallbox doctor --repair`"
    code, out, _ = run_cli("--db", str(db_path), "doctor", "--repair", "--json")
    report = json.loads(out)
    assert code == 0 and report["healthy"] and f"{table}: rebuilt" in report["repaired"]
    all_present(db_path, ids)
    with recallbox.open(db_path) as box:
        assert "item7" in box.search_memory("item7")
        assert len(box.search("item7", allow_embed=False)) == 1


# -- a missing vector table -------------------------------------------------------------------------
def test_a_missing_vector_table_is_found_by_doctor_and_rebuilt(db_path: Path) -> None:
    ids = seed(db_path, embed=True)
    assert faults.drop_vector_tables(db_path) == ["vec_space_1"]
    with recallbox.open(db_path, embedder="hash") as box:
        hits = box.search("item7")  # the vector leg is absent: keyword ranking stands alone
        assert [h.best_message_id or h.id for h in hits][:1] == [ids[7]]
        assert not box.doctor().healthy
        assert box.doctor(repair=True).healthy
        assert box.embed_all() == len(ids)
    assert check_store(db_path, []) == []


# -- a truncated WAL --------------------------------------------------------------------------------
@pytest.mark.parametrize("fraction", [0.0, 0.013, 0.31, 0.5, 0.77, 0.999])
def test_a_truncated_wal_opens_healthy_with_a_prefix_of_the_commits(
    tmp_path: Path, fraction: float
) -> None:
    live, copy = tmp_path / "live.db", tmp_path / "copy.db"
    with recallbox.open(live) as box:
        ids = [box.append("wal", "user", f"commit{i} deploy").id for i in range(120)]
        size = faults.copy_with_truncated_wal(live, copy, lambda n: int(n * fraction))
    assert size > 0
    with recallbox.open(copy) as box:
        assert box.doctor().healthy
        kept = [m.id for m in box.messages("wal")] if box.threads() else []
    assert kept == ids[: len(kept)]  # whole commits, in order, none torn
    assert structure_problems(copy) == []


# -- a database written by a newer recallbox ------------------------------------------------------
def test_a_newer_database_is_refused_with_the_upgrade_command(db_path: Path) -> None:
    seed(db_path, 3)
    faults.newer_schema(db_path)
    message = (
        f"database {str(db_path)!r} has schema version 10000, written by a newer recallbox "
        f"(this one knows up to {LATEST_VERSION}); upgrade recallbox (pip install -U recallbox) "
        "to open it"
    )
    with pytest.raises(recallbox.SchemaMismatch) as caught:
        recallbox.open(db_path)
    assert str(caught.value) == message
    code, _, err = run_cli("--db", str(db_path), "search-memory", "deploy")
    assert (code, error_line(err)) == (1, message)
    code, out, _ = run_cli("--db", str(db_path), "search-memory", "deploy", "--json")
    assert (code, json.loads(out)) == (1, {"error": message, "code": 1})


# -- a read-only file or folder ---------------------------------------------------------------------
READ_ONLY = {
    "file": re.compile(
        r"the database '.*' cannot be written \(attempt to write a readonly database\); make "
        r"the file and its directory writable \(SQLite writes its -wal and -shm files next to "
        r"it\), or open a copy"
    ),
    "folder": re.compile(
        r"cannot open the database '.*' \(unable to open database file\); check that it is a "
        r"file in a directory you can write to, or pass another path \(--db PATH or RECALLBOX_DB\)"
    ),
}
"""A read-only file refuses the write; a read-only folder refuses the journal the write needs."""


def test_a_read_only_file_reads_and_refuses_writes_naming_the_fix(db_path: Path) -> None:
    ids = seed(db_path, 6)
    with faults.immutable(db_path), recallbox.open(db_path) as box:
        assert "item4" in box.search_memory("item4")
        with pytest.raises(recallbox.StoreUnavailable, match=READ_ONLY["file"]):
            box.append("t0", "user", "never stored")
        code, _, err = run_cli("--db", str(db_path), "append", "t0", "user", "no")
        assert code == 1 and READ_ONLY["file"].fullmatch(error_line(err)), err
    all_present(db_path, ids)


def test_a_read_only_folder_is_refused_naming_the_fix(db_path: Path) -> None:
    """SQLite cannot read a WAL database whose folder refuses its -shm file: a clear refusal."""
    ids = seed(db_path, 6)
    with faults.immutable(db_path.parent):
        with pytest.raises(recallbox.StoreUnavailable, match=READ_ONLY["folder"]):
            recallbox.open(db_path)
        code, _, err = run_cli("--db", str(db_path), "search-memory", "item4")
        assert code == 1 and READ_ONLY["folder"].fullmatch(error_line(err)), err
    all_present(db_path, ids)


# -- a full disk --------------------------------------------------------------------------------------
FULL = "the disk holding {path!r} is full; free some space and retry"


def test_a_full_disk_fails_the_write_cleanly_and_keeps_every_row(db_path: Path) -> None:
    ids = seed(db_path)
    with faults.page_cap(faults.page_count(db_path) + 2), recallbox.open(db_path) as box:
        with pytest.raises(recallbox.StoreUnavailable) as caught:
            for _ in range(50):
                ids.append(box.append("t0", "user", "x" * 20_000).id)
        assert str(caught.value) == FULL.format(path=str(db_path))
        code, _, err = run_cli("--db", str(db_path), "append", "t0", "user", "y" * 50_000)
        assert (code, error_line(err)) == (1, FULL.format(path=str(db_path)))
    all_present(db_path, ids)
    assert check_store(db_path, []) == []


def test_a_full_disk_during_an_import_is_a_failed_file_then_resumes(
    db_path: Path, tmp_path: Path
) -> None:
    from reliability.harness import corpus

    seed(db_path, 3)
    path = tmp_path / "t" / "big.jsonl"
    corpus.write_lines(path, corpus.claude_records("big", 200))
    with faults.page_cap(faults.page_count(db_path) + 4), recallbox.open(db_path) as box:
        report = box.import_transcripts("claude-code", [path])
        [failed] = report.errors
        assert "full" in (failed.error or "")
    with recallbox.open(db_path) as box:
        assert not [t for t in box.threads() if t.channel.startswith("claude-code:")]
        report = box.import_transcripts("claude-code", [path])
        assert not report.errors and report.added == 800
    assert check_store(db_path, []) == []


# -- an I/O error in the middle of a write ------------------------------------------------------------
DISK = re.compile(r"the disk failed reading or writing '.*' \(.*injected .* failure.*\); retry")


@pytest.mark.parametrize("fail", [("write", 1), ("write", 2), ("write", 5), ("sync", 1)])
def test_an_io_error_mid_write_fails_that_write_only(db_path: Path, fail: tuple[str, int]) -> None:
    ids = seed(db_path)
    kind, at = fail
    plan = faults.FaultPlan(**{f"fail_{kind}_at": at})
    batch = [{"role": "user", "content": f"batch item{i} " + "z" * 3000} for i in range(8)]
    with (
        faults.failing_io(plan),
        recallbox.open(db_path) as box,
        pytest.raises(recallbox.StoreUnavailable, match=DISK),
    ):
        box.append_many("t1", batch)
    assert plan.failed >= 1
    all_present(db_path, ids)
    with recallbox.open(db_path) as box:
        stored = [m for m in box.messages("t1") if m.content.startswith("batch")]
        assert stored == []  # all or nothing
        assert box.doctor().healthy
        box.append_many("t1", batch)  # the disk is back: the same write succeeds
    assert check_store(db_path, []) == []
