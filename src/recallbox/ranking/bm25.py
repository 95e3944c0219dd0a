"""Okapi BM25 exactly as SQLite FTS5's ``bm25()`` computes it, for small in-memory corpora.

FTS5 (``fts5_aux.c``, ``fts5Bm25Function``) scores a row for a query of phrases
``p_1 … p_n`` as::

    score = Σ_i idf(p_i) · f_i · (k1 + 1) / (f_i + k1 · (1 − b + b · D / avgdl))

* ``N`` is the number of rows in the index, ``avgdl`` the total token count of the indexed
  column(s) divided by ``N``, and ``D`` the row's token count — tokens as the index's own
  tokenizer emits them (with ``porter unicode61`` that is stems, punctuation dropped);
* ``f_i`` is the number of occurrences of phrase ``i`` in the row (every start position where
  its tokens appear consecutively);
* ``idf(p) = ln((N − df + 0.5) / (df + 0.5))`` where ``df`` is the number of rows containing the
  phrase, replaced by ``1e-6`` when it is not positive (a phrase in half the rows or more);
* a phrase that appears twice in the query counts twice; ``k1 = 1.2``, ``b = 0.75``.

FTS5 returns ``−score`` (lower is better); recallbox's keyword score is ``s = −bm25() = score``,
which is what :meth:`BM25Corpus.scores` returns. A differential test holds this module to
FTS5's own numbers (relative error below 1e-9) on the same tokens.

Tokenising is the caller's: pass the token lists the index would see.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

#: Term-frequency saturation of FTS5's bm25().
BM25_K1 = 1.2
#: Length normalisation of FTS5's bm25().
BM25_B = 0.75
#: FTS5 replaces a non-positive IDF with this.
BM25_IDF_FLOOR = 1e-6
#: k1 and b of the thread-scoped keyword leg, which computes BM25 here rather than in FTS5
#: (#21): chat turns are short and of similar length, so length normalisation mostly adds
#: noise. Tuned on LoCoMo dev (LOO; README "LoCoMo retrieval"). FTS5's own ``bm25()`` (the
#: unscoped search) keeps 1.2 / 0.75.
SCOPED_BM25_K1 = 1.2
SCOPED_BM25_B = 0.3

#: A global keyword search of a history corpus (messages, transcript chunks) whose query
#: matches more rows than this scores only its candidate set: these newest matches, plus
#: the older rows of its rare phrases (``recallbox.storage.queries.RankWindow``). FTS5 scores
#: about a million rows a second, so a word in most rows of a long history would otherwise
#: cost most of a second; 10 000 rows cost about 10 ms (measured, #14 README "Scale").
#: Not tuned on any data set.
RANK_WINDOW_MATCHES = 10_000
#: A query phrase held by at most this many rows older than the window is searched in full
#: (its older rows join the candidates, scored in Python at a few µs each). Not tuned.
RANK_RARE_PHRASE_ROWS = 1_000

Phrase = Sequence[str]


def bm25_idf(n_rows: int, df: int) -> float:
    """``ln((N − df + 0.5) / (df + 0.5))``, floored at :data:`BM25_IDF_FLOOR` like FTS5."""
    idf = math.log((n_rows - df + 0.5) / (df + 0.5))
    return idf if idf > 0.0 else BM25_IDF_FLOOR


def bm25_score(
    freqs: Sequence[int],
    idfs: Sequence[float],
    length: int,
    avgdl: float,
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> float:
    """``−bm25()`` of one row from its phrase frequencies and length (FTS5's exact arithmetic
    with the default ``k1``/``b``)."""
    norm = k1 * (1.0 - b + b * length / avgdl) if avgdl else 0.0
    score = 0.0
    for freq, idf in zip(freqs, idfs, strict=True):
        if freq:
            score += idf * ((freq * (k1 + 1.0)) / (freq + norm))
    return score


def scope_scores(
    n_rows: int,
    n_tokens: int,
    df: Sequence[int],
    rows: Sequence[tuple[int, Sequence[int]]],
    *,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> list[float]:
    """``−bm25()`` of ``rows`` (``(length, phrase frequencies)``) over a scope of ``n_rows`` rows
    holding ``n_tokens`` tokens, where ``df[i]`` rows hold phrase ``i``."""
    if not n_rows:
        return [0.0] * len(rows)
    idfs = [bm25_idf(n_rows, d) for d in df]
    avgdl = n_tokens / n_rows
    return [bm25_score(freqs, idfs, length, avgdl, k1=k1, b=b) for length, freqs in rows]


def phrase_count(tokens: Sequence[str], phrase: Phrase) -> int:
    """How many times ``phrase`` occurs in ``tokens`` (overlapping occurrences count)."""
    width = len(phrase)
    if width == 0 or width > len(tokens):
        return 0
    if width == 1:
        return sum(1 for token in tokens if token == phrase[0])
    first = phrase[0]
    target = list(phrase)
    return sum(
        1
        for start in range(len(tokens) - width + 1)
        if tokens[start] == first and list(tokens[start : start + width]) == target
    )


class BM25Corpus:
    """A fixed corpus of token lists, scored like an FTS5 table holding the same rows."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self.documents: list[list[str]] = [list(doc) for doc in documents]
        self.n_rows = len(self.documents)
        total = sum(len(doc) for doc in self.documents)
        self.avgdl = total / self.n_rows if self.n_rows else 0.0
        self._counts = [Counter(doc) for doc in self.documents]

    def frequency(self, row: int, phrase: Phrase) -> int:
        """Occurrences of ``phrase`` in row ``row``."""
        if len(phrase) == 1:
            return self._counts[row][phrase[0]]
        return phrase_count(self.documents[row], phrase)

    def df(self, phrase: Phrase) -> int:
        """Number of rows that contain ``phrase``."""
        return sum(1 for row in range(self.n_rows) if self.frequency(row, phrase) > 0)

    def scores(self, phrases: Sequence[Phrase]) -> list[float]:
        """``−bm25()`` of every row for an OR query of ``phrases`` (0.0 for a row that misses)."""
        if not self.n_rows:
            return []
        idfs = [bm25_idf(self.n_rows, self.df(p)) if p else 0.0 for p in phrases]
        return [
            bm25_score(
                [self.frequency(row, p) if p else 0 for p in phrases], idfs, len(doc), self.avgdl
            )
            for row, doc in enumerate(self.documents)
        ]
