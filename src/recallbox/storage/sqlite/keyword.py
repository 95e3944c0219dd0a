"""The keyword index of the SQLite backend, over any corpus (``corpora.py``): FTS5 ``bm25()``.

* :meth:`KeywordMixin.keyword_ranked` ranks by ``s = −bm25(<fts>)``: BM25 over the whole
  index (IDF and average length of every row), as FTS5 computes it.
* :meth:`KeywordMixin.keyword_scope` reports what BM25 over one thread needs: the thread's row
  count and token total (from the index's ``_docsize`` table: one varint per column, the row's
  token count), each phrase's document frequency in the thread, and each matching row's length
  and phrase frequencies (an FTS5 auxiliary function, FTS5's own counts). The ranking above the
  store (``recallbox.ranking.bm25``) turns them into scores.

Both render the typed query themselves (``match.py``) and apply the visibility rule.
"""

from __future__ import annotations

import weakref

import apsw

from recallbox.errors import InvalidArgument
from recallbox.storage.queries import LexicalQuery, SearchFilter
from recallbox.storage.sqlite.connection import ConnectionPool
from recallbox.storage.sqlite.corpora import corpus_of
from recallbox.storage.sqlite.match import any_of, phrase_strings
from recallbox.storage.sqlite.visibility import thread_gate, without_channel
from recallbox.storage.values import KeywordScope, RowFrequencies

#: The FTS5 auxiliary function that reports a row's token count and phrase frequencies.
PHRASE_FREQS_FUNCTION = "recallbox_phrase_freqs"


def _phrase_freqs(api: apsw.FTS5ExtensionApi, *_args: object) -> str:
    """``"<tokens> <f_1> … <f_n>"`` for the current row (FTS5's own counts, as bm25() sees)."""
    counts = [str(api.column_size(-1))]
    counts.extend(str(sum(map(len, api.phrase_locations(p)))) for p in range(api.phrase_count))
    return " ".join(counts)


_registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def register_functions(conn: apsw.Connection) -> None:
    """Register :data:`PHRASE_FREQS_FUNCTION` on ``conn`` once."""
    if conn not in _registered:
        conn.register_fts5_function(PHRASE_FREQS_FUNCTION, _phrase_freqs)
        _registered.add(conn)


def decode_varint(blob: bytes, pos: int = 0) -> tuple[int, int]:
    """One SQLite varint of ``blob`` at ``pos``: ``(value, next position)``."""
    value = 0
    for i in range(8):
        byte = blob[pos + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, pos + i + 1
    return (value << 8) | blob[pos + 8], pos + 9


class KeywordMixin:
    """:class:`~recallbox.storage.base.KeywordIndex` for :class:`SQLiteStore`."""

    pool: ConnectionPool

    def keyword_ranked(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        c = corpus_of(corpus)
        narrow = c.narrow(where)
        if query.is_empty or limit < 1:
            return []
        sql = (
            f"SELECT {c.public_id} AS rid, -bm25({c.fts}) AS s FROM {c.fts} "
            f"JOIN {c.table} {c.alias} ON {c.alias}.id = {c.fts}.rowid {c.joins} "
            f"WHERE {c.fts} MATCH ? AND {c.rule}{narrow.sql} ORDER BY s DESC, rid LIMIT ?"
        )
        params = (any_of(phrase_strings(query)), *narrow.params, limit)
        with self.pool.reading() as conn:
            return [(str(r[0]), float(r[1])) for r in conn.execute(sql, params)]

    def keyword_scope(
        self, corpus: str, query: LexicalQuery, *, where: SearchFilter
    ) -> KeywordScope | None:
        """Over the rows of one thread: a corpus of thread rows (``thread_id``)."""
        c = corpus_of(corpus)
        if where.channel is None:
            raise InvalidArgument("keyword_scope needs a channel: the thread is the scope")
        c.narrow(where)  # an unsupported filter raises
        gate = thread_gate(without_channel(where))
        phrases = phrase_strings(query)
        a = c.alias
        with self.pool.snapshot() as conn:
            row = conn.execute(
                f"SELECT t.id FROM threads t WHERE t.channel = ?{gate.sql}",
                (where.channel, *gate.params),
            ).fetchone()
            if row is None:
                return None
            thread_id = int(row[0])
            rows = tokens = 0
            for (size,) in conn.execute(
                f"SELECT d.sz FROM {c.table} {a} JOIN {c.fts}_docsize d ON d.id = {a}.id "
                f"WHERE {a}.thread_id = ?",
                (thread_id,),
            ):
                rows += 1
                tokens += decode_varint(bytes(size))[0] if size else 0
            if not phrases or not rows:
                return KeywordScope(rows, tokens, (0,) * len(phrases), ())
            register_functions(conn)
            df = [0] * len(phrases)
            matches: list[RowFrequencies] = []
            for rid, visible, packed in conn.execute(
                f"SELECT {c.public_id}, {c.visible}, {PHRASE_FREQS_FUNCTION}({c.fts}) "
                f"FROM {c.fts} JOIN {c.table} {a} ON {a}.id = {c.fts}.rowid "
                f"JOIN threads t ON t.id = {a}.thread_id "
                f"WHERE {c.fts} MATCH ? AND {a}.thread_id = ?{gate.sql}",
                (any_of(phrases), thread_id, *gate.params),
            ):
                length, *freqs = (int(x) for x in str(packed).split())
                for i, freq in enumerate(freqs):
                    df[i] += freq > 0
                if visible:
                    matches.append(RowFrequencies(str(rid), length, tuple(freqs)))
        return KeywordScope(rows, tokens, tuple(df), tuple(matches))
