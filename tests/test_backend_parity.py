"""#16 acceptance: the same data and query give the same answer on both backends.

One generated history (a few hundred messages in several threads, with morphology, identifiers,
CJK, case variants, hidden and quarantined rows) is written through the public API into a
SQLite store and a PostgreSQL store, with the same times, so every stored row but the random
ids is the same. Then:

* **keyword ranking** — for every generated query, ``keyword_ranked`` returns the same
  messages in the same order up to groups of equal score (ids break ties and are random), with
  scores equal to 1e-9 relative: FTS5's ``bm25()`` against the PostgreSQL statistics; and
  ``keyword_scope`` of each thread reports the same statistics;
* **literal search** — ``search_memory`` renders the same text, with and without a channel,
  but for the value of an "At least N more hits" notice: a lower bound each backend takes from
  its own literal index once the count budget is spent (SQLite's from the first rows of its
  word or trigram candidates, or the threads near its walk; PostgreSQL's from every row of its
  probe). There both numbers must be true lower bounds — at most the exact count, which the
  same search gives with an unlimited count budget — and the rest of the text is the same.

The ids are random in production; here both stores draw them from the same counters, so the
id tie-break orders equal scores alike and the texts are compared whole (ids included) — a
stronger check than "the same apart from ids".
"""

from __future__ import annotations

import itertools
import math
import random
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import recallbox
from postgres_server import RecallboxDatabases
from recallbox.storage import codecs
from recallbox.storage.base import SearchFilter
from recallbox.text.fts_query import build_fts_query

SEED = 16
THREADS = 8
MESSAGES = 400
QUERIES = 300
RELATIVE_TOLERANCE = 1e-9
START = datetime(2025, 11, 1, 9, 0, tzinfo=UTC)

WORDS = ["deploy", "deploys", "deployed", "deploying", "deployment", "billing", "bill", "service", "services", "staging", "smoke", "test", "tests", "tested", "testing", "failed", "failure", "fail", "connection", "connections", "refused", "port", "postgres", "replica", "replicas", "run", "running", "runner", "runs", "ran", "generalization", "general", "generally", "happy", "happiness", "relational", "conditional", "electric", "electricity", "adjust", "adjustment", "agreed", "feed", "hopping", "hoping", "sky", "skies", "pony", "ponies", "caress", "caresses", "memory", "memories", "search", "searching", "thread", "threads", "compaction", "recall", "recalled", "café", "naïve", "résumé", "Ärger", "über", "the", "a", "of", "to", "and", "is", "it", "that", "Deploy", "BILLING", "Postgres"]
IDENTIFIERS = ["search_memory", "read_message", "pg-replica-1", "v1.2.3", "src/app.py", "don't"]
CJK = ["召回率", "搜索记忆", "中文", "记忆", "召回", "回率", "かなカナ", "한국어"]


def pick(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(IDENTIFIERS)
    if roll < 0.14:
        return rng.choice(CJK)
    return WORDS[min(int(rng.expovariate(0.07)), len(WORDS) - 1)]


def history(rng: random.Random) -> list[tuple[str, dict[str, object]]]:
    """``(channel, append keyword arguments)`` for every message, in order."""
    out = []
    for i in range(MESSAGES):
        text = " ".join(pick(rng) for _ in range(rng.randrange(1, 30)))
        hidden = rng.random() < 0.1
        out.append(
            (
                f"t{rng.randrange(THREADS)}",
                {
                    "role": rng.choice(["user", "assistant"]),
                    "content": text,
                    "created_at": START + timedelta(minutes=i),
                    "pending": hidden and rng.random() < 0.5,
                    "model_visible": not hidden or rng.random() < 0.5,
                },
            )
        )
    return out


def queries(rng: random.Random) -> list[str]:
    made = [" ".join(pick(rng) for _ in range(rng.randrange(1, 4))) for _ in range(QUERIES)]
    return [*made, "deploy deploy", "search memory", "the", "missing words only", "召回"]


def fill(box: recallbox.Box, rows: list[tuple[str, dict[str, object]]]) -> None:
    """Write ``rows``, with ids drawn from a counter per id prefix (the same on both backends:
    the ids break ties, so equal scores come in the same order, and the texts can be compared
    whole). One counter per prefix, so the n-th message gets the same id whatever order a
    backend makes its ids in (SQLite prepares a batch's message ids before it opens a new
    thread's generation; PostgreSQL after)."""
    counters: dict[str, Iterator[int]] = defaultdict(itertools.count)

    def counted_id(prefix: str) -> str:
        return f"{prefix}{next(counters[prefix]):0{2 * codecs.ID_RANDOM_BYTES}x}"

    real = codecs.new_id
    with pytest.MonkeyPatch.context() as patch:
        for module in list(sys.modules.values()):  # every module that makes ids by that name
            if getattr(module, "new_id", None) is real:
                patch.setattr(module, "new_id", counted_id)
        for channel, fields in rows:
            box.append_many(channel, [fields])
    box.quarantine("t3")


@pytest.fixture(scope="module")
def rows() -> list[tuple[str, dict[str, object]]]:
    return history(random.Random(SEED))


@pytest.fixture
def both(
    tmp_path: Path,
    recallbox_databases: RecallboxDatabases,
    rows: list[tuple[str, dict[str, object]]],
) -> Iterator[tuple[recallbox.Box, recallbox.Box]]:
    with (
        recallbox.open(tmp_path / "parity.db") as lite,
        recallbox.open(recallbox_databases.url("parity")) as pg,
    ):
        fill(lite, rows)
        fill(pg, rows)
        indexer = getattr(lite.store, "indexer", None)
        if indexer is not None:
            indexer.drain()
        yield lite, pg


def groups(hits: list[tuple[str, float]], contents: dict[str, str]) -> list[tuple[float, list[str]]]:
    """Hits best first as ``(score, sorted contents)`` groups of equal score."""
    out: list[tuple[float, list[str]]] = []
    for rid, score in hits:
        if out and math.isclose(out[-1][0], score, rel_tol=RELATIVE_TOLERANCE):
            out[-1][1].append(contents[rid])
        else:
            out.append((score, [contents[rid]]))
    return [(score, sorted(texts)) for score, texts in out]


def contents_of(box: recallbox.Box) -> dict[str, str]:
    return {
        m.id: f"{m.channel}#{m.seq}" for t in box.threads() for m in box.messages(t.channel)
    }


def test_keyword_ranking_is_the_same_bm25_on_both_backends(
    both: tuple[recallbox.Box, recallbox.Box],
) -> None:
    lite, pg = both
    names = (contents_of(lite), contents_of(pg))
    compared = matched = 0
    for query in queries(random.Random(SEED + 1)):
        lexical = build_fts_query(query).lexical
        if lexical.is_empty:
            continue
        for where in (SearchFilter(), SearchFilter(channel="t1")):
            got = [
                box.store.keyword_ranked("message", lexical, where=where, limit=MESSAGES)
                for box in (lite, pg)
            ]
            expected, actual = (groups(hits, n) for hits, n in zip(got, names, strict=True))
            assert [texts for _, texts in actual] == [texts for _, texts in expected], query
            for (want, _), (have, _) in zip(expected, actual, strict=True):
                assert math.isclose(have, want, rel_tol=RELATIVE_TOLERANCE), query
            compared += 1
            matched += bool(expected)
    assert compared > QUERIES and matched > QUERIES * 0.5


def test_thread_statistics_are_the_same_on_both_backends(
    both: tuple[recallbox.Box, recallbox.Box],
) -> None:
    lite, pg = both
    for query in queries(random.Random(SEED + 2))[:60]:
        lexical = build_fts_query(query).lexical
        if lexical.is_empty:
            continue
        for channel in ("t0", "t3", "t5", "nope"):
            where = SearchFilter(channel=channel)
            a, b = (box.store.keyword_scope("message", lexical, where=where) for box in (lite, pg))
            if a is None or b is None:
                assert a is b is None, (query, channel)
                continue
            assert (a.rows, a.tokens, a.df) == (b.rows, b.tokens, b.df), (query, channel)
            name_a, name_b = contents_of(lite), contents_of(pg)
            assert sorted((name_a[m.id], m.length, m.freqs) for m in a.matches) == sorted(
                (name_b[m.id], m.length, m.freqs) for m in b.matches
            ), (query, channel)


_ID = re.compile(r"m_[0-9a-f]{16}")
#: The lower-bound notice of a count stopped by its budget (``domains/threads.py``).
_AT_LEAST = re.compile(r"At least (\d+) more hits not shown")
_EXACT = re.compile(r"(\d+)\+? more hits not shown")


def _exact_count(box: recallbox.Box, query: str, channel: str | None) -> int:
    """The count of hits not shown when every candidate is read (no count budget)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("recallbox.domains.threads.LITERAL_COUNT_BUDGET", 10**9)
        patch.setattr("recallbox.domains.threads.LITERAL_COUNT_ROW_CHARS", 10**9)
        text = box.search_memory(query, channel)
    found = _EXACT.search(text)
    assert found is not None and not _AT_LEAST.search(text), (query, channel)
    return int(found.group(1))


def test_search_memory_says_the_same_on_both_backends(
    both: tuple[recallbox.Box, recallbox.Box],
) -> None:
    lite, pg = both
    asked = [
        *queries(random.Random(SEED + 3))[:80],
        "deploy",  # a common word: the count runs past the budget
        "DEPLOY",
        "Ärger",
        "ärger",
        "pg-replica",
        "回",
        "ta",
        "it",  # a short term: the bounded scan's candidates are every recent message
        "search_memory deploy",
        "zzz-nothing",
    ]
    bounded = 0
    for query in asked:
        for channel in (None, "t1", "t3"):
            expected = lite.search_memory(query, channel)
            got = pg.search_memory(query, channel)
            # The same text, the "At least N" of a count stopped by its budget included.
            assert got == expected, (query, channel)
            assert _ID.search(expected) or "No matches" in expected
            bounds = [int(n) for text in (expected, got) for n in _AT_LEAST.findall(text)]
            if bounds:
                exact = _exact_count(lite, query, channel)
                assert exact == _exact_count(pg, query, channel), (query, channel)
                assert max(bounds) <= exact, (query, channel, bounds, exact)
                bounded += 1
    assert bounded > 5  # the budget ran out often enough for the bounds to be tested
