"""Reading stored vectors by row id from a space's ``vec0`` table (#14: the distances of a
big space's keyword candidates outside the newest threads' in-memory copy).

A point query of ``vec0`` (``WHERE rowid = ?``) costs ~0.55 ms of CPU at a million vectors:
each walks the overflow pages of the row's 1 MiB chunk and more. :func:`read_vectors` reads
the bytes from the chunk itself through an incremental blob handle where the table's layout is
known (sqlite-vec 0.1), ~0.15 ms each; a differential test holds it to ``vec0``'s answers.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import apsw

from recallbox.storage.sqlite.vectors import load_sqlite_vec, table_name

log = logging.getLogger(__name__)
#: sqlite-vec releases whose ``vec0`` storage :func:`read_vectors` reads directly (the
#: ``CREATE_VERSION_*`` a table records in its ``_info`` table).
DIRECT_READ_VERSIONS = frozenset({(0, 1)})


def _direct_layout(conn: apsw.Connection, table: str) -> bool:
    """Whether ``table``'s storage is the layout :func:`read_vectors` knows (sqlite-vec 0.1:
    ``_rowids`` maps a rowid to ``(chunk_id, chunk_offset)``, ``_vector_chunks00`` holds each
    chunk's vectors back to back)."""
    try:
        rows: list[Any] = conn.execute(
            f"SELECT key, value FROM {table}_info "
            "WHERE key IN ('CREATE_VERSION_MAJOR', 'CREATE_VERSION_MINOR')"
        ).fetchall()
    except apsw.SQLError:
        return False
    found = {str(r[0]): r[1] for r in rows}
    version = (found.get("CREATE_VERSION_MAJOR"), found.get("CREATE_VERSION_MINOR"))
    return version in DIRECT_READ_VERSIONS


def read_vectors(
    conn: apsw.Connection, space_id: int, dim: int, rowids: Sequence[int]
) -> dict[int, bytes]:
    """The stored bytes of each of ``rowids`` that has a vector in the space's table.

    A point query of ``vec0`` (``WHERE rowid = ?``) walks the overflow pages of the row's
    whole 1 MiB chunk and more: ~0.55 ms each at a million vectors. Where the table's layout is
    known (:data:`DIRECT_READ_VERSIONS`) the vector is read from its chunk through an
    incremental blob handle (one per chunk, offsets ascending): ~0.15 ms. Otherwise, or when
    the chunks are not where that layout puts them, point queries: the answer (or the error)
    is always ``vec0``'s own. A differential test holds both to ``vec0``'s answers."""
    table = table_name(space_id)
    wanted = sorted(set(rowids))
    if not wanted:
        return {}
    if _direct_layout(conn, table):
        try:
            return _read_chunks(conn, table, dim, wanted)
        except (apsw.SQLError, ValueError, TypeError) as exc:
            # Trigger: a chunk, or a row's place in it, is not where the layout puts it (a
            # damaged table, a release that moved them). Why: vec0 knows its own storage.
            # Outcome: its point queries answer, or raise their own error.
            log.debug("reading %s's chunks directly failed (%s); asking vec0", table, exc)
    load_sqlite_vec(conn)
    rows = conn.execute(
        f"SELECT rowid, embedding FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(wanted),),
    )
    return {int(r[0]): bytes(r[1]) for r in rows}


def _read_chunks(
    conn: apsw.Connection, table: str, dim: int, wanted: Sequence[int]
) -> dict[int, bytes]:
    """:func:`read_vectors` from the chunks (sqlite-vec 0.1's layout).

    Raises:
        ValueError, TypeError, apsw.SQLError: a row's place is not in its chunk."""
    places = sorted(
        (int(r[1]), int(r[2]), int(r[0]))
        for r in conn.execute(
            f"SELECT rowid, chunk_id, chunk_offset FROM {table}_rowids "
            "WHERE rowid IN (SELECT value FROM json_each(?))",
            (json.dumps(list(wanted)),),
        )
    )
    width = dim * 4
    out: dict[int, bytes] = {}
    blob: apsw.Blob | None = None
    current = None
    try:
        for chunk, offset, rowid in places:
            if chunk != current:
                if blob is not None:
                    blob.close()
                blob = conn.blob_open("main", f"{table}_vector_chunks00", "vectors", chunk, False)
                current = chunk
            assert blob is not None
            blob.seek(offset * width)
            data = blob.read(width)
            if len(data) != width:
                raise ValueError(f"row {rowid}: {len(data)} bytes at its place, not {width}")
            out[rowid] = data
    finally:
        if blob is not None:
            blob.close()
    return out
