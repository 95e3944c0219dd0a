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
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import pytest
from click.testing import CliRunner

import recallbox
from recallbox.cli import cli
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.sqlite import secrets as sqlite_secrets
from reliability.harness.corpus import claude_records, sentence, write_lines
from reliability.harness.invariants import structure_problems

BYSTANDER_TURNS = 40
BYSTANDER_MESSAGES = 120


def canary(kind: str) -> str:
    return f"cnry{kind}{secrets.token_hex(8)}"


@dataclass
class Planted:
    root: Path
    db: Path
    canaries: dict[str, str]
    imported: str = ""  # the channel of the imported transcript
    note_id: str = ""  # an appended message holding canaries
    note_tool_id: str = ""  # the message of the tool call holding one
    memory_key: str = ""
    document: str = "ops/secrets.md"
    vectors: dict[str, bytes] = field(default_factory=dict)

    def scan(self) -> dict[str, list[str]]:
        """``{canary or vector name: [files holding it]}``, for every file of the store."""
        files = {p.name: p.read_bytes() for p in self.root.iterdir() if p.name.startswith("s.db")}
        found: dict[str, list[str]] = {}
        needles = {k: v.encode() for k, v in self.canaries.items()} | {
            f"vector:{k}": v for k, v in self.vectors.items()
        }
        for name, needle in needles.items():
            holders = [f for f, data in files.items() if needle in data]
            if holders:
                found[name] = holders
        return found


def _transcript(path: Path, session: str, can: dict[str, str]) -> None:
    lines = claude_records(session, BYSTANDER_TURNS // 4)
    rows = [json.loads(line) for line in lines]
    rows[4]["message"]["content"] += f" my key is {can['import_text']}"
    rows[5]["message"]["content"][0]["input"]["command"] += f" --token {can['import_arg']}"
    write_lines(path, [json.dumps(row) for row in rows])


def _vectors(db: Path) -> dict[int, dict[int, bytes]]:
    """``{space id: {rowid: vector prefix}}``, read straight from the file."""
    import sqlite_vec

    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    out: dict[int, dict[int, bytes]] = {}
    for (space,) in conn.execute("SELECT id FROM embedding_spaces").fetchall():
        out[space] = {
            rowid: bytes(blob)
            for rowid, blob in conn.execute(f"SELECT rowid, embedding FROM vec_space_{space}")
        }
    conn.close()
    return out


def _rowid(db: Path, sql: str, *params: object) -> int:
    conn = apsw.Connection(str(db))  # never the sqlite3 module: two SQLite libraries in one
    try:  # process do not see each other's locks
        (rowid,) = conn.execute(sql, params).fetchone()
    finally:
        conn.close()
    return int(rowid)


def plant(root: Path) -> Planted:
    """A store with canaries in every place (see the module docstring) and vectors for all."""
    kinds = [
        "import_text",
        "import_arg",
        "note_text",
        "note_arg",
        "note_meta",
        "note_tool",
        "memory_title",
        "memory_body",
        "doc_heading",
        "doc_body",
        "query",
    ]
    p = Planted(root=root, db=root / "s.db", canaries={k: canary(k) for k in kinds})
    c = p.canaries
    transcript = root / "session-a.jsonl"
    _transcript(transcript, "session-a", c)
    with recallbox.open(p.db, embedder="hash") as box:
        report = box.import_transcripts("claude-code", [transcript])
        assert report.added == BYSTANDER_TURNS
        (p.imported,) = [t.channel for t in box.threads()]
        for i in range(BYSTANDER_MESSAGES):
            box.append(f"bystander-{i % 4}", "user", f"bystander {i} " + sentence_of(i))
        p.note_id = box.append(
            "notes",
            "user",
            f"the staging password is {c['note_text']}",
            metadata={"pasted": f"from vault {c['note_meta']}"},
        ).id
        p.note_tool_id = box.append(
            "notes",
            "assistant",
            "",
            tool_calls=[
                {
                    "id": "call_1",
                    "name": "bash",
                    "arguments": {"cmd": ["curl", "-H", f"Bearer {c['note_arg']}"]},
                }
            ],
        ).id
        box.append("notes", "tool", f"ok {c['note_tool']}", tool_call_id="call_1")
        box.append("notes", "user", "a bystander note after the secrets")
        p.memory_key = box.remember(
            f"rotate the key {c['memory_body']} every month",
            "pitfall",
            title=f"vault {c['memory_title']}",
        ).key
        box.remember("bystander lesson: keep replicas warm", "guideline")
        box.add_document(
            f"# Ops\n\n## Vault {c['doc_heading']}\n\nThe root token is {c['doc_body']}.\n\n"
            "## Bystander\n\nReplicas stay warm.\n",
            p.document,
        )
        box.add_document("# Other\n\n## Replicas\n\nKeep replicas warm.\n", "other.md")
        result = box.recall_context(f"rotate key {c['query']} vault", "MEMORY.md")
        assert result.drilled == (p.memory_key,)
        box.read_message(p.note_id)
        assert box.embed_all() > 0
    by_space = _vectors(p.db)
    targets = {
        "note": _rowid(p.db, "SELECT id FROM messages WHERE uid = ?", p.note_id),
        "memory": _rowid(p.db, "SELECT id FROM memory_entries WHERE key = ?", p.memory_key),
        "section": _rowid(p.db, "SELECT id FROM knowledge_sections WHERE heading LIKE 'Vault%'"),
    }
    owners = {"note": "message", "memory": "memory_entry", "section": "section"}
    spaces = _spaces(p.db)
    for name, rowid in targets.items():
        p.vectors[name] = by_space[spaces[owners[name]]][rowid]
    return p


def sentence_of(i: int) -> str:
    import random

    return sentence(random.Random(i))


def _spaces(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db))
    try:
        return {owner: sid for sid, owner in conn.execute("SELECT id, owner FROM embedding_spaces")}
    finally:
        conn.close()


def _bystanders_intact(p: Planted) -> None:
    with recallbox.open(p.db) as box:
        for i in range(4):
            assert len(box.messages(f"bystander-{i}")) == BYSTANDER_MESSAGES // 4
        assert [h.id for h in box.search("bystander 17", limit=1)]
        assert "Keep replicas warm" in box.recall_context("replicas warm", "other.md").content
        assert box.doctor().healthy
    assert [x for x in structure_problems(p.db) if not x.startswith("notes:")] == []


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
        reports = [
            box.purge(channel=p.imported),
            box.purge(p.note_id),
            box.purge(p.note_tool_id),
            box.purge(box.messages("notes")[0].id),  # the tool result
            box.purge(key=p.memory_key),
            box.purge(source="secrets.md"),
        ]
        assert all(r.wal_truncated for r in reports)
        assert reports[0].threads == 1 and reports[0].chunks >= 1
        assert reports[0].messages == BYSTANDER_TURNS  # 4 records per turn
        assert [r.messages for r in reports[1:4]] == [1, 1, 1]
        assert reports[1].hits == 1  # the drill of read_message
        assert reports[4].memories == 1 and reports[4].hits == 2  # the recall's hit and drill
        assert reports[5].sections == 2  # the vault and the bystander section
        assert sum(r.vectors for r in reports) >= 4
        assert [m.content for m in box.messages("notes")] == ["a bystander note after the secrets"]
        with pytest.raises(NotFound):
            box.thread(p.imported)
        assert box.search_memory(p.canaries["import_text"]).count("[message_id=") == 0
    assert p.scan() == {}
    _bystanders_intact(p)


def test_redact_of_every_kind_leaves_no_byte_of_a_canary(planted: Planted) -> None:
    p = planted
    c = p.canaries
    with recallbox.open(p.db, embedder="hash") as box:
        anywhere = re.compile("cnry(import|note)_?[a-z]*[0-9a-f]{16}")
        assert box.redact(None, anywhere, channel=p.imported) == 2  # a content, a tool input
        assert box.redact(None, re.compile(r"cnrynote_\w+"), channel="notes") == 4
        assert box.redact(None, c["memory_title"], key=p.memory_key) == 1
        assert box.redact(None, c["memory_body"], key=p.memory_key) == 1
        assert (
            box.redact(None, re.compile(r"cnrydoc_\w+"), source="ops/secrets.md") == 3
        )  # heading twice, body
        assert box.redact(None, c["query"], key=p.memory_key) == 1  # the hit-log's query
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
    _bystanders_intact(p)


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
        with pytest.raises(InvalidArgument, match="tool outputs"):
            box.purge(handle="h_1")
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
