"""The transcript import ledger on PostgreSQL (migrations 3 and 10): files, record keys, branch
forests — the SQLite twin's statements (``storage/sqlite/imports.py`` explains them).

A sync saves a file's records with its cursor inside one write transaction; reading a file's
state there takes the file's advisory lock first (:func:`~recallbox.storage.postgres.connection.
lock_resource`), so two processes syncing the same file take turns as they do on SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from recallbox.storage.codecs import content_hash, storable, stored_metadata
from recallbox.storage.postgres.branches import superseded_changes
from recallbox.storage.postgres.connection import PgPool, lock_resource
from recallbox.storage.postgres.keyword_write import document_of, put_overflow
from recallbox.storage.postgres.rows import raw_bytes, tool_calls_json
from recallbox.storage.postgres.schema import MESSAGES_KEYWORDS
from recallbox.storage.row_maps import (
    IMPORT_FILE_COLUMNS,
    IMPORT_NODE_COLUMNS,
    IMPORT_RECORD_COLUMNS,
    import_file_row,
    import_node_row,
    import_record_row,
)
from recallbox.storage.values import ImportFile, ImportNode, ImportRecord, NewMessage


class ImportLedgerMixin:
    """:class:`~recallbox.storage.base.ImportLedger` for :class:`PostgresStore`."""

    pool: PgPool

    # -- files -------------------------------------------------------------------------------
    def import_file(self, path: str) -> ImportFile | None:
        if not storable(path):
            return None
        with self.pool.reading() as conn:
            if self.pool.in_write():
                lock_resource(conn, "import file", path)
            row = conn.execute(
                f"SELECT {IMPORT_FILE_COLUMNS} FROM import_files WHERE path = %s", (path,)
            ).fetchone()
        return import_file_row(row) if row else None

    def import_files_with_identity(self, identity: str) -> list[ImportFile]:
        if not storable(identity):
            return []
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {IMPORT_FILE_COLUMNS} FROM import_files WHERE identity = %s ORDER BY id",
                (identity,),
            ).fetchall()
        return [import_file_row(row) for row in rows]

    def save_import_file(self, file: ImportFile) -> ImportFile:
        values = {
            "path": file.path,
            "format": file.format,
            "identity": file.identity,
            "size": file.size,
            "mtime_ns": file.mtime_ns,
            "prefix_hash": file.prefix_hash,
            "tail_hash": file.tail_hash,
            "cursor_bytes": file.cursor_bytes,
            "cursor_line": file.cursor_line,
            "sync_count": file.sync_count,
            "state": json.dumps(file.state, ensure_ascii=True),
        }
        names = list(values)
        with self.pool.transaction() as conn:
            if file.id:
                assignments = ", ".join(f"{name} = %({name})s" for name in names)
                conn.execute(
                    f"UPDATE import_files SET {assignments}, synced_at = now() WHERE id = %(id)s",
                    {**values, "id": file.id},
                )
                return file
            row = conn.execute(
                f"INSERT INTO import_files ({', '.join(names)}, synced_at) "
                f"VALUES ({', '.join(f'%({n})s' for n in names)}, now()) RETURNING id",
                values,
            ).fetchone()
        assert row is not None
        return replace(file, id=int(row[0]))

    # -- records -----------------------------------------------------------------------------
    def import_record(self, file_id: int, key: str) -> ImportRecord | None:
        if not storable(key):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records "
                "WHERE file_id = %s AND record_key = %s",
                (file_id, key),
            ).fetchone()
        return import_record_row(row) if row else None

    def channel_import_record(
        self, channel: str, key: str, *, other_than: int
    ) -> ImportRecord | None:
        if not (storable(channel) and storable(key)):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records WHERE channel = %s "
                "AND record_key = %s AND file_id <> %s AND NOT mirror ORDER BY file_id LIMIT 1",
                (channel, key, other_than),
            ).fetchone()
        return import_record_row(row) if row else None

    def put_import_records(self, file_id: int, records: Sequence[ImportRecord]) -> None:
        if not records:
            return
        with self.pool.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO import_records (file_id, record_key, channel, message_uid, node, "
                "content_hash, sync_id, mirror) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (file_id, record_key) DO UPDATE SET channel = excluded.channel, "
                "message_uid = excluded.message_uid, node = excluded.node, "
                "content_hash = excluded.content_hash, sync_id = excluded.sync_id, "
                "mirror = excluded.mirror",
                [
                    (file_id, r.key, r.channel, r.message_id, r.node, r.content_hash, r.sync_id,
                     r.mirror)
                    for r in records
                ],
            )  # fmt: skip

    def vanished_import_records(self, file_id: int, sync_id: int) -> Iterator[ImportRecord]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records WHERE file_id = %s AND sync_id < %s",
                (file_id, sync_id),
            ).fetchall()
        for row in rows:
            yield import_record_row(row)

    # -- branch forest -----------------------------------------------------------------------
    def import_node(self, file_id: int, uuid: str) -> ImportNode | None:
        if not storable(uuid):
            return None
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_NODE_COLUMNS} FROM import_nodes WHERE file_id = %s AND uuid = %s",
                (file_id, uuid),
            ).fetchone()
        return import_node_row(row) if row else None

    def add_import_nodes(self, file_id: int, nodes: Sequence[ImportNode]) -> None:
        if not nodes:
            return
        with self.pool.transaction() as conn, conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO import_nodes (file_id, uuid, parent, root, side, conversational, "
                "line, superseded) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (file_id, uuid) DO NOTHING",
                [
                    (file_id, n.uuid, n.parent, n.root, n.side, n.conversational, n.line,
                     n.superseded)
                    for n in nodes
                ],
            )  # fmt: skip

    def last_conversational_node(self, file_id: int, root: str, side: bool) -> str | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT uuid FROM import_nodes WHERE file_id = %s AND side = %s AND root = %s "
                "AND conversational ORDER BY line DESC LIMIT 1",
                (file_id, bool(side), root),
            ).fetchone()
        return str(row[0]) if row else None

    def reset_import_nodes(self, file_id: int) -> int:
        with self.pool.transaction() as conn:
            rows = conn.execute(
                "DELETE FROM import_nodes WHERE file_id = %s RETURNING 1", (file_id,)
            ).fetchall()
        return len(rows)

    def resolve_branches(
        self, file_id: int, root: str, side: bool, *, full: bool = False, since_line: int = 0
    ) -> list[tuple[str, bool]]:
        # ``since_line`` may only narrow the walk (same answer): the tree is walked in memory
        # here, whole, from one read of its nodes, so nothing is gained by narrowing it.
        del since_line
        changes: list[tuple[str, bool]] = []
        with self.pool.transaction() as conn:
            flipped = superseded_changes(conn, file_id, root, bool(side), full=full)
            if not flipped:
                return changes
            uuids = [uuid for uuid, _ in flipped]
            conn.execute(
                "UPDATE import_nodes n SET superseded = f.sup FROM unnest(%s::text[], "
                "%s::boolean[]) AS f(uuid, sup) WHERE n.file_id = %s AND n.uuid = f.uuid",
                (uuids, [sup for _, sup in flipped], file_id),
            )
            rows = conn.execute(
                "SELECT r.node, r.message_uid, m.superseded_by IS NOT NULL FROM import_records r "
                "JOIN messages m ON m.uid = r.message_uid "
                "WHERE r.file_id = %s AND r.node = ANY(%s::text[]) AND NOT r.mirror",
                (file_id, uuids),
            ).fetchall()
        by_node: dict[str, list[tuple[str, bool]]] = {}
        for node, uid, current in rows:
            by_node.setdefault(str(node), []).append((str(uid), bool(current)))
        for uuid, sup in flipped:
            changes.extend((uid, sup) for uid, current in by_node.get(uuid, ()) if current != sup)
        return changes

    # -- messages ----------------------------------------------------------------------------
    def next_live_message(self, message_id: str) -> str:
        if not storable(message_id):
            return message_id
        live = "m2.superseded_by IS NULL AND NOT m2.pending AND m2.uid <> m1.uid"
        with self.pool.reading() as conn:
            for order in (
                "m2.seq > m1.seq ORDER BY m2.seq",
                "m2.seq < m1.seq ORDER BY m2.seq DESC",
            ):
                row = conn.execute(
                    "SELECT m2.uid FROM messages m1 JOIN messages m2 "
                    f"ON m2.thread_id = m1.thread_id WHERE m1.uid = %s AND {live} AND {order} "
                    "LIMIT 1",
                    (message_id,),
                ).fetchone()
                if row is not None:
                    return str(row[0])
        return message_id

    def extend_message(self, message_id: str, row: NewMessage) -> None:
        doc = document_of(row.content)
        with self.pool.transaction() as conn:
            found = conn.execute(
                "UPDATE messages SET content = %s, args_text = %s, raw_content = %s, "
                "tool_calls = %s, tool_calls_raw = %s, metadata = %s, content_hash = %s, "
                "fts = %s::tsvector, fts_len = %s WHERE uid = %s RETURNING id, thread_id",
                (
                    row.content,
                    row.args_text,
                    raw_bytes(row.raw_content),
                    tool_calls_json(row),
                    row.tool_calls_raw,
                    stored_metadata(row),
                    content_hash(row.content, row.args_text),
                    doc.tsvector,
                    doc.length,
                    message_id,
                ),
            ).fetchone()
            if found is not None:
                put_overflow(
                    conn, MESSAGES_KEYWORDS, [(int(found[0]), int(found[1]), doc)], replace=True
                )

    def set_thread_times(
        self, channel: str, first: datetime, last: datetime, *, replace_last: bool
    ) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "UPDATE threads SET created_at = least(created_at, %(first)s), last_activity = "
                "CASE WHEN %(replace)s THEN %(last)s ELSE greatest(last_activity, %(last)s) END "
                "WHERE channel = %(channel)s",
                {"first": first, "last": last, "replace": bool(replace_last), "channel": channel},
            )
            conn.execute(
                "UPDATE generations SET opened_at = least(opened_at, %s) WHERE number = 1 AND "
                "thread_id = (SELECT id FROM threads WHERE channel = %s)",
                (first, channel),
            )
