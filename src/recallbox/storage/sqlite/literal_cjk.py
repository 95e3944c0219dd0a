"""The CJK index of thread search: short CJK terms found in search order with bounded memory.

A term under 3 characters cannot use the trigram index. A CJK one is found through its
bigrams: a two-character CJK term is one bigram token, a single character a prefix of the
bigrams it starts (DESIGN §3.2, §4.4; the same tokens as the ranked index ``messages_fts``,
so what a short CJK term finds did not change).

``messages_cjk`` holds those tokens for the messages whose content has a CJK character (a
small share of most histories), keyed like the other literal indexes (``thread_id << 32 |
seq``, ``literal_index.py``) and filled from the same backlog by the same indexer. Being
keyed by thread, a common term is walked in search order a block of threads at a time
(``literal_walk.py``), and the ``prefix='1'`` index makes a single character one streamed
term: the ranked index answered the same questions with the whole doclist in memory (a
merged prefix doclist of 10 MiB for one character at a million messages), so the memory of a
search grew with the history.

The text indexed is the bigrams of the content's CJK runs (``text/cjk.py``, as ``segment``
writes them; other words are left out), with the ranked index's tokenizer: the CJK tokens are
exactly the ranked index's. Only the content is indexed (as the ranked index did), never the
arguments. A bigram can be a whole word: erasure optimizes this index like the ranked ones.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from recallbox.storage.sqlite.match import quote_phrase
from recallbox.text.cjk import bigrams, cjk_runs, is_cjk_char, segment

CJK_TABLE = "messages_cjk"
#: The ranked index's tokenizer (``schema.MESSAGES_FTS``): the same CJK tokens.
CJK_TOKENIZER = "porter unicode61 remove_diacritics 2"
#: A short term has at most two CJK characters: one bigram or one prefix, never a phrase.
CJK_OPTIONS = f"tokenize='{CJK_TOKENIZER}', detail='none', prefix='1'"


def cjk_text(content: str | None) -> str | None:
    """What ``messages_cjk`` stores for a message's content: the bigrams of its CJK runs, or
    None when the content has no CJK character (the row is not in this index)."""
    runs = cjk_runs(content) if content else []
    return " ".join(" ".join(bigrams(run)) for run in runs) if runs else None


def cjk_match(term: str) -> str | None:
    """The ``MATCH`` of a term under 3 characters holding CJK, or None (no CJK character):
    two CJK characters as their bigram, one as the prefix of the bigrams it starts."""
    cjk = "".join(c for c in term if is_cjk_char(c))
    if not cjk:
        return None
    if len(cjk) >= 2:
        return quote_phrase(segment(cjk))
    return quote_phrase(cjk) + "*"


def cjk_matcher(conn: apsw.Connection, term: str) -> Callable[[str | None], bool] | None:
    """Whether a content would match :func:`cjk_match` of ``term`` in the CJK index (for the
    rows still queued for it, so an answer never depends on how far the indexer got): its
    tokens through the index's tokenizer hold the term's bigram, or a token starting with its
    one character. None: the term has no CJK character."""
    if cjk_match(term) is None:
        return None
    name, *args = CJK_TOKENIZER.split()
    tokenizer = conn.fts5_tokenizer(name, args)

    def tokens(text: str) -> list[str]:
        found = tokenizer(text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None,
                          include_offsets=False, include_colocated=False)  # fmt: skip
        return [str(token) for token in found]

    cjk = "".join(c for c in term if is_cjk_char(c))
    wanted = tokens(segment(cjk))
    if not wanted:
        return lambda content: False
    prefix = len(cjk) < 2

    def holds(content: str | None) -> bool:
        text = cjk_text(content)
        if text is None:
            return False
        found = tokens(text)
        return any(t.startswith(wanted[0]) for t in found) if prefix else wanted[0] in found

    return holds
