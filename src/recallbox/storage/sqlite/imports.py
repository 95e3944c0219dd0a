"""The transcript import ledger on SQLite (migration 3; mirrors: the migration after 4):
files, record keys, branch forests.

The chunks built from imported threads are in ``chunks.py``.

Mixed into :class:`~recallbox.storage.sqlite.store.SQLiteStore`; every method runs on the
calling thread's connection and joins the caller's ``store.transaction()``.

Branch resolution (which nodes of a tree are superseded, walking only what a batch can
change) is in ``branches.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime

from recallbox.storage.row_maps import (
    IMPORT_FILE_COLUMNS,
    IMPORT_NODE_COLUMNS,
    IMPORT_RECORD_COLUMNS,
    import_file_row,
    import_node_row,
    import_record_row,
)
from recallbox.storage.sqlite.branches import resolve_tree
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.rows import (
    content_hash,
    format_time,
    stored_metadata,
    text_columns,
)
from recallbox.storage.values import ImportFile, ImportNode, ImportRecord, NewMessage


class ImportLedgerMixin:
    """:class:`~recallbox.storage.base.ImportLedger` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    # -- files -------------------------------------------------------------------------------
    def import_file(self, path: str) -> ImportFile | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_FILE_COLUMNS} FROM import_files WHERE path = ?", (path,)
            ).fetchone()
        return import_file_row(row) if row else None

    def import_files_with_identity(self, identity: str) -> list[ImportFile]:
        with self.pool.reading() as conn:
            rows = conn.execute(
                f"SELECT {IMPORT_FILE_COLUMNS} FROM import_files WHERE identity = ? ORDER BY id",
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
                assignments = ", ".join(f"{name} = :{name}" for name in names)
                conn.execute(
                    f"UPDATE import_files SET {assignments}, synced_at = datetime('now') "
                    "WHERE id = :id",
                    {**values, "id": file.id},
                )
                return file
            row = conn.execute(
                f"INSERT INTO import_files ({', '.join(names)}, synced_at) "
                f"VALUES ({', '.join(':' + n for n in names)}, datetime('now')) RETURNING id",
                values,
            ).fetchone()
        assert row is not None
        return replace(file, id=int(row[0]))

    # -- records -----------------------------------------------------------------------------
    def import_record(self, file_id: int, key: str) -> ImportRecord | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records WHERE file_id = ? AND record_key = ?",
                (file_id, key),
            ).fetchone()
        return import_record_row(row) if row else None

    def channel_import_record(
        self, channel: str, key: str, *, other_than: int
    ) -> ImportRecord | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records INDEXED BY import_records_by_channel "
                "WHERE channel = ? AND record_key = ? AND file_id != ? AND mirror = 0 "
                "ORDER BY file_id LIMIT 1",
                (channel, key, other_than),
            ).fetchone()
        return import_record_row(row) if row else None

    def put_import_records(self, file_id: int, records: Sequence[ImportRecord]) -> None:
        with self.pool.transaction() as conn:
            conn.executemany(
                "INSERT INTO import_records (file_id, record_key, channel, message_uid, node, "
                "content_hash, sync_id, mirror) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (file_id, record_key) DO UPDATE SET channel = excluded.channel, "
                "message_uid = excluded.message_uid, node = excluded.node, "
                "content_hash = excluded.content_hash, sync_id = excluded.sync_id, "
                "mirror = excluded.mirror",
                [
                    (
                        file_id,
                        r.key,
                        r.channel,
                        r.message_id,
                        r.node,
                        r.content_hash,
                        r.sync_id,
                        int(r.mirror),
                    )
                    for r in records
                ],
            )

    def vanished_import_records(self, file_id: int, sync_id: int) -> Iterator[ImportRecord]:
        with self.pool.reading() as conn:
            cursor = conn.execute(
                f"SELECT {IMPORT_RECORD_COLUMNS} FROM import_records WHERE file_id = ? AND sync_id < ?",
                (file_id, sync_id),
            )
            for row in cursor:
                yield import_record_row(row)

    # -- branch forest -----------------------------------------------------------------------
    def import_node(self, file_id: int, uuid: str) -> ImportNode | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                f"SELECT {IMPORT_NODE_COLUMNS} FROM import_nodes WHERE file_id = ? AND uuid = ?",
                (file_id, uuid),
            ).fetchone()
        return import_node_row(row) if row else None

    def add_import_nodes(self, file_id: int, nodes: Sequence[ImportNode]) -> None:
        with self.pool.transaction() as conn:
            conn.executemany(
                "INSERT INTO import_nodes (file_id, uuid, parent, root, side, conversational, "
                "line, superseded) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (file_id, uuid) DO NOTHING",
                [
                    (
                        file_id,
                        n.uuid,
                        n.parent,
                        n.root,
                        int(n.side),
                        int(n.conversational),
                        n.line,
                        int(n.superseded),
                    )
                    for n in nodes
                ],
            )

    def last_conversational_node(self, file_id: int, root: str, side: bool) -> str | None:
        with self.pool.reading() as conn:
            row = conn.execute(
                "SELECT uuid FROM import_nodes WHERE file_id = ? AND side = ? AND root = ? "
                "AND conversational = 1 ORDER BY line DESC LIMIT 1",
                (file_id, int(side), root),
            ).fetchone()
        return str(row[0]) if row else None

    def reset_import_nodes(self, file_id: int) -> int:
        with self.pool.transaction() as conn:
            rows = conn.execute(
                "DELETE FROM import_nodes WHERE file_id = ? RETURNING 1", (file_id,)
            ).fetchall()
        return len(rows)

    def resolve_branches(
        self, file_id: int, root: str, side: bool, *, full: bool = False, since_line: int = 0
    ) -> list[tuple[str, bool]]:
        changes: list[tuple[str, bool]] = []
        with self.pool.transaction() as conn:
            flipped = resolve_tree(conn, file_id, root, side, full=full, since_line=since_line)
            for uuid, sup in flipped:
                conn.execute(
                    "UPDATE import_nodes SET superseded = ? WHERE file_id = ? AND uuid = ?",
                    (sup, file_id, uuid),
                )
                rows = conn.execute(
                    # INDEXED BY: the planner otherwise reads every record of the file through
                    # the primary key, once per changed node (quadratic over a long session)
                    "SELECT r.message_uid, m.superseded_by IS NOT NULL FROM import_records r "
                    "INDEXED BY import_records_by_node JOIN messages m ON m.uid = r.message_uid "
                    "WHERE r.file_id = ? AND r.node = ? AND r.mirror = 0",
                    (file_id, uuid),
                ).fetchall()
                changes.extend((str(uid), bool(sup)) for uid, current in rows if current != sup)
        return changes

    # -- messages ----------------------------------------------------------------------------
    def next_live_message(self, message_id: str) -> str:
        live = "m2.superseded_by IS NULL AND m2.pending = 0 AND m2.uid != m1.uid"
        with self.pool.reading() as conn:
            for order in (
                "m2.seq > m1.seq ORDER BY m2.seq",
                "m2.seq < m1.seq ORDER BY m2.seq DESC",
            ):
                row = conn.execute(
                    "SELECT m2.uid FROM messages m1 JOIN messages m2 ON m2.thread_id = m1.thread_id "
                    f"WHERE m1.uid = ? AND {live} AND {order} LIMIT 1",
                    (message_id,),
                ).fetchone()
                if row is not None:
                    return str(row[0])
        return message_id

    def extend_message(self, message_id: str, row: NewMessage) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "UPDATE messages SET content = ?, content_seg = ?, args_text = ?, raw_content = ?, "
                "tool_calls = ?, tool_calls_raw = ?, metadata = ?, content_hash = ? WHERE uid = ?",
                (
                    *text_columns(row),
                    stored_metadata(row),
                    content_hash(row.content, row.args_text),
                    message_id,
                ),
            )

    def set_thread_times(
        self, channel: str, first: datetime, last: datetime, *, replace_last: bool
    ) -> None:
        with self.pool.transaction() as conn:
            conn.execute(
                "UPDATE threads SET created_at = min(created_at, :first), last_activity = "
                "CASE WHEN :replace THEN :last ELSE max(last_activity, :last) END "
                "WHERE channel = :channel",
                {
                    "first": format_time(first),
                    "last": format_time(last),
                    "replace": int(replace_last),
                    "channel": channel,
                },
            )
            conn.execute(
                "UPDATE generations SET opened_at = min(opened_at, ?) WHERE number = 1 AND "
                "thread_id = (SELECT id FROM threads WHERE channel = ?)",
                (format_time(first), channel),
            )
