"""Concurrent writers (#15 item 1): appenders on one thread and on their own, a batch
appender, the real CLI, compaction, an import, ``embed --all``, ``remember``, stored tool
outputs, a knowledge sync, a code index and readers on one store (a SQLite file, a
PostgreSQL database) at once — no lost write, no duplicate, per-writer order kept, every seq
gap-free, no "database is locked" reaching anyone, and readers never blocked by a writer."""

from __future__ import annotations

from pathlib import Path

from backends import DbLocation
from reliability.conftest import CI_WRITES
from reliability.harness.concurrency import Role, reads_during_held_import, run_concurrently
from reliability.harness.jobs_curated import DOCS_PER_RUN, FILES_PER_RUN, SECTIONS_PER_DOC


def test_many_processes_on_one_store_lose_nothing_and_duplicate_nothing(
    tmp_path: Path, db_location: DbLocation
) -> None:
    roles = [
        Role("append", {"channel": "shared", "count": CI_WRITES}, processes=2),
        Role("append", {"count": CI_WRITES}, processes=2),
        Role("append_many", {"channel": "shared", "count": CI_WRITES // 5}),
        Role("append_cli", {"channel": "shared", "count": 2}),
        Role("compact", {"channel": "shared", "count": CI_WRITES // 20}),
        Role("import_claude_code"),
        Role("embed"),
        Role("remember", {"count": CI_WRITES // 5}),
        Role("tool_output", {"channel": "shared", "count": CI_WRITES // 10}),
        Role("knowledge_sync"),
        Role("code_index"),
        Role("reader", processes=2),
    ]
    result = run_concurrently(tmp_path, roles, db=db_location("concurrent"))
    assert result.problems == []
    expected = 4 * CI_WRITES + (CI_WRITES // 5) * 5 + 2 + (CI_WRITES // 20) * 3
    expected += CI_WRITES // 5 + CI_WRITES // 10 + DOCS_PER_RUN * SECTIONS_PER_DOC + FILES_PER_RUN
    assert (result.processes, result.writes) == (15, expected)
    assert result.reads > 0


def test_readers_open_and_read_while_an_import_holds_the_write_lock(tmp_path: Path) -> None:
    result = reads_during_held_import(tmp_path)
    assert result.lock_held
    assert result.problems == []
    assert (result.reads, result.cli_reads) == (8, 3)
