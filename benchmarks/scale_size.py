"""Where the bytes of a scale database go (#14 item 3): file size and bytes per message per
index, from SQLite's ``dbstat`` (every page of every table and index, overflow pages included).

Groups (by table name):

* ``content`` — the messages themselves (the ``messages`` table and its indexes, threads,
  generations);
* ``fts`` — the ranked keyword index (``messages_fts``: porter-stemmed words, BM25);
* ``literal`` — the literal index of thread search (``messages_literal``: trigrams with
  positions) and its backlog; ``words`` — its word index (``messages_words``);
* ``vectors`` — the embedding vectors (sqlite-vec ``vec0`` tables) and their bookkeeping;
* ``transcripts`` — transcript chunks and their index (imported threads only);
* ``free`` — free pages (reused before the file grows); ``other`` — everything else.

``text_bytes_per_message`` is the UTF-8 text a message carries (content, argument text and
the CJK-segmented copy where it differs): the floor under ``content``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw

# table-name prefix -> group, first match wins
GROUPS = (
    ("messages_fts", "fts"),
    ("messages_trgm", "literal"),
    ("messages_literal", "literal"),
    ("messages_words", "words"),
    ("literal_backlog", "literal"),
    ("vec_", "vectors"),
    ("embedding", "vectors"),
    ("transcript_chunks", "transcripts"),
    ("messages", "content"),
    ("sqlite_autoindex_messages", "content"),
    ("threads", "content"),
    ("sqlite_autoindex_threads", "content"),
    ("generations", "content"),
    ("sqlite_autoindex_generations", "content"),
)


def group_of(table: str) -> str:
    """The group of a ``dbstat`` table or index name."""
    return next((group for prefix, group in GROUPS if table.startswith(prefix)), "other")


def storage(db: Path, messages: int) -> dict[str, Any]:
    """File size and bytes per message per index (see the module docs)."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        tables = {
            str(name): int(size)
            for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name")
        }
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        free = int(conn.execute("PRAGMA freelist_count").fetchone()[0]) * page_size
        text = conn.execute(
            "SELECT sum(octet_length(content) + octet_length(args_text) + "
            "octet_length(content_seg)) FROM messages"
        ).fetchone()[0]
    finally:
        conn.close()
    groups: dict[str, int] = {"free": free}
    for name, size in tables.items():
        groups[group_of(name)] = groups.get(group_of(name), 0) + size
    file_bytes = db.stat().st_size
    return {
        "file_bytes": file_bytes,
        "bytes_per_message": round(file_bytes / messages, 1),
        "text_bytes_per_message": round(int(text or 0) / messages, 1),
        "bytes_per_message_by_index": {
            group: round(size / messages, 1) for group, size in sorted(groups.items())
        },
        "tables_bytes": dict(sorted(tables.items(), key=lambda kv: -kv[1])),
    }
