"""Redaction on SQLite (DESIGN §7a): every stored text of a target rewritten in place, its
derived columns (segmented text, argument text, content hash) with it. The erasure of the old
bytes is ``secrets.py``'s (``secure_delete``, ``optimize``, ``VACUUM``, the WAL truncated).
"""

from __future__ import annotations

import json
from typing import Any

import apsw

from recallbox.storage.redaction import rewrite_calls as _rewrite_calls
from recallbox.storage.redaction import rewrite_leaves as _rewrite_leaves
from recallbox.storage.secrets import RedactedRows, SecretTarget, TextRewrite
from recallbox.storage.sqlite.erase_targets import code_file_clause, source_clause, target_messages
from recallbox.storage.sqlite.rows import content_hash, dump_json
from recallbox.text.cjk import segment
from recallbox.text.identifiers import segment_code_text


def _redact_code(conn: apsw.Connection, source: str, rewrite: TextRewrite) -> tuple[int, int]:
    """The signature, docstring and snippet of every symbol of the code files ``source`` names
    (their search text is rebuilt from the rewritten parts until the next ``index_code``)."""
    where, params = code_file_clause(source)
    rows: list[Any] = conn.execute(
        "SELECT s.id, s.qualname, s.signature, s.doc, s.snippet FROM code_symbols s "
        f"JOIN code_files f ON f.id = s.file_id WHERE {where}",
        params,
    ).fetchall()
    replacements = rewritten = 0
    for rowid, qualname, *texts in rows:
        new = [rewrite(str(text)) for text in texts]
        count = sum(n for _, n in new)
        if not count:
            continue
        signature, doc, snippet = (text for text, _ in new)
        seg = segment(segment_code_text(f"{qualname} {signature} {doc}"))
        conn.execute(
            "UPDATE code_symbols SET signature = ?, doc = ?, snippet = ?, content_seg = ?, "
            "content_hash = ? WHERE id = ?",
            (signature, doc, snippet, seg, content_hash(seg, snippet), rowid),
        )
        replacements += count
        rewritten += 1
    return replacements, rewritten




def _redact_message(conn: apsw.Connection, rowid: int, rewrite: TextRewrite) -> int:
    row = conn.execute(
        "SELECT content, raw_content, tool_calls, tool_calls_raw, args_text, metadata "
        "FROM messages WHERE id = ?",
        (rowid,),
    ).fetchone()
    assert row is not None
    content, n_content = rewrite(str(row[0]))
    raw: str | None = None
    n_raw = 0
    if row[1] is not None:
        raw, n_raw = rewrite(bytes(row[1]).decode("utf-8", "surrogatepass"))
    calls, n_calls = _rewrite_calls(json.loads(row[2]) if row[2] is not None else None, rewrite)
    calls_raw, n_calls_raw = rewrite(str(row[3])) if row[3] is not None else (None, 0)
    args_text, n_args = rewrite(str(row[4]))
    metadata, n_meta = _rewrite_leaves(json.loads(row[5]), rewrite)
    count = n_content + n_raw + n_calls + n_calls_raw + n_meta
    if count == 0 and n_args == 0:
        return 0
    conn.execute(
        "UPDATE messages SET content = ?, content_seg = ?, raw_content = ?, tool_calls = ?, "
        "tool_calls_raw = ?, args_text = ?, metadata = ?, content_hash = ? WHERE id = ?",
        (
            content,
            segment(content),
            raw.encode("utf-8", "surrogatepass") if raw is not None else None,
            dump_json(calls) if calls is not None else None,
            calls_raw,
            args_text,
            dump_json(metadata),
            content_hash(content, args_text),
            rowid,
        ),
    )
    return max(count, 1)


def _redact_sections(conn: apsw.Connection, source: str, rewrite: TextRewrite) -> tuple[int, int]:
    where, params = source_clause(source)
    rows: list[Any] = conn.execute(
        f"SELECT id, heading, content, removed FROM knowledge_sections WHERE {where}", params
    ).fetchall()
    replacements = rewritten = 0
    for rowid, heading, text, removed in rows:
        new_heading, n_heading = rewrite(str(heading)) if heading is not None else (None, 0)
        content, n_content = rewrite(str(text))
        if n_heading + n_content == 0:
            continue
        conn.execute(
            "UPDATE knowledge_sections SET heading = ?, content = ?, content_seg = ?, "
            "content_hash = ? WHERE id = ?",
            (
                new_heading,
                content,
                "" if removed else segment(content),
                content_hash(content, new_heading or ""),
                rowid,
            ),
        )
        replacements += n_heading + n_content
        rewritten += 1
    return replacements, rewritten


def _redact_outputs(conn: apsw.Connection, target: SecretTarget, rewrite: TextRewrite) -> int:
    """Stored tool outputs: the one under ``handle`` and every one of ``channel``."""
    rows: list[Any] = []
    if target.handle is not None:
        rows += conn.execute(
            "SELECT id, content FROM tool_outputs WHERE handle = ?", (target.handle,)
        ).fetchall()
    if target.channel is not None:
        rows += conn.execute(
            "SELECT o.id, o.content FROM tool_outputs o JOIN threads t ON t.id = o.thread_id "
            "WHERE t.channel = ?",
            (target.channel,),
        ).fetchall()
    count = 0
    for rowid, text in {int(r[0]): str(r[1]) for r in rows}.items():
        new, n = rewrite(text)
        if n:
            conn.execute(
                "UPDATE tool_outputs SET content = ?, content_hash = ? WHERE id = ?",
                (new, content_hash(new, ""), rowid),
            )
            count += n
    return count


def _redact_queries(conn: apsw.Connection, rewrite: TextRewrite) -> int:
    count = 0
    for rowid, query in conn.execute(
        "SELECT id, query FROM hit_log WHERE query IS NOT NULL"
    ).fetchall():
        new, n = rewrite(str(query))
        if n:
            conn.execute("UPDATE hit_log SET query = ? WHERE id = ?", (new, rowid))
            count += n
    return count


def redact(conn: apsw.Connection, target: SecretTarget, rewrite: TextRewrite) -> RedactedRows:
    """:meth:`SecretStore.redact_rows` inside an open write transaction."""
    replacements = rows = 0
    rechunk: dict[str, int] = {}
    for rowid, _, channel, seq in target_messages(conn, target):
        n = _redact_message(conn, rowid, rewrite)
        if n:
            replacements += n
            rows += 1
            rechunk[channel] = min(seq, rechunk.get(channel, seq))
    if target.source is not None:
        for redact_source in (_redact_sections, _redact_code):
            n, rewritten = redact_source(conn, target.source, rewrite)
            replacements += n
            rows += rewritten
    replacements += _redact_outputs(conn, target, rewrite)
    replacements += _redact_queries(conn, rewrite)
    return RedactedRows(
        replacements=replacements, rows=rows, rechunk=tuple(sorted(rechunk.items()))
    )
