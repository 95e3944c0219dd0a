"""Redaction on PostgreSQL (DESIGN §7a): every stored text of a target rewritten in place, with
its derived columns (argument text, content hash, keyword document) — the SQLite twin's rules
(``storage/sqlite/redact.py``); what a rewrite does to JSON is ``storage/redaction.py``'s.
"""

from __future__ import annotations

import json
from typing import Any

from recallbox.storage.codecs import content_hash, dump_json, storable
from recallbox.storage.postgres.connection import Connection
from recallbox.storage.postgres.keyword import KeywordDocument
from recallbox.storage.postgres.keyword_sql import KeywordCorpus
from recallbox.storage.postgres.keyword_write import document_of, put_overflow
from recallbox.storage.postgres.rows import raw_bytes, raw_text
from recallbox.storage.postgres.schema import CODE_KEYWORDS, MESSAGES_KEYWORDS, SECTIONS_KEYWORDS
from recallbox.storage.redaction import rewrite_calls, rewrite_leaves
from recallbox.storage.secrets import RedactedRows, SecretTarget, TextRewrite
from recallbox.text.cjk import segment
from recallbox.text.identifiers import segment_code_text

_Message = tuple[int, str, str, int]  # rowid, uid, channel, seq


def target_messages(conn: Connection, target: SecretTarget) -> list[_Message]:
    """The messages a purge or redaction of ``target`` reaches."""
    base = (
        "SELECT m.id, m.uid, t.channel, m.seq FROM messages m "
        "JOIN threads t ON t.id = m.thread_id WHERE "
    )
    rows: list[Any] = []
    if target.message_id is not None and storable(target.message_id):
        rows += conn.execute(base + "m.uid = %s", (target.message_id,)).fetchall()
    if target.channel is not None and storable(target.channel):
        rows += conn.execute(base + "t.channel = %s", (target.channel,)).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2]), int(r[3])) for r in {tuple(r) for r in rows}]


def source_clause(source: str) -> tuple[str, tuple[object, ...]]:
    """Sections of the documents ``source`` names, matched as an exclusion matches them."""
    if "/" not in source:
        return "source_name = %s", (source,)
    return "(source_path = %s OR right(source_path, length(%s) + 1) = '/' || %s)", (
        source,
        source,
        source,
    )


def code_file_clause(source: str) -> tuple[str, tuple[object, ...]]:
    """Code files ``source`` names, matched as an exclusion matches them (a path: equal)."""
    return ("f.path_norm = %s" if "/" in source else "f.name_norm = %s"), (source,)


def _set_document(
    conn: Connection, corpus: KeywordCorpus, rowid: int, scope: int, doc: KeywordDocument
) -> None:
    conn.execute(
        f"UPDATE {corpus.table} SET fts = %s::tsvector, fts_len = %s WHERE id = %s",
        (doc.tsvector, doc.length, rowid),
    )
    put_overflow(conn, corpus, [(rowid, scope, doc)], replace=True)


def _redact_code(conn: Connection, source: str, rewrite: TextRewrite) -> tuple[int, int]:
    """The signature, docstring and snippet of every symbol of the code files ``source`` names."""
    where, params = code_file_clause(source)
    rows: list[Any] = conn.execute(
        "SELECT s.id, s.scope_id, s.qualname, s.signature, s.doc, s.snippet FROM code_symbols s "
        f"JOIN code_files f ON f.id = s.file_id WHERE {where}",
        params,
    ).fetchall()
    replacements = rewritten = 0
    for rowid, scope_id, qualname, *texts in rows:
        new = [rewrite(str(text)) for text in texts]
        count = sum(n for _, n in new)
        if not count:
            continue
        signature, doc, snippet = (text for text, _ in new)
        seg = segment(segment_code_text(f"{qualname} {signature} {doc}"))
        conn.execute(
            "UPDATE code_symbols SET signature = %s, doc = %s, snippet = %s, content_seg = %s, "
            "content_hash = %s WHERE id = %s",
            (signature, doc, snippet, seg, content_hash(seg, snippet), rowid),
        )
        _set_document(
            conn, CODE_KEYWORDS, int(rowid), int(scope_id), document_of(seg, segmented=True)
        )
        replacements += count
        rewritten += 1
    return replacements, rewritten


def _redact_message(conn: Connection, rowid: int, rewrite: TextRewrite) -> int:
    row = conn.execute(
        "SELECT content, raw_content, tool_calls, tool_calls_raw, args_text, metadata, thread_id "
        "FROM messages WHERE id = %s",
        (rowid,),
    ).fetchone()
    assert row is not None
    content, n_content = rewrite(str(row[0]))
    raw: str | None = None
    n_raw = 0
    if row[1] is not None:
        raw, n_raw = rewrite(raw_text(row[1]) or "")
    calls, n_calls = rewrite_calls(json.loads(row[2]) if row[2] is not None else None, rewrite)
    calls_raw, n_calls_raw = rewrite(str(row[3])) if row[3] is not None else (None, 0)
    args_text, n_args = rewrite(str(row[4]))
    metadata, n_meta = rewrite_leaves(json.loads(row[5]), rewrite)
    count = n_content + n_raw + n_calls + n_calls_raw + n_meta
    if count == 0 and n_args == 0:
        return 0
    conn.execute(
        "UPDATE messages SET content = %s, raw_content = %s, tool_calls = %s, "
        "tool_calls_raw = %s, args_text = %s, metadata = %s, content_hash = %s WHERE id = %s",
        (
            content,
            raw_bytes(raw),
            dump_json(calls) if calls is not None else None,
            calls_raw,
            args_text,
            dump_json(metadata),
            content_hash(content, args_text),
            rowid,
        ),
    )
    _set_document(conn, MESSAGES_KEYWORDS, rowid, int(row[6]), document_of(content))
    return max(count, 1)


def _redact_sections(conn: Connection, source: str, rewrite: TextRewrite) -> tuple[int, int]:
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
            "UPDATE knowledge_sections SET heading = %s, content = %s, content_hash = %s "
            "WHERE id = %s",
            (new_heading, content, content_hash(content, new_heading or ""), rowid),
        )
        doc = document_of("" if removed else content)
        _set_document(conn, SECTIONS_KEYWORDS, int(rowid), 0, doc)
        replacements += n_heading + n_content
        rewritten += 1
    return replacements, rewritten


def _redact_outputs(conn: Connection, target: SecretTarget, rewrite: TextRewrite) -> int:
    """Stored tool outputs: the one under ``handle`` and every one of ``channel``."""
    rows: list[Any] = []
    if target.handle is not None and storable(target.handle):
        rows += conn.execute(
            "SELECT id, content FROM tool_outputs WHERE handle = %s", (target.handle,)
        ).fetchall()
    if target.channel is not None and storable(target.channel):
        rows += conn.execute(
            "SELECT o.id, o.content FROM tool_outputs o JOIN threads t ON t.id = o.thread_id "
            "WHERE t.channel = %s",
            (target.channel,),
        ).fetchall()
    count = 0
    for rowid, text in {int(r[0]): str(r[1]) for r in rows}.items():
        new, n = rewrite(text)
        if n:
            conn.execute(
                "UPDATE tool_outputs SET content = %s, content_hash = %s WHERE id = %s",
                (new, content_hash(new, ""), rowid),
            )
            count += n
    return count


def _redact_queries(conn: Connection, rewrite: TextRewrite) -> int:
    count = 0
    rows = conn.execute("SELECT id, query FROM hit_log WHERE query IS NOT NULL").fetchall()
    for rowid, query in rows:
        new, n = rewrite(str(query))
        if n:
            conn.execute("UPDATE hit_log SET query = %s WHERE id = %s", (new, rowid))
            count += n
    return count


def redact(conn: Connection, target: SecretTarget, rewrite: TextRewrite) -> RedactedRows:
    """:meth:`SecretStore.redact_rows` inside an open write transaction."""
    replacements = rows = 0
    rechunk: dict[str, int] = {}
    for rowid, _, channel, seq in target_messages(conn, target):
        n = _redact_message(conn, rowid, rewrite)
        if n:
            replacements += n
            rows += 1
            rechunk[channel] = min(seq, rechunk.get(channel, seq))
    if target.source is not None and storable(target.source):
        for redact_source in (_redact_sections, _redact_code):
            n, rewritten = redact_source(conn, target.source, rewrite)
            replacements += n
            rows += rewritten
    replacements += _redact_outputs(conn, target, rewrite)
    replacements += _redact_queries(conn, rewrite)
    return RedactedRows(
        replacements=replacements, rows=rows, rechunk=tuple(sorted(rechunk.items()))
    )
