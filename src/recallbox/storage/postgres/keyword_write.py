"""Feeding the keyword index on write: a row's ``fts``/``fts_len`` values and its overflow terms.

Every write of an indexed text computes :func:`~recallbox.storage.postgres.keyword.
keyword_document` of its CJK-segmented form in Python (FTS5's own tokens) and stores the
``tsvector`` literal and the token count in the same statement as the text; a document a
``tsvector`` cannot hold exactly gets ``fts = NULL`` and its terms in the corpus's overflow
table (:func:`put_overflow`). The statistics follow through the corpus's triggers, in the same
transaction.
"""

from __future__ import annotations

from collections.abc import Iterable

from recallbox.storage.postgres.connection import Connection
from recallbox.storage.postgres.keyword import KeywordDocument, keyword_document
from recallbox.storage.postgres.keyword_sql import KeywordCorpus
from recallbox.text.cjk import segment

#: ``%s::tsvector, %s``: the two values :func:`fts_values` returns, in an INSERT or UPDATE.
FTS_MARKS = "%s::tsvector, %s"


def document_of(text: str, *, segmented: bool = False) -> KeywordDocument:
    """The keyword document of ``text`` (segmented here unless it already is)."""
    return keyword_document(text if segmented else segment(text))


def fts_values(doc: KeywordDocument) -> tuple[str | None, int]:
    """``(fts, fts_len)`` to store for ``doc``."""
    return doc.tsvector, doc.length


def put_overflow(
    conn: Connection,
    corpus: KeywordCorpus,
    docs: Iterable[tuple[int, int, KeywordDocument]],
    *,
    replace: bool = False,
) -> None:
    """Write the overflow terms of the inexact documents among ``(row id, scope id, doc)``;
    with ``replace``, first drop the overflow terms the rows had (their text changed)."""
    items = list(docs)
    if replace and items:
        conn.execute(
            f"DELETE FROM {corpus.overflow} WHERE doc_id = ANY(%s::bigint[])",
            ([doc_id for doc_id, _, _ in items],),
        )
    terms: list[str] = []
    doc_ids: list[int] = []
    scopes: list[int] = []
    positions: list[str] = []
    for doc_id, scope_id, doc in items:
        if doc.exact:
            continue
        for term, at in doc.terms:
            terms.append(term)
            doc_ids.append(doc_id)
            scopes.append(scope_id)
            positions.append("{" + ",".join(map(str, at)) + "}")
    if terms:  # one statement: the statistics trigger runs once
        conn.execute(
            f"INSERT INTO {corpus.overflow} (term, doc_id, scope_id, positions) "
            "SELECT u.term, u.doc, u.scope, u.pos::int[] FROM "
            "unnest(%s::text[], %s::bigint[], %s::bigint[], %s::text[]) AS u(term, doc, scope, pos)",
            (terms, doc_ids, scopes, positions),
        )
