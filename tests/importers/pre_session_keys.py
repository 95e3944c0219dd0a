"""The transcripts behind ``fixtures/pre-session-keys/recall.sqlite``: a database written by the
release before threads were keyed by the session id inside the file (#17 item 9), which named a
Claude Code thread after its file. :func:`write_transcripts` lays the files out under a
directory; the same function made the database (``fixtures/pre-session-keys/make_db.py``).

* ``-home-dev-app/``: the bundled session (file stem = session id) with its sub-agents;
* ``-home-dev-app/copy.jsonl``: a copy of that session under another name (a second thread
  holding every message again in the old release);
* ``-moved/moved.jsonl`` and ``-moved/moved/subagents/agent-b7e1.jsonl``: the session and one
  sub-agent copied under another name (a stem-named thread with a stem-named sub-thread);
* ``-notes/notes.jsonl``: a session seen only under another name (renamed, nothing merged);
* ``-notes/loose.jsonl``: records without a session id (stays named by its stem).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
OLD_DB = FIXTURES / "pre-session-keys" / "recall.sqlite"
SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
NOTES_SESSION = "0b5e55ed-0000-4000-8000-00000000a0b5"


def _record(uuid: str, parent: str | None, text: str, session: str | None, at: str) -> str:
    data: dict[str, object] = {
        "type": "user",
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": at,
        "message": {"role": "user", "content": text},
    }
    if session is not None:
        data["sessionId"] = session
    return json.dumps(data) + "\n"


def write_transcripts(root: Path) -> Path:
    """Write the transcript tree under ``root``; returns its ``projects`` directory."""
    projects = root / "projects"
    app = projects / "-home-dev-app"
    shutil.copytree(FIXTURES / "claude-code" / "projects" / "-home-dev-app", app)
    shutil.copyfile(app / f"{SESSION}.jsonl", app / "copy.jsonl")
    moved = projects / "-moved"
    (moved / "moved" / "subagents").mkdir(parents=True)
    shutil.copyfile(app / f"{SESSION}.jsonl", moved / "moved.jsonl")
    shutil.copyfile(
        app / SESSION / "subagents" / "agent-b7e1.jsonl",
        moved / "moved" / "subagents" / "agent-b7e1.jsonl",
    )
    notes = projects / "-notes"
    notes.mkdir()
    (notes / "notes.jsonl").write_text(
        _record("n1", None, "remember the vault rotation", NOTES_SESSION, "2025-02-01T09:00:00Z")
        + _record("n2", "n1", "rotation done on vault-3", NOTES_SESSION, "2025-02-01T09:05:00Z"),
        encoding="utf-8",
    )
    (notes / "loose.jsonl").write_text(
        _record("l1", None, "a note without a session id", None, "2025-01-15T08:00:00Z"),
        encoding="utf-8",
    )
    return projects
