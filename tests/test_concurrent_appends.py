"""#16 acceptance: several writer processes appending to one thread lose nothing and leave no
gap, on both backends.

:data:`WRITERS` processes each append :data:`APPENDS` messages to the same thread, one
transaction each, all at once. Afterwards the thread holds every message exactly once, its
``seq`` runs 1…N with no gap and no repeat, and each writer's messages are in the order it
wrote them (per-thread order comes from the thread's own counter: SQLite's single writer, or
PostgreSQL's counter row locked ``FOR UPDATE`` — never a global sequence).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import recallbox

WRITERS = 4
APPENDS = 1_000
CHANNEL = "shared"
WRITER = """
import sys, recallbox
writer, count = sys.argv[2], int(sys.argv[3])
sys.stdin.readline()  # start together
with recallbox.open(sys.argv[1], hit_log=False) as box:
    for i in range(count):
        box.append("shared", "user", f"{writer} {i}")
"""
WRITER_TIMEOUT_S = 600


def test_writer_processes_appending_to_one_thread_leave_no_gap(db_path: Path | str) -> None:
    with recallbox.open(db_path) as box:
        box.create_thread(CHANNEL)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(db_path), f"w{k}", str(APPENDS)],
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(WRITERS)
    ]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.close()
    for proc in procs:
        assert proc.wait(timeout=WRITER_TIMEOUT_S) == 0, proc.stderr.read() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    with recallbox.open(db_path) as box:
        messages = box.messages(CHANNEL)
    assert len(messages) == WRITERS * APPENDS
    assert [m.seq for m in messages] == list(range(1, WRITERS * APPENDS + 1))
    for k in range(WRITERS):
        mine = [int(m.content.split()[1]) for m in messages if m.content.startswith(f"w{k} ")]
        assert mine == list(range(APPENDS))
