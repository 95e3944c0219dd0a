"""The corpora of the PostgreSQL backend: one descriptor per kind of searchable row.

The twin of ``storage/sqlite/corpora.py``: the keyword index (``keyword_index.py``) and the
vectors (``vectors.py``) are written once, over a :class:`Corpus`. Public ids are resolved
through ``unnest`` of bound arrays (:attr:`Corpus.keys_from`, :attr:`Corpus.keys`) in the order
given; every statement built from a descriptor adds :attr:`Corpus.joins` and applies
:attr:`Corpus.rule` and :meth:`Corpus.narrow`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from recallbox.errors import InvalidArgument
from recallbox.storage.codecs import storable
from recallbox.storage.postgres.keyword_sql import KeywordCorpus
from recallbox.storage.postgres.schema import (
    CHUNKS_KEYWORDS,
    CODE_KEYWORDS,
    MEMORY_KEYWORDS,
    MESSAGES_KEYWORDS,
    SECTIONS_KEYWORDS,
)
from recallbox.storage.postgres.visibility import (
    MEMORY_ALLOWED_SQL,
    MEMORY_SOURCE_SQL,
    MESSAGE_VISIBLE_SQL,
    SECTION_ALLOWED_SQL,
    THREAD_ALLOWED_SQL,
    Clause,
    narrowing,
    source_allowed_sql,
)
from recallbox.storage.queries import (
    CORPUS_CODE_SYMBOL,
    CORPUS_MEMORY_ENTRY,
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    SearchFilter,
)
from recallbox.storage.values import parse_chunk_id
from recallbox.storage.values_code import parse_code_key

#: The public chunk id of ``transcript_chunks c JOIN threads t``.
CHUNK_ID_SQL = (
    "(t.channel || '@' || c.first_seq || CASE WHEN c.part > 0 THEN '.' || c.part ELSE '' END)"
)
#: A code symbol's public id over ``code_symbols s JOIN code_scopes sc``.
CODE_KEY_SQL = "(sc.name || chr(31) || s.symbol_id)"
#: Characters SQLite's ``trim(x, char(32, 9, 10))`` strips.
BLANKS = "E' \\t\\n'"
#: The privacy gate of a code file ``f`` (DESIGN §5).
CODE_FILE_ALLOWED_SQL = source_allowed_sql("f.name_norm", "f.path_norm", "f.identity", suffix=False)

Keys = Callable[[Sequence[str]], tuple[object, ...]]


def _plain_keys(ids: Sequence[str]) -> tuple[object, ...]:
    return ([value for value in dict.fromkeys(ids) if storable(value)],)


def _chunk_keys(ids: Sequence[str]) -> tuple[object, ...]:
    channels: list[str] = []
    seqs: list[int] = []
    parts: list[int] = []
    given: list[str] = []
    for value in filter(storable, dict.fromkeys(ids)):
        parsed = parse_chunk_id(value)
        if parsed is not None:
            channels.append(parsed[0])
            seqs.append(parsed[1])
            parts.append(parsed[2])
            given.append(value)
    return channels, seqs, parts, given


def _code_keys(ids: Sequence[str]) -> tuple[object, ...]:
    scopes: list[str] = []
    symbols: list[str] = []
    given: list[str] = []
    for value in filter(storable, dict.fromkeys(ids)):
        parsed = parse_code_key(value)
        if parsed is not None:
            scopes.append(parsed[0])
            symbols.append(parsed[1])
            given.append(value)
    return scopes, symbols, given


@dataclass(frozen=True, slots=True)
class Corpus:
    """The SQL of one corpus (the SQLite twin's attributes; ``keyword`` is its index and
    ``seg_sql`` the column whose text is already segmented, when the writer stores one)."""

    name: str
    table: str
    alias: str
    keyword: KeywordCorpus
    public_id: str
    visible: str
    embeddable: str
    text: str
    drilled: str
    keys_from: str
    given: str
    keys: Keys
    joins: str
    gate: str = THREAD_ALLOWED_SQL
    channel_sql: str | None = "t.channel"
    source_sql: str = "t.source"
    source_path_sql: str | None = None
    source_identity_sql: str | None = "t.source_identity"
    source_suffix: bool = True
    scope: str | None = None
    partition_column: str = "thread_id"

    @property
    def rows_from(self) -> str:
        return f"{self.table} {self.alias} {self.joins}"

    @property
    def rule(self) -> str:
        return f"{self.visible} AND {self.gate}"

    def narrow(self, where: SearchFilter) -> Clause:
        """The conditions ``where`` adds (``visibility.narrowing``).

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
        )

    @property
    def fresh_vector(self) -> str:
        """A vector counts only while it describes the row's current text (binds the space)."""
        a = self.alias
        return (
            f"EXISTS (SELECT 1 FROM embeddings e WHERE e.space_id = %s AND e.target_rowid = {a}.id "
            f"AND e.content_hash = {a}.content_hash)"
        )


MESSAGES = Corpus(
    name=CORPUS_MESSAGE,
    table="messages",
    alias="m",
    keyword=MESSAGES_KEYWORDS,
    public_id="m.uid",
    visible=MESSAGE_VISIBLE_SQL,
    embeddable=f"m.kind = 'message' AND m.model_visible AND length(btrim(m.content, {BLANKS})) > 0",
    text="m.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled AND h.target_id = m.uid)",
    keys_from="unnest(%s::text[]) WITH ORDINALITY AS j(value, n) JOIN messages m "
    "ON m.uid = j.value JOIN threads t ON t.id = m.thread_id",
    given="j.value",
    keys=_plain_keys,
    joins="JOIN threads t ON t.id = m.thread_id",
)

TRANSCRIPT_CHUNKS = Corpus(
    name=CORPUS_TRANSCRIPT_CHUNK,
    table="transcript_chunks",
    alias="c",
    keyword=CHUNKS_KEYWORDS,
    public_id=CHUNK_ID_SQL,
    visible="true",  # a chunk holds visible messages only; its thread's gate decides
    embeddable="length(btrim(c.content, ' ')) > 0",
    text="c.content",
    drilled="EXISTS (SELECT 1 FROM json_array_elements_text(c.message_ids::json) AS jm(value) "
    "JOIN hit_log h ON h.target_id = jm.value WHERE h.drilled)",
    keys_from="unnest(%s::text[], %s::bigint[], %s::int[], %s::text[]) "
    "AS j(channel, first_seq, part, given) JOIN threads t ON t.channel = j.channel "
    "JOIN transcript_chunks c ON c.thread_id = t.id AND c.first_seq = j.first_seq "
    "AND c.part = j.part",
    given="j.given",
    keys=_chunk_keys,
    joins="JOIN threads t ON t.id = c.thread_id",
)

SECTIONS = Corpus(
    name=CORPUS_SECTION,
    table="knowledge_sections",
    alias="k",
    keyword=SECTIONS_KEYWORDS,
    public_id="k.uid",
    visible="NOT k.removed",
    embeddable=f"NOT k.removed AND length(btrim(k.content, {BLANKS})) > 0",
    text="k.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled AND h.target_id = k.uid)",
    keys_from="unnest(%s::text[]) WITH ORDINALITY AS j(value, n) JOIN knowledge_sections k "
    "ON k.uid = j.value",
    given="j.value",
    keys=_plain_keys,
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
    keyword=MEMORY_KEYWORDS,
    public_id="me.key",
    visible="true",  # every state is recallable; ranking weighs the state
    embeddable=f"length(btrim(me.content, {BLANKS})) > 0",
    text="me.content",
    drilled="EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled AND h.target_id = me.key)",
    keys_from="unnest(%s::text[]) WITH ORDINALITY AS j(value, n) JOIN memory_entries me "
    "ON me.key = j.value",
    given="j.value",
    keys=_plain_keys,
    joins="",
    gate=MEMORY_ALLOWED_SQL,
    channel_sql=None,
    source_sql=MEMORY_SOURCE_SQL,
    source_path_sql=MEMORY_SOURCE_SQL,
    source_identity_sql=None,
    source_suffix=True,
    scope=None,
)

CODE_SYMBOLS = Corpus(
    name=CORPUS_CODE_SYMBOL,
    table="code_symbols",
    alias="s",
    keyword=CODE_KEYWORDS,
    public_id=CODE_KEY_SQL,
    visible="true",  # a symbol is visible when its file passes the gate
    embeddable="length(btrim(s.signature || s.doc, ' ')) > 0",
    text="btrim(s.signature || chr(10) || s.doc, ' ')",
    drilled=f"EXISTS (SELECT 1 FROM hit_log h WHERE h.drilled AND h.target_id = {CODE_KEY_SQL})",
    keys_from="unnest(%s::text[], %s::text[], %s::text[]) AS j(scope, symbol, given) "
    "JOIN code_scopes sc ON sc.name = j.scope "
    "JOIN code_symbols s ON s.scope_id = sc.id AND s.symbol_id = j.symbol "
    "JOIN code_files f ON f.id = s.file_id",
    given="j.given",
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
