"""Column lists and row decoders of the tables every backend shares (the same schema on SQLite
and PostgreSQL): the code index's files, edges and symbols, the import ledger's files,
records and nodes, the search rows of messages, episode breaks and the hit-log summary.
Backend-neutral (no driver; the column lists are plain ``SELECT`` lists, valid in both
dialects; a time is decoded by the backend's own ``when``), so the two backends decode a row
one way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from recallbox.recall_types import DomainHits, HitStats, NeverRecalled, TargetHits
from recallbox.storage.codecs import parse_time
from recallbox.storage.values import (
    EpisodeBreaks,
    ImportFile,
    ImportNode,
    ImportRecord,
    SearchRow,
)
from recallbox.storage.values_code import CodeEdgeRecord, CodeFile, CodeSymbolRecord
from recallbox.types import Thread

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
IMPORT_RECORD_COLUMNS = (
    "record_key, channel, message_uid, content_hash, sync_id, node, mirror, file_id"
)
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


# -- messages as search rows, episodes, the hit-log ----------------------------------------------


def column_int(value: object) -> int:
    """An integer column value (``NULL`` as 0)."""
    return int(value) if isinstance(value, int | float | str) else 0


#: A stored time as a backend returns it -> an aware ``datetime``.
When = Callable[[Any], datetime]


def iso_when(value: Any) -> datetime:
    """A time stored as ISO 8601 text (SQLite's :class:`When`)."""
    return parse_time(str(value))


def thread_row(row: Sequence[Any], when: When) -> Thread:
    """``(channel, title, quarantined, created_at, generation_count, message_count,
    last_activity, excluded)``."""
    return Thread(
        channel=row[0],
        title=row[1],
        quarantined=bool(row[2]),
        created_at=when(row[3]),
        generation_count=int(row[4]),
        message_count=int(row[5]),
        last_activity=when(row[6]),
        excluded=bool(row[7]),
    )


def search_row(row: Sequence[Any], when: When) -> SearchRow:
    """``(uid, channel, role, content, content_hash, created_at, generation uid, seq)``."""
    return SearchRow(
        id=str(row[0]),
        channel=str(row[1]),
        role=str(row[2]),
        content=str(row[3]),
        content_hash=str(row[4]),
        created_at=when(row[5]),
        generation=str(row[6]),
        seq=int(row[7]),
    )


def search_rows_by_id(rows: Iterable[Sequence[Any]], when: When) -> dict[str, SearchRow]:
    """:func:`search_row` of each row, by message id."""
    return {str(r[0]): search_row(r, when) for r in rows}


def adjacent_rows_of(rows: Iterable[Sequence[Any]], when: When) -> dict[str, tuple[SearchRow, ...]]:
    """``(hit uid, *search row or NULLs)`` rows -> each hit's neighbours in order (a hit with
    no visible message that close has a row of NULLs: an empty tuple)."""
    out: dict[str, list[SearchRow]] = {}
    for r in rows:
        found = out.setdefault(str(r[0]), [])
        if r[1] is not None:
            found.append(search_row(r[1:], when))
    return {key: tuple(value) for key, value in out.items()}


def episode_breaks_of(rows: Iterable[Sequence[Any]], gap_micros: int) -> dict[str, EpisodeBreaks]:
    """``(span key, generation, seq, microseconds)`` rows, span by span and each in ``seq``
    order -> per generation its first and last ``seq`` and where an episode starts: a span's
    first message (the edge of the scan) and any message more than ``gap_micros`` from the
    one before."""
    found: dict[str, list[Any]] = {}  # generation -> [first, last, starts]
    entry: list[Any] = []
    span_key: object = None
    previous = 0
    for key, generation, seq, micros in rows:
        seq, micros = int(seq), int(micros)
        if key != span_key:
            span_key = key
            entry = found.setdefault(generation, [seq, seq, []])
            entry[0] = min(entry[0], seq)
            entry[2].append(seq)
        elif abs(micros - previous) > gap_micros:
            entry[2].append(seq)
        if seq > entry[1]:
            entry[1] = seq
        previous = micros
    return {
        generation: EpisodeBreaks(first, last, tuple(sorted(set(starts))))
        for generation, (first, last, starts) in found.items()
    }


def rotation_bound(
    marks: Mapping[str, int], consumers: Sequence[str], newest: int, max_rows: int
) -> int:
    """The newest hit-log id rotation may drop: read by every consumer and over ``max_rows``."""
    consumed = min((marks.get(c, 0) for c in consumers), default=0)
    return min(consumed, newest - max_rows)


def hit_stats_of(
    counts: Sequence[Any],
    *,
    dropped: int,
    domains: Iterable[Sequence[Any]],
    most: Iterable[Sequence[Any]],
    never: Sequence[NeverRecalled],
    marks: Mapping[str, int],
    rotatable: int,
    max_rows: int,
) -> HitStats:
    """:class:`HitStats` from ``counts`` (rows, hit rows, drill rows, newest id), the per-domain
    ``(domain, hits, drills, targets)`` and most-recalled ``(domain, target, hits, drills)``
    rows, and ``rotatable``: the rows :func:`rotation_bound` lets rotation drop."""
    rows, hit_rows, drill_rows = (column_int(v) for v in counts[:3])
    return HitStats(
        rows=rows,
        hit_rows=hit_rows,
        drill_rows=drill_rows,
        dropped=dropped,
        max_rows=max_rows,
        held=max(0, max(0, rows - max_rows) - rotatable),
        domains=tuple(
            DomainHits(str(d), column_int(h), column_int(r), column_int(t))
            for d, h, r, t in domains
        ),
        most_recalled=tuple(
            TargetHits(str(d), str(t), column_int(h), column_int(r)) for d, t, h, r in most
        ),
        never_recalled=tuple(never),
        watermarks=marks,
    )
