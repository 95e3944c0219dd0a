"""Copying a store across backends (``recallbox migrate``, #16 item 5): the tables, their
canonical rows, and the resumable copy loop.

Every backend that can be copied from or to implements :class:`StoreTransfer`: it reads a
table's rows in key order as **canonical values** (``bool``, ``int``, ``float``, ``str``,
``bytes``, an aware UTC ``datetime``, a ``datetime.date``, or ``None``, in :attr:`Table.columns` order),
and writes such rows with their ids kept, deriving what it derives itself (SQLite's
``content_seg`` and FTS5 rows, PostgreSQL's keyword documents and statistics, either's literal
index). A space's vectors are copied as ``(row id, partition, floats)``.

:func:`copy_store` copies table by table in :data:`TABLES` order (parents before children),
in batches of :data:`BATCH_ROWS`, one destination transaction each, then every space's vectors.
**Resumable**: the destination's greatest key of each table says where a stopped copy goes on
(its last row must equal the source's row with that key, else the destination holds other
data and the copy is refused). **Verified**: afterwards every table and every space holds as
many rows in the destination as in the source, or the copy fails naming the difference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from recallbox.errors import StoreUnavailable

#: Rows per destination transaction.
BATCH_ROWS = 2_000
#: Vectors per destination transaction.
VECTOR_BATCH = 1_000

Row = tuple[Any, ...]
Key = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Table:
    """One table as both backends store it: its key columns, then its other columns; the
    ``bools``/``times``/``dates`` columns' canonical types (the rest are ints, floats, texts,
    bytes)."""

    name: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    bools: frozenset[str] = frozenset()
    times: frozenset[str] = frozenset()
    dates: frozenset[str] = frozenset()

    @property
    def all_columns(self) -> tuple[str, ...]:
        return (*self.key, *self.columns)


def _t(
    name: str, key: str, columns: str, *, bools: str = "", times: str = "", dates: str = ""
) -> Table:
    return Table(
        name,
        tuple(key.split()),
        tuple(columns.split()),
        frozenset(bools.split()),
        frozenset(times.split()),
        frozenset(dates.split()),
    )


#: Every table a copy carries, parents first (what the foreign keys need).
TABLES: tuple[Table, ...] = (
    _t("threads", "id", "channel title quarantined created_at last_activity next_seq source "
       "source_identity", bools="quarantined", times="created_at last_activity"),
    _t("generations", "id", "uid thread_id number opened_at closed_at first_seq",
       times="opened_at closed_at"),
    _t("messages", "id", "uid thread_id generation_id seq role kind content args_text "
       "raw_content tool_calls tool_calls_raw tool_call_id model_visible pending superseded_by "
       "created_at metadata content_hash", bools="model_visible pending", times="created_at"),
    _t("excluded_sources", "exclusion", "name path identity added_at", times="added_at"),
    _t("import_files", "id", "path format identity size mtime_ns prefix_hash tail_hash "
       "cursor_bytes cursor_line sync_count state synced_at", times="synced_at"),
    _t("import_records", "file_id record_key", "channel message_uid node content_hash sync_id "
       "mirror", bools="mirror"),
    _t("import_nodes", "file_id uuid", "parent root side conversational line superseded",
       bools="side conversational superseded"),
    _t("transcript_chunks", "id", "thread_id generation_id first_seq part last_seq message_ids "
       "message_offsets source line_start line_end content content_hash"),
    _t("embedding_spaces", "id", "owner model_id dim created_at version", times="created_at"),
    _t("embeddings", "space_id target_rowid", "content_hash embedded_at", times="embedded_at"),
    _t("hit_log", "id", "at query domain layer target_id drilled verb event", bools="drilled",
       times="at"),
    _t("hit_log_state", "key", "value"),
    _t("hit_log_watermarks", "consumer", "upto updated_at", times="updated_at"),
    _t("knowledge_sections", "id", "uid scope source source_path source_name identity root "
       "heading level start_line end_line heading_line content content_hash body_hash removed "
       "thread_id updated_at", bools="removed", times="updated_at"),
    _t("memory_entries", "id", "key type number title body content content_hash identity_hash "
       "state state_since created last_referenced ref_count evergreen superseded_by thread_id "
       "updated_at", bools="evergreen", times="updated_at",
       dates="state_since created last_referenced"),
    _t("memory_key_counters", "type", "highest"),
    _t("tool_outputs", "id", "handle thread_id source source_path source_identity tool content "
       "content_hash created_at", times="created_at"),
    _t("code_scopes", "id", "name root commit_sha indexed_at", times="indexed_at"),
    _t("code_files", "id", "scope_id path path_norm name_norm language hash size mtime_ns "
       "identity error indexed_at", times="indexed_at"),
    _t("code_symbols", "id", "scope_id file_id symbol_id name qualname kind start_line end_line "
       "signature doc snippet name_seg content_seg content_hash"),
    _t("code_edges", "id", "scope_id file_id ordinal kind source_id target_name target_last line "
       "target_id confidence"),
)  # fmt: skip
TABLE_BY_NAME = {t.name: t for t in TABLES}


@runtime_checkable
class StoreTransfer(Protocol):
    """What :func:`copy_store` needs of a backend (both ends)."""

    def transfer_count(self, table: str) -> int:
        """How many rows ``table`` holds."""
        ...

    def transfer_rows(self, table: str, after: Key | None, limit: int) -> list[Row]:
        """Up to ``limit`` canonical rows of ``table`` with a key above ``after``, by key."""
        ...

    def transfer_row(self, table: str, key: Key) -> Row | None:
        """The canonical row of ``table`` with ``key``, or ``None``."""
        ...

    def transfer_last_key(self, table: str) -> Key | None:
        """The greatest key of ``table`` (``None``: empty)."""
        ...

    def transfer_write(self, table: str, rows: Sequence[Row]) -> None:
        """Insert canonical rows (ids kept) in one transaction, with what derives from them."""
        ...

    def transfer_vector_count(self, space_id: int) -> int:
        """How many vectors space ``space_id`` holds."""
        ...

    def transfer_last_vector(self, space_id: int) -> int:
        """The greatest row id with a vector in space ``space_id`` (0: none)."""
        ...

    def transfer_vectors(
        self, space_id: int, after: int, limit: int
    ) -> list[tuple[int, int, list[float]]]:
        """Up to ``limit`` ``(row id, partition, vector)`` of the space above row id ``after``."""
        ...

    def transfer_write_vectors(
        self, space_id: int, dim: int, rows: Sequence[tuple[int, int, list[float]]]
    ) -> None:
        """Insert a space's vectors in one transaction."""
        ...

    def transfer_finish(self) -> None:
        """After the last write: id counters past the copied ids, indexes caught up."""
        ...


#: ``progress(what, done, total)``: a table or a space's vectors copied so far.
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class TransferReport:
    """What a copy did: ``{table or vectors of a space: rows in both}``, and the rows this
    run copied (fewer than the total when it resumed a stopped copy)."""

    counts: dict[str, int]
    copied: int
    resumed: bool


def _check_resumable(source: StoreTransfer, target: StoreTransfer, table: Table) -> Key | None:
    last = target.transfer_last_key(table.name)
    if last is None:
        return None
    if target.transfer_row(table.name, last) != source.transfer_row(table.name, last):
        raise StoreUnavailable(
            f"the destination already holds {table.name} rows that are not the source's; "
            "migrate into an empty database (or resume the copy this one was made by)"
        )
    return last


def _copy_table(
    source: StoreTransfer, target: StoreTransfer, table: Table, progress: Progress | None
) -> tuple[int, bool]:
    total = source.transfer_count(table.name)
    after = _check_resumable(source, target, table)
    resumed = after is not None
    done = target.transfer_count(table.name)
    copied = 0
    if progress:
        progress(table.name, done, total)
    while rows := source.transfer_rows(table.name, after, BATCH_ROWS):
        target.transfer_write(table.name, rows)
        after = tuple(rows[-1][: len(table.key)])
        copied += len(rows)
        done += len(rows)
        if progress:
            progress(table.name, done, total)
    return copied, resumed


def _copy_vectors(
    source: StoreTransfer, target: StoreTransfer, progress: Progress | None
) -> tuple[dict[str, int], int]:
    counts: dict[str, int] = {}
    copied = 0
    for space_id, _owner, _model, dim, *_ in source.transfer_rows(
        "embedding_spaces", None, BATCH_ROWS
    ):
        name = f"vectors of space {space_id}"
        total = source.transfer_vector_count(int(space_id))
        done = target.transfer_vector_count(int(space_id))
        after = target.transfer_last_vector(int(space_id))
        while batch := source.transfer_vectors(int(space_id), after, VECTOR_BATCH):
            target.transfer_write_vectors(int(space_id), int(dim), batch)
            after = batch[-1][0]
            done += len(batch)
            copied += len(batch)
            if progress:
                progress(name, done, total)
        counts[name] = total
    return counts, copied


def copy_store(
    source: StoreTransfer, target: StoreTransfer, *, progress: Progress | None = None
) -> TransferReport:
    """Copy every table and vector of ``source`` into ``target`` (see the module docs).

    Raises:
        StoreUnavailable: the destination holds other data, or a count differs afterwards.
    """
    counts: dict[str, int] = {}
    copied = 0
    resumed = False
    for table in TABLES:
        n, again = _copy_table(source, target, table, progress)
        copied += n
        resumed |= again
        counts[table.name] = source.transfer_count(table.name)
    vector_counts, n = _copy_vectors(source, target, progress)
    copied += n
    counts.update(vector_counts)
    target.transfer_finish()
    _verify(source, target, counts)
    return TransferReport(counts, copied, resumed)


def _verify(source: StoreTransfer, target: StoreTransfer, counts: dict[str, int]) -> None:
    wrong = []
    for table in TABLES:
        have = target.transfer_count(table.name)
        if have != counts[table.name]:
            wrong.append(f"{table.name}: {counts[table.name]} in the source, {have} copied")
    for name, want in counts.items():
        if name.startswith("vectors of space "):
            have = target.transfer_vector_count(int(name.rsplit(" ", 1)[1]))
            if have != want:
                wrong.append(f"{name}: {want} in the source, {have} copied")
    if wrong:
        raise StoreUnavailable(
            "the copy does not match its source (" + "; ".join(wrong) + "); the source changed "
            "while it was copied: run the migrate again once nothing writes to it"
        )


__all__ = [
    "BATCH_ROWS",
    "TABLES",
    "TABLE_BY_NAME",
    "Progress",
    "StoreTransfer",
    "Table",
    "TransferReport",
    "copy_store",
]
