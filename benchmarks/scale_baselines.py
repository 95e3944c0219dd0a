"""Same-run baselines of ``benchmarks/scale.py``: the naive Python scan, ``grep -F``, ripgrep,
``bm25s`` and an exact numpy nearest-neighbour scan.

* :class:`NaiveStore` holds every searchable message in one Python list, in search order, and
  answers ``literal_candidates`` with a complete ``str.find`` scan, feeding the very same
  result assembly as the index, so both return the same text when the index is complete.
* ``grep -F -i -c`` and ``rg -F -i -c`` scan an export of the same text (one line per message).
* ``bm25s`` ranks the same messages' content (top 10), the plain-BM25 reference.
* ``numpy`` ranks the stored hashing vectors by exact cosine (top 10), the KNN reference.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
from scale_build import SEARCHABLE_SQL

from recallbox.storage.base import CandidateStream, SearchableMessage

TOP_K = 10


@dataclass(slots=True)
class NaiveRow:
    message: SearchableMessage
    content: str
    args: str
    lower_content: str
    lower_args: str


class NaiveStore:
    """Every searchable message in one list, in search order; a full scan per query."""

    def __init__(self, db: Path) -> None:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        self.rows: list[NaiveRow] = []
        for r in conn.execute(SEARCHABLE_SQL):
            message = SearchableMessage(
                id=r[0],
                channel=r[1],
                generation=int(r[2]),
                seq=int(r[3]),
                role=r[4],
                content=r[5],
                tool_calls=json.loads(r[6]) if r[6] is not None else None,
            )
            self.rows.append(NaiveRow(message, r[5], r[7], r[5].lower(), r[7].lower()))
        conn.close()

    def literal_candidates(
        self, term: str, *, channel: str | None, case_sensitive: bool, limit: int, recent: int = 0
    ) -> CandidateStream:
        """Every message holding ``term``, in order: no cap (the complete answer)."""
        del limit, recent
        stream = CandidateStream()
        stream.rows = self._scan(term, channel, case_sensitive)
        return stream

    def _scan(
        self, term: str, channel: str | None, case_sensitive: bool
    ) -> Iterator[SearchableMessage]:
        needle = term if case_sensitive else term.lower()
        for row in self.rows:
            if channel is not None and row.message.channel != channel:
                continue
            if case_sensitive:
                hit = needle in row.content or needle in row.args
            else:
                hit = needle in row.lower_content or needle in row.lower_args
            if hit:
                yield row.message


def grep_tools() -> dict[str, list[str]]:
    """The command prefixes of the grep baselines found on this machine."""
    tools: dict[str, list[str]] = {"grep -F": ["grep", "-F", "-i", "-c", "--"]}
    if shutil.which("rg"):
        tools["ripgrep"] = ["rg", "-F", "-i", "-c", "--no-config", "-j", "1", "--"]
    return tools


def time_grep(command: list[str], queries: list[str], export: Path) -> list[float]:
    """Wall seconds per query (with the child's CPU seconds in ``.cpu``)."""
    from scale import Timings

    timings = Timings()
    for query in queries:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([*command, query, str(export)], capture_output=True, check=False)
        timings.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        timings.cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return timings


class Bm25sBaseline:
    """``bm25s`` over the content of every searchable message (its own tokenizer)."""

    def __init__(self, texts: list[str]) -> None:
        import bm25s

        started = time.perf_counter()
        self.retriever = bm25s.BM25()
        self.retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False),
                             show_progress=False)  # fmt: skip
        self.index_seconds = time.perf_counter() - started
        self.size = len(texts)

    def query(self, text: str) -> Any:
        import bm25s

        tokens = bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        k = min(TOP_K, self.size)
        return self.retriever.retrieve(tokens, k=k, show_progress=False)


class NumpyKnn:
    """Exact cosine top-k over the stored hashing vectors (read from the ``vec0`` table)."""

    def __init__(self, db: Path) -> None:
        import numpy as np

        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.enable_load_extension(True)
        import sqlite_vec

        conn.load_extension(sqlite_vec.loadable_path())
        table = conn.execute(
            "SELECT name FROM sqlite_master WHERE name LIKE 'vec_%' AND sql LIKE '%vec0%'"
        ).fetchone()
        blobs = [bytes(r[0]) for r in conn.execute(f"SELECT embedding FROM {table[0]}")]
        conn.close()
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        self.matrix = matrix / norms
        self.np = np

    def query(self, vector: list[float]) -> Any:
        np = self.np
        q = np.asarray(vector, dtype=np.float32)
        q /= np.linalg.norm(q) or 1.0
        scores = self.matrix @ q
        k = min(TOP_K, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        return top[np.argsort(-scores[top])]
