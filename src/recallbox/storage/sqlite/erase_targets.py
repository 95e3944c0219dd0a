"""Which rows a purge or a redaction reaches on SQLite (shared by ``secrets.py`` and
``redact.py``)."""

from __future__ import annotations

from typing import Any

import apsw

from recallbox.storage.secrets import SecretTarget

_Message = tuple[int, str, str, int]  # rowid, uid, channel, seq


def target_messages(conn: apsw.Connection, target: SecretTarget) -> list[_Message]:
    base = (
        "SELECT m.id, m.uid, t.channel, m.seq FROM messages m "
        "JOIN threads t ON t.id = m.thread_id WHERE "
    )
    rows: list[Any] = []
    if target.message_id is not None:
        rows += conn.execute(base + "m.uid = ?", (target.message_id,)).fetchall()
    if target.channel is not None:
        rows += conn.execute(base + "t.channel = ?", (target.channel,)).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in {tuple(r) for r in rows}]


def source_clause(source: str) -> tuple[str, tuple[object, ...]]:
    """Sections of the documents ``source`` names, matched as an exclusion matches them."""
    if "/" not in source:
        return "source_name = ?", (source,)
    pattern = "%/" + source.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "(source_path = ? OR source_path LIKE ? ESCAPE '\\')", (source, pattern)


def code_file_clause(source: str) -> tuple[str, tuple[object, ...]]:
    """Code files ``source`` names, matched as an exclusion matches them (a path: equal)."""
    return ("f.path_norm = ?" if "/" in source else "f.name_norm = ?"), (source,)
