"""Purge, redact and backup (#15 item 6, DESIGN §7a), proven by a byte scan.

Canaries are planted in every place a secret can land — an imported transcript (content, raw
original, tool-call input, transcript chunks, import ledger), appended messages (content,
tool-call argument leaves, raw argument text, metadata), a memory entry, a knowledge section,
hit-log query texts, and the vectors of all of them — among bystander rows. After a purge or a
redaction, a scan of every byte of the database file, its ``-wal``, its ``-shm`` and any
journal must find no canary and no canary row's vector, while the bystanders stay intact.
"""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.cli import cli
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.sqlite import secrets as sqlite_secrets
from reliability.harness.erasure import (
    BYSTANDER_TURNS,
    Planted,
    bystander_problems,
    plant,
    purge_everything,
    redact_everything,
)
from reliability.harness.invariants import structure_problems


@pytest.fixture
def planted(tmp_path: Path) -> Planted:
    p = plant(tmp_path)
    before = p.scan()
    assert set(before) == set(p.canaries) | {f"vector:{k}" for k in p.vectors}, (
        "the scan must see every canary before the erasure (else it proves nothing)"
    )
    return p


def test_purge_of_every_kind_leaves_no_byte_of_a_canary(planted: Planted) -> None:
    p = planted
    with recallbox.open(p.db) as box:
        reports = purge_everything(p, box)
        assert all(r.wal_truncated for r in reports)
        assert reports[0].threads == 1 and reports[0].chunks >= 1
        assert reports[0].messages == BYSTANDER_TURNS  # 4 records per turn
        assert [r.messages for r in reports[1:4]] == [1, 1, 1]
        assert reports[1].hits == 2  # the drill of read_message, the recall's hit
        assert reports[4].memories == 1 and reports[4].hits == 2  # the recall's hit and drill
        assert reports[5].sections == 2  # the vault and the bystander section
        assert reports[6].outputs == 1
        assert reports[7].files == 1
        assert sum(r.vectors for r in reports) >= 4
        assert [m.content for m in box.messages("notes")] == ["a bystander note after the secrets"]
        with pytest.raises(NotFound):
            box.thread(p.imported)
        assert box.search_memory(p.canaries["import_text"]).count("[message_id=") == 0
    assert p.scan() == {}
    assert bystander_problems(p) == []


def test_redact_of_every_kind_leaves_no_byte_of_a_canary(planted: Planted) -> None:
    p = planted
    with recallbox.open(p.db, embedder="hash") as box:
        # a content and a tool input; 4 notes and a tool output; title; body; heading twice
        # and body; a query; the recall's query in each of its rows
        counts = redact_everything(p, box)
        assert counts[:6] == [2, 5, 1, 1, 3, 1] and counts[6] >= 1
        assert counts[7] >= 2  # the docstring and the body, in the signature and snippet
        note = box.message(p.note_id)
        assert note.content == "the staging password is [REDACTED]"
        assert note.metadata == {"pasted": "from vault [REDACTED]"}
        tool = box.message(p.note_tool_id)
        assert tool.tool_calls is not None
        assert tool.tool_calls[0]["arguments"] == {"cmd": ["curl", "-H", "Bearer [REDACTED]"]}
        assert "[REDACTED]" in box.memories()[0].body + box.memories()[1].body
        assert box.embed_all() >= 4  # the rewritten rows lost their vectors; re-embedded
        assert next(h.id for h in box.search("staging password", limit=3)) == p.note_id
    assert p.scan() == {}
    assert bystander_problems(p) == []


def test_a_reader_holding_the_wal_is_reported_then_a_later_purge_erases(
    planted: Planted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_secrets, "CHECKPOINT_ATTEMPTS", 3)
    p = planted
    with recallbox.open(p.db) as box:
        reader = apsw.Connection(str(p.db))
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM messages").fetchall()  # holds a read snapshot
        report = box.purge(p.note_id)
        assert report.messages == 1 and not report.wal_truncated
        reader.execute("ROLLBACK")
        reader.close()
        assert box.purge(channel=p.imported).wal_truncated
    assert "note_text" not in p.scan()


def test_targets_are_checked(planted: Planted) -> None:
    with recallbox.open(planted.db) as box:
        with pytest.raises(InvalidArgument, match="name what to erase"):
            box.purge()
        with pytest.raises(NotFound):
            box.purge("m_0000000000000000")
        with pytest.raises(NotFound):
            box.redact(None, "x", channel="no-such-thread")
        with pytest.raises(InvalidArgument, match="empty string"):
            box.redact(planted.note_id, re.compile("a*"))
        with pytest.raises(InvalidArgument):
            box.redact(planted.note_id, "")
        assert box.purge(handle="h_unknown").outputs == 0
        assert box.redact(planted.note_id, "not in the store") == 0


def test_backup_while_writers_run_is_one_consistent_state(tmp_path: Path) -> None:
    db = tmp_path / "live.db"
    with recallbox.open(db) as box:
        box.append_many("w", [{"role": "user", "content": f"seed {i}"} for i in range(200)])
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        with recallbox.open(db) as other:
            while not stop.is_set():
                other.append_many("w", [{"role": "user", "content": "x " * 50}] * 20)
                written.append(20)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with recallbox.open(db) as box:
            while not written:
                stop.wait(0.01)
            copies = [tmp_path / f"copy{i}.db" for i in range(3)]
            pages = [box.backup(c) for c in copies]
    finally:
        stop.set()
        thread.join()
    assert all(n > 0 for n in pages)
    for copy in copies:
        assert copy.stat().st_mode & 0o777 == 0o600
        assert structure_problems(copy) == []  # every thread's seq gap-free: one state
        with recallbox.open(copy) as restored:
            assert restored.doctor().healthy
            count = len(restored.messages("w"))
            assert count >= 200 and (count - 200) % 20 == 0  # whole transactions only
    with recallbox.open(db) as box, pytest.raises(InvalidArgument, match="exists"):
        box.backup(copies[0])


def _cli(db: Path, *args: str, stdin: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], input=stdin, obj={})
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout + result.stderr


def test_the_cli_verbs(planted: Planted) -> None:
    p = planted
    c = p.canaries
    code, out = _cli(p.db, "redact", c["note_text"], "--message", p.note_id, "--json")
    assert code == 0 and json.loads(out) == {"replacements": 1}
    code, out = _cli(p.db, "redact", "cnrynote_[a-z]+", "--regex", "--channel", "notes")
    assert code == 0 and out.startswith("redacted ")
    code, out = _cli(p.db, "redact", "(", "--regex", "--channel", "notes")
    assert code == 2 and "not a regular expression" in out
    code, out = _cli(p.db, "purge", "--channel", p.imported, stdin="n\n")
    assert code == 1 and "nothing purged" in out  # declined
    code, out = _cli(p.db, "purge", "--channel", p.imported, "--yes")
    assert code == 0 and out.startswith(f"purged {BYSTANDER_TURNS} messages, 1 threads")
    code, out = _cli(p.db, "purge", "--key", p.memory_key, "--json")
    assert code == 0 and json.loads(out)["memories"] == 1
    code, out = _cli(p.db, "purge", "--key", "PIT99", "--json")
    assert code == 1 and "unknown memory key" in json.loads(out)["error"]
    code, out = _cli(p.db, "purge", "--yes")
    assert code == 2 and "name what to erase" in out
    copy = p.root / "copy.db"
    code, out = _cli(p.db, "backup", str(copy), "--json")
    assert code == 0 and json.loads(out)["pages"] > 0
    code, out = _cli(p.db, "backup", str(copy))
    assert code == 2 and "exists" in out


PLAIN = st.text(alphabet="abcdefghijklm \n", max_size=40)
SECRET = st.text(alphabet="nopqrstuvwxyz", min_size=2, max_size=12).map(lambda s: "ZQX" + s)
"""A secret never found in the schema text, nor formed by the plain text around it."""
REDACT_EXAMPLES = 25
"""Each example is a real database file: a few dozen keep the suite fast."""


@settings(max_examples=REDACT_EXAMPLES, deadline=None)
@given(
    secret=SECRET,
    pieces=st.lists(PLAIN, min_size=1, max_size=6),
    places=st.lists(st.sampled_from(["content", "arg", "nested", "meta"]), min_size=1),
)
def test_redact_finds_every_planted_copy_and_leaves_no_byte(
    tmp_path_factory: pytest.TempPathFactory, secret: str, pieces: list[str], places: list[str]
) -> None:
    root = tmp_path_factory.mktemp("redact")
    fields: dict[str, list[str]] = {"content": [], "arg": [], "nested": [], "meta": []}
    for i, place in enumerate(places):
        fields[place].append(pieces[i % len(pieces)] + secret)
    with recallbox.open(root / "s.db") as box:
        message = box.append(
            "t",
            "assistant",
            "".join(fields["content"]) + pieces[0],
            tool_calls=[
                {
                    "id": "c",
                    "name": "x",
                    "arguments": {"a": "".join(fields["arg"]), "n": [[{"d": fields["nested"]}]]},
                }
            ],
            metadata={"m": fields["meta"], "k": 1},
        )
        assert box.redact(message.id, secret) == len(places)
        stored = box.message(message.id)
        assert secret not in repr((stored.content, stored.tool_calls, stored.metadata))
    for path in root.iterdir():
        assert secret.encode() not in path.read_bytes(), path.name
