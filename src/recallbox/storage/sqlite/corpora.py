"""The corpora of the SQLite backend: one descriptor per kind of searchable row.

The keyword index (``keyword.py``) and the vectors (``vector_index.py``) are written once,
over a :class:`Corpus`; a new domain adds its tables in a migration and one descriptor here
(its ranked FTS5 index, its public id, its part of the visibility rule, its privacy gate, what
it embeds). Every statement built from a descriptor adds :attr:`Corpus.joins` and applies
:attr:`Corpus.rule` (the row's part and the gate) and :meth:`Corpus.narrow` (the filter).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import apsw

from recallbox.errors import InvalidArgument
from recallbox.storage.queries import (
    CORPUS_CODE_SYMBOL,
    CORPUS_MEMORY_ENTRY,
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    SearchFilter,
)
from recallbox.storage.sqlite.rows import json_list
from recallbox.storage.sqlite.vectors import NO_PARTITION, PartitionOf, thread_partition
from recallbox.storage.sqlite.visibility import (
    MEMORY_ALLOWED_SQL,
    MEMORY_SOURCE_SQL,
    MESSAGE_VISIBLE_SQL,
    SECTION_ALLOWED_SQL,
    THREAD_ALLOWED_SQL,
    Clause,
    narrowing,
    source_allowed_sql,
)
from recallbox.storage.values import parse_chunk_id
from recallbox.storage.values_code import parse_code_key

#: The public chunk id of ``transcript_chunks c JOIN threads t``.
CHUNK_ID_SQL = (
    "(t.channel || '@' || c.first_seq || CASE WHEN c.part > 0 THEN '.' || c.part ELSE '' END)"
)


def _message_keys(ids: Sequence[str]) -> str:
    """Public ids that are the row's own column (message, section ids; memory keys)."""
    return json_list(list(dict.fromkeys(ids)))


def _chunk_keys(ids: Sequence[str]) -> str:
    keys = []
    for value in dict.fromkeys(ids):
        parsed = parse_chunk_id(value)
        if parsed is not None:
            keys.append([*parsed, value])
    return json.dumps(keys, ensure_ascii=True)


@dataclass(frozen=True, slots=True)
class Corpus:
    """The SQL of one corpus; its table (aliased :attr:`alias`) has ``id``, ``thread_id`` and
    ``content_hash`` columns, and :attr:`fts` is an external-content FTS5 index over it.

    Attributes:
        name: the corpus name (``recallbox.storage.queries.CORPUS_*``, the vectors' owner).
        table, alias: the content table and its alias in every statement.
        fts: the ranked FTS5 index (its ``_docsize`` shadow table holds row token counts).
        public_id: SQL of a row's public id.
        visible: the row's own part of the visibility rule (the gate is added).
        embeddable: the rows whose text may be embedded (the gate is added).
        text: SQL of the text a vector describes.
        drilled: the rows the hit-log records a drill for (the lazy embedding pass).
        keys_from: a ``FROM`` that resolves the JSON array bound first (from :attr:`keys`) to
            rows ``alias`` with :attr:`joins`, in the order given; ``given`` is the id it was
            asked for.
        keys: the JSON array of lookup keys for a list of public ids (unparseable ids dropped).
        joins: the joins from a row to what :attr:`gate` reads (its thread ``t``).
        gate: the stored privacy policy's condition (quarantine, excluded sources).
        channel_sql: the column a filter's channel is compared with (``None``: no channels).
        source_sql: the column of the normalised source basename per-call exclusions compare
            with.
        source_path_sql: the row's normalised source path (documents, files), compared with
            exclusions that hold a ``/``; ``None`` for thread rows (basenames only).
        source_identity_sql: the column of the row's source file identity, or ``None``.
        source_suffix: a path exclusion also matches a path ending with ``/`` + it.
        scope: the corpus's scope condition with one ``{}`` placeholder, or ``None``.
        partition_column: the table's column whose value partitions its vectors (the ``vec0``
            partition key: a thread id, a scope id, or a constant such as ``0``).
        partition_of: the partition a filter restricts a nearest-neighbour scan to (see
            ``vectors.PartitionOf``); the default is the thread of ``where.channel``.
        hash_sql: an expression for the row's ``content_hash`` cheaper than the column
            (``None``: the column).
    """

    name: str
    table: str
    alias: str
    fts: str
    public_id: str
    visible: str
    embeddable: str
    text: str
    drilled: str
    keys_from: str
    given: str
    keys: Callable[[Sequence[str]], str]
    joins: str
    gate: str = THREAD_ALLOWED_SQL
    channel_sql: str | None = "t.channel"
    source_sql: str = "t.source"
    source_path_sql: str | None = None
    source_identity_sql: str | None = "t.source_identity"
    source_suffix: bool = True
    scope: str | None = None
    partition_column: str = "thread_id"
    partition_of: PartitionOf = thread_partition
    hash_sql: str | None = None

    @property
    def rows_from(self) -> str:
        """``<table> <alias> <joins>``."""
        return f"{self.table} {self.alias} {self.joins}"

    @property
    def rule(self) -> str:
        """The whole visibility rule of a row of this corpus."""
        return f"{self.visible} AND {self.gate}"

    def narrow(self, where: SearchFilter, *, first: int | None = None) -> Clause:
        """The conditions ``where`` adds (see :func:`~recallbox.storage.sqlite.visibility.narrowing`).

        Raises:
            UnsupportedFilter: a channel or scope this corpus does not have.
        """
        return narrowing(
            where,
            scope_sql=self.scope,
            channel_sql=self.channel_sql,
            source_sql=self.source_sql,
            path_sql=self.source_path_sql,
            identity_sql=self.source_identity_sql,
            suffix=self.source_suffix,
            first=first,
        )

    @property
    def fresh_vector(self) -> str:
        """A vector counts only while it describes the row's current text (binds the space)."""
        a = self.alias
        digest = self.hash_sql or f"{a}.content_hash"
        return (
            f"EXISTS (SELECT 1 FROM embeddings e WHERE e.space_id = ? AND e.target_rowid = {a}.id "
            f"AND e.content_hash = {digest})"
        )


MESSAGES = Corpus(
    name=CORPUS_MESSAGE,
    table="messages",
    alias="m",
    fts="messages_fts",
    public_id="m.uid",
    visible=MESSAGE_VISIBLE_SQL,
    embeddable="m.kind = 'message' AND m.model_visible = 1 "
    "AND length(trim(m.content, char(32, 9, 10))) > 0",
    text="m.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled = 1 AND h.target_id = m.uid)",
    keys_from="json_each(?) AS j CROSS JOIN messages m ON m.uid = j.value "
    "JOIN threads t ON t.id = m.thread_id",
    given="j.value",
    keys=_message_keys,
    joins="JOIN threads t ON t.id = m.thread_id",
    # from the covering generation index (migration 13): the column lies after ``content``,
    # and reading it from the row walks a long message's overflow pages
    hash_sql="(SELECT x.content_hash FROM messages x INDEXED BY messages_by_generation "
    "WHERE x.generation_id = m.generation_id AND x.seq = m.seq)",
)

TRANSCRIPT_CHUNKS = Corpus(
    name=CORPUS_TRANSCRIPT_CHUNK,
    table="transcript_chunks",
    alias="c",
    fts="transcript_chunks_fts",
    public_id=CHUNK_ID_SQL,
    visible="1",  # a chunk holds visible messages only; its thread's gate decides
    embeddable="length(trim(c.content)) > 0",
    text="c.content",
    drilled="EXISTS (SELECT 1 FROM json_each(c.message_ids) jm JOIN hit_log h "
    "ON h.target_id = jm.value WHERE h.drilled = 1)",
    keys_from="json_each(?) AS j CROSS JOIN threads t ON t.channel = j.value ->> 0 "
    "CROSS JOIN transcript_chunks c ON c.thread_id = t.id AND c.first_seq = j.value ->> 1 "
    "AND c.part = j.value ->> 2",
    given="j.value ->> 3",
    keys=_chunk_keys,
    joins="JOIN threads t ON t.id = c.thread_id",
)

# Knowledge sections and memory entries have no threads: their public id is a column, their
# gate the source-exclusion condition, and ``thread_id`` (the vector partition key) is 0.
SECTIONS = Corpus(
    name=CORPUS_SECTION,
    table="knowledge_sections",
    alias="k",
    fts="knowledge_sections_fts",
    public_id="k.uid",
    visible="k.removed = 0",
    embeddable="k.removed = 0 AND length(trim(k.content, char(32, 9, 10))) > 0",
    text="k.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled = 1 AND h.target_id = k.uid)",
    keys_from="json_each(?) AS j CROSS JOIN knowledge_sections k ON k.uid = j.value",
    given="j.value",
    keys=_message_keys,
    joins="",
    gate=SECTION_ALLOWED_SQL,
    channel_sql=None,
    source_sql="k.source_name",
    source_path_sql="k.source_path",
    source_identity_sql="k.identity",
    source_suffix=True,
    scope="(k.scope = {} OR k.scope IS NULL)",
)

MEMORY_ENTRIES = Corpus(
    name=CORPUS_MEMORY_ENTRY,
    table="memory_entries",
    alias="me",
    fts="memory_entries_fts",
    public_id="me.key",
    visible="1",  # every state is recallable; ranking weighs the state
    embeddable="length(trim(me.content, char(32, 9, 10))) > 0",
    text="me.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled = 1 AND h.target_id = me.key)",
    keys_from="json_each(?) AS j CROSS JOIN memory_entries me ON me.key = j.value",
    given="j.value",
    keys=_message_keys,
    joins="",
    gate=MEMORY_ALLOWED_SQL,
    channel_sql=None,
    source_sql=MEMORY_SOURCE_SQL,
    source_path_sql=MEMORY_SOURCE_SQL,
    source_identity_sql=None,
    source_suffix=True,
    scope=None,
)

#: A code symbol's public id (``values_code.code_key``) over ``code_symbols s JOIN code_scopes sc``.
CODE_KEY_SQL = "(sc.name || char(31) || s.symbol_id)"
#: The privacy gate of a code file ``f`` (DESIGN §5): an exclusion without ``/`` by basename,
#: one with ``/`` by the scope-relative path (equal), any by file identity.
CODE_FILE_ALLOWED_SQL = source_allowed_sql("f.name_norm", "f.path_norm", "f.identity", suffix=False)


def _code_keys(ids: Sequence[str]) -> str:
    keys = []
    for value in dict.fromkeys(ids):
        parsed = parse_code_key(value)
        if parsed is not None:
            keys.append([*parsed, value])
    return json.dumps(keys, ensure_ascii=True)


def scope_partition(conn: apsw.Connection, where: SearchFilter) -> int | None:
    """The partition of a code symbol's vector is its scope: ``where.scope``'s id."""
    if where.scope is None:
        return None
    row = conn.execute("SELECT id FROM code_scopes WHERE name = ?", (where.scope,)).fetchone()
    return int(row[0]) if row else NO_PARTITION


CODE_SYMBOLS = Corpus(
    name=CORPUS_CODE_SYMBOL,
    table="code_symbols",
    alias="s",
    fts="code_symbols_fts",
    public_id=CODE_KEY_SQL,
    visible="1",  # a symbol is visible when its file passes the gate
    embeddable="length(trim(s.signature || s.doc)) > 0",
    text="trim(s.signature || char(10) || s.doc)",
    drilled=f"EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled = 1 AND h.target_id = {CODE_KEY_SQL})",
    keys_from="json_each(?) AS j CROSS JOIN code_scopes sc ON sc.name = j.value ->> 0 "
    "CROSS JOIN code_symbols s ON s.scope_id = sc.id AND s.symbol_id = j.value ->> 1 "
    "JOIN code_files f ON f.id = s.file_id",
    given="j.value ->> 2",
    keys=_code_keys,
    joins="JOIN code_files f ON f.id = s.file_id JOIN code_scopes sc ON sc.id = s.scope_id",
    gate=CODE_FILE_ALLOWED_SQL,
    channel_sql=None,
    source_sql="f.name_norm",
    source_path_sql="f.path_norm",
    source_identity_sql="f.identity",
    source_suffix=False,
    scope="sc.name = {}",
    partition_column="scope_id",
    partition_of=scope_partition,
)

CORPORA: dict[str, Corpus] = {
    corpus.name: corpus
    for corpus in (MESSAGES, TRANSCRIPT_CHUNKS, SECTIONS, MEMORY_ENTRIES, CODE_SYMBOLS)
}


def corpus_of(name: str) -> Corpus:
    """The descriptor of corpus ``name``.

    Raises:
        InvalidArgument: this backend has no such corpus.
    """
    found = CORPORA.get(name)
    if found is None:
        raise InvalidArgument(f"unknown corpus {name!r}; this backend has {', '.join(CORPORA)}")
    return found
