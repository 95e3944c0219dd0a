"""Concurrent writers, continued (#15 item 1): the import hook (``recallbox hook claude-code``
through the real CLI), an MCP server driven by the real SDK client calling ``remember``, and
``decay``, on one store (each backend) with an appender, ``remember``, a Codex import, ``embed --all``
and a reader — no lost write, no duplicate, no "database is locked" anywhere (the MCP server's
log included), each entry in the state its last acknowledged decay gave it, the hooked threads
equal to a fresh import of their transcripts."""

from __future__ import annotations

from pathlib import Path

from backends import DbLocation
from reliability.harness.ack import read_acks
from reliability.harness.concurrency import Role, run_concurrently
from reliability.harness.jobs_writers import DECAY_ENTRIES

APPENDS = 30
REMEMBERS = 12
MCP_REMEMBERS = 8
DECAY_RUNS = 4
HOOK_CALLS = 3
HOOKS = 2


def test_hooks_an_mcp_server_and_decay_write_alongside_the_others(
    tmp_path: Path, db_location: DbLocation
) -> None:
    roles = [
        Role("append", {"channel": "shared", "count": APPENDS}),
        Role("remember", {"count": REMEMBERS}),
        Role("mcp_remember", {"count": MCP_REMEMBERS}),
        Role("decay", {"count": DECAY_RUNS}),
        Role("hook", {"count": HOOK_CALLS}, processes=HOOKS),
        Role("import_codex"),  # claude-code: threads are the hooks'
        Role("embed"),
        Role("reader"),
    ]
    result = run_concurrently(tmp_path, roles, db=db_location("concurrent"))
    assert result.problems == []
    expected = APPENDS + REMEMBERS + MCP_REMEMBERS + DECAY_RUNS + HOOK_CALLS * HOOKS
    assert (result.processes, result.writes) == (9, expected)
    assert result.reads > 0
    (decay_acks,) = tmp_path.glob("acks-y*.jsonl")  # the decay check was not vacuous:
    moved = sum(len(a["transitions"]) for a in read_acks(decay_acks))
    assert moved >= DECAY_ENTRIES  # the seeded entries went dormant under the other writers
