"""Planting secrets for the purge/redact byte scans (#15 item 6, DESIGN §7a).

:func:`plant` builds a store with canaries in every place a secret can land — an imported
transcript (content, tool-call input, transcript chunks, import ledger), appended messages
(content, tool-call argument leaves, metadata, a tool result), a memory entry (title, body), a
knowledge section (heading, body), a hit-log query text, and the vectors of all of them — among
bystander rows. :meth:`Planted.scan` reads every byte of the database file, its ``-wal``, its
``-shm`` and any journal and says which canary (or canary row's vector) it still holds.
"""

from __future__ import annotations

import json
import random
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import apsw

import recallbox
from reliability.harness.corpus import claude_records, sentence, write_lines
from reliability.harness.invariants import structure_problems

BYSTANDER_TURNS = 40
BYSTANDER_MESSAGES = 120
OUTPUT_LINES = 400
"""Lines of the stored tool output (long enough to be elided behind a handle)."""


def canary(kind: str) -> str:
    return f"cnry{kind}{secrets.token_hex(8)}"


@dataclass
class Planted:
    root: Path
    db: Path
    canaries: dict[str, str]
    bystanders: int = BYSTANDER_MESSAGES
    imported: str = ""  # the channel of the imported transcript
    note_id: str = ""  # an appended message holding canaries
    note_tool_id: str = ""  # the message of the tool call holding one
    memory_key: str = ""
    handle: str = ""  # a stored tool output of "notes" holding one
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


def plant(root: Path, bystanders: int = BYSTANDER_MESSAGES) -> Planted:
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
        "note_output",
        "recall_query",
        "code_doc",
        "code_body",
    ]
    p = Planted(root, root / "s.db", {k: canary(k) for k in kinds}, bystanders)
    c = p.canaries
    transcript = root / "session-a.jsonl"
    _transcript(transcript, "session-a", c)
    with recallbox.open(p.db, embedder="hash") as box:
        report = box.import_transcripts("claude-code", [transcript])
        assert report.added == BYSTANDER_TURNS
        (p.imported,) = [t.channel for t in box.threads()]
        for i in range(bystanders):
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
        lines = [f"step {i}: ok" for i in range(OUTPUT_LINES)]
        lines[OUTPUT_LINES // 2] = f"error: token {c['note_output']} rejected"
        stored = box.store_tool_output("\n".join(lines), channel="notes", tool="bash")
        assert stored.handle is not None
        p.handle = stored.handle
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
        repo = root / "repo"
        repo.mkdir()
        (repo / "vault_client.py").write_text(
            f'def connect_vault():\n    """Uses {c["code_doc"]}."""\n'
            f'    return "{c["code_body"]}"\n',
            encoding="utf-8",
        )
        (repo / "replicas.py").write_text(
            'def warm_replicas():\n    """Keep replicas warm."""\n    return 1\n', encoding="utf-8"
        )
        assert box.index_code(repo, "app").symbols >= 2
        result = box.recall_context(f"rotate key {c['query']} vault", "MEMORY.md")
        assert result.drilled == (p.memory_key,)
        box.read_message(p.note_id)
        found = box.recall(f"staging password {c['recall_query']}", domains=["sessions"])
        assert p.note_id in found.render()
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
    return sentence(random.Random(i))


def _spaces(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db))
    try:
        return {owner: sid for sid, owner in conn.execute("SELECT id, owner FROM embedding_spaces")}
    finally:
        conn.close()


def bystander_problems(p: Planted) -> list[str]:
    """What is wrong with the rows an erasure must leave alone (``[]``: nothing)."""
    problems: list[str] = []
    with recallbox.open(p.db) as box:
        for i in range(4):
            count = len(box.messages(f"bystander-{i}"))
            if count != len(range(i, p.bystanders, 4)):
                problems.append(f"bystander-{i}: {count} messages")
        if not box.search("bystander 17", limit=1):
            problems.append("a bystander message is no longer found")
        if "Keep replicas warm" not in box.recall_context("replicas warm", "other.md").content:
            problems.append("the bystander document is no longer recalled")
        if not box.search("warm_replicas", domain="code", limit=1, allow_embed=False):
            problems.append("the bystander code symbol is no longer found")
        if not box.doctor().healthy:
            problems.append("doctor is unhealthy")
    return problems + [x for x in structure_problems(p.db) if not x.startswith("notes:")]


def purge_everything(p: Planted, box: recallbox.Box) -> list[recallbox.PurgeReport]:
    """Purge every planted secret: the imported thread, the three notes, the memory entry and
    the document (by basename)."""
    reports = [box.purge(channel=p.imported), box.purge(p.note_id), box.purge(p.note_tool_id)]
    reports.append(box.purge(box.messages("notes")[0].id))  # the tool result
    reports.append(box.purge(key=p.memory_key))
    reports.append(box.purge(source=p.document.rsplit("/", 1)[-1]))
    reports.append(box.purge(handle=p.handle))
    reports.append(box.purge(source="vault_client.py"))
    return reports


def redact_everything(p: Planted, box: recallbox.Box) -> list[int]:
    """Redact every planted secret, by regex and by literal; the replacements of each call."""
    c = p.canaries
    return [
        box.redact(None, re.compile(r"cnryimport_\w+"), channel=p.imported),
        box.redact(None, re.compile(r"cnrynote_\w+"), channel="notes"),
        box.redact(None, c["memory_title"], key=p.memory_key),
        box.redact(None, c["memory_body"], key=p.memory_key),
        box.redact(None, re.compile(r"cnrydoc_\w+"), source=p.document),
        box.redact(None, c["query"], key=p.memory_key),  # the hit-log's query text
        box.redact(None, c["recall_query"], handle=p.handle),  # recall's rows: one per hit
        box.redact(None, re.compile(r"cnrycode_\w+"), source="vault_client.py"),
    ]
