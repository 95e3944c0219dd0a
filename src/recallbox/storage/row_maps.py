"""Column lists and row decoders of the tables every backend shares (the same schema on SQLite
and PostgreSQL): the code index's files, edges and symbols, and the import ledger's files,
records and nodes. Backend-neutral (no driver; the column lists are plain ``SELECT`` lists,
valid in both dialects), so the two backends decode a row one way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from recallbox.storage.values import ImportFile, ImportNode, ImportRecord
from recallbox.storage.values_code import CodeEdgeRecord, CodeFile, CodeSymbolRecord

# -- the code index ------------------------------------------------------------------------------

CODE_FILE_COLUMNS = (
    "f.id, f.path, f.path_norm, f.language, f.hash, f.size, f.mtime_ns, f.identity, f.error"
)
CODE_EDGE_COLUMNS = (
    "e.file_id, e.ordinal, e.kind, e.source_id, e.target_name, e.target_last, e.line, "
    "e.target_id, e.confidence"
)
CODE_SYMBOL_FIELDS = (
    "name", "qualname", "kind", "start_line", "end_line", "signature", "doc", "snippet",
    "name_seg", "content_seg", "content_hash",
)  # fmt: skip
CODE_ROW_COLUMNS = (
    "s.symbol_id, s.name, s.qualname, s.kind, f.path, s.start_line, s.end_line, f.language, "
    "s.signature, s.doc, s.snippet, s.content_hash, sc.root, f.hash, f.size, f.mtime_ns"
)


def code_file_row(row: Sequence[Any]) -> CodeFile:
    return CodeFile(
        str(row[1]), str(row[2]), str(row[3]), str(row[4]), int(row[5]), int(row[6]),
        None if row[7] is None else str(row[7]), None if row[8] is None else str(row[8]),
    )  # fmt: skip


def code_edge_row(row: Sequence[Any]) -> CodeEdgeRecord:
    return CodeEdgeRecord(
        int(row[1]), str(row[2]), str(row[3]), str(row[4]), str(row[5]), int(row[6]),
        None if row[7] is None else str(row[7]), str(row[8]),
    )  # fmt: skip


def code_symbol_values(record: CodeSymbolRecord) -> tuple[object, ...]:
    return tuple(getattr(record, name) for name in CODE_SYMBOL_FIELDS)


# -- the import ledger ---------------------------------------------------------------------------

IMPORT_FILE_COLUMNS = (
    "id, path, format, identity, size, mtime_ns, prefix_hash, tail_hash, cursor_bytes, "
    "cursor_line, sync_count, state"
)
IMPORT_RECORD_COLUMNS = "record_key, channel, message_uid, content_hash, sync_id, node, mirror, file_id"
IMPORT_NODE_COLUMNS = "uuid, parent, root, side, conversational, line, superseded"


def import_file_row(row: Sequence[Any]) -> ImportFile:
    return ImportFile(
        id=int(row[0]),
        path=row[1],
        format=row[2],
        identity=row[3],
        size=int(row[4]),
        mtime_ns=int(row[5]),
        prefix_hash=row[6],
        tail_hash=row[7],
        cursor_bytes=int(row[8]),
        cursor_line=int(row[9]),
        sync_count=int(row[10]),
        state=json.loads(row[11]),
    )


def import_node_row(row: Sequence[Any]) -> ImportNode:
    return ImportNode(
        uuid=row[0],
        parent=row[1],
        root=row[2],
        side=bool(row[3]),
        conversational=bool(row[4]),
        line=int(row[5]),
        superseded=bool(row[6]),
    )


def import_record_row(row: Sequence[Any]) -> ImportRecord:
    return ImportRecord(
        key=row[0],
        channel=row[1],
        message_id=row[2],
        content_hash=row[3],
        sync_id=int(row[4]),
        node=row[5],
        mirror=bool(row[6]),
        file_id=int(row[7]),
    )
