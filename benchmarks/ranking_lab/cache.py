"""Experiment only (#21): cache per-question candidate features of LoCoMo dev for offline tuning.

Reads a database written by ``benchmarks/locomo.py --db PATH`` (turns and text vectors), and
writes ``OUT.npz`` + ``OUT.json``:

* per conversation: message ids in ``seq`` order, ``seq``, generation, ``created_at`` (epoch
  seconds), role, content, FTS5 token count, the text vectors (recomputed with the same
  embedder) and the ``context`` vectors (the embedding of "previous message of the episode +
  this message");
* per question: the query vector, the keyword phrases and the thread-scoped BM25 statistics
  (``store.keyword_scope``: rows, tokens, df, and each matching row's length and phrase
  frequencies), so BM25 can be recomputed offline with any ``k1``/``b``.

The final figures never come from here: ``benchmarks/locomo.py`` runs ``box.search``.

Usage::

    python benchmarks/ranking_lab/cache.py --db /tmp/rk/locomo.db --out /tmp/rk/cache
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import apsw
import numpy as np

import recallbox
from recallbox.embeddings import safe_embed
from recallbox.text.fts_query import build_fts_query
from recallbox.text.normalize import normalize_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import locomo

#: Separator between the previous message and this one in a context text.
CONTEXT_JOIN = "\n"
#: An episode breaks where consecutive ``created_at`` differ by more than this (seconds).
EPISODE_GAP_S = 3600.0


def doc_lengths(db: Path) -> dict[str, int]:
    """uid → FTS5 token count (experiment only: read straight from the docsize table)."""
    from recallbox.storage.sqlite.retrieval import decode_varint

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    out: dict[str, int] = {}
    for uid, size in conn.execute(
        "SELECT m.uid, d.sz FROM messages m JOIN messages_fts_docsize d ON d.id = m.id"
    ):
        out[str(uid)] = decode_varint(bytes(size))[0] if size else 0
    conn.close()
    return out


def embed(embedder: Any, texts: list[str], batch: int = 64) -> np.ndarray:
    out: list[list[float]] = []
    for start in range(0, len(texts), batch):
        vectors = safe_embed(embedder, texts[start : start + batch])
        out.extend(v if v is not None else [0.0] * embedder.dim for v in vectors)
    return np.asarray(out, dtype=np.float32)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    _turns, rows, questions, _counts = locomo.load(args.data)
    lengths = doc_lengths(args.db)
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {"conversations": {}, "questions": []}
    with recallbox.open(args.db, embedder="minilm") as box:
        store = box.store
        for sample in rows:
            channel = f"locomo:{sample}"
            msgs = box.messages(channel)
            ids = [m.id for m in msgs]
            created = [m.created_at.timestamp() for m in msgs]
            gens = [m.generation_id for m in msgs]
            texts = [m.content for m in msgs]
            context = []
            for i, text in enumerate(texts):
                same = (
                    i > 0
                    and gens[i] == gens[i - 1]
                    and created[i] - created[i - 1] <= EPISODE_GAP_S
                )
                context.append(texts[i - 1] + CONTEXT_JOIN + text if same else text)
            start = time.perf_counter()
            arrays[f"{sample}:T"] = embed(box.embedder, texts)
            arrays[f"{sample}:C"] = embed(box.embedder, context)
            print(
                f"{sample}: {len(ids)} turns embedded in {time.perf_counter() - start:.1f} s",
                file=sys.stderr,
            )
            meta["conversations"][sample] = {
                "ids": ids,
                "dia": [m.metadata["dia_id"] for m in msgs],  # scoring only, never ranking
                "seq": [m.seq for m in msgs],
                "generation": gens,
                "created_at": created,
                "role": [m.role for m in msgs],
                "content": texts,
                "doclen": [lengths[i] for i in ids],
            }
        for q in questions:
            text = normalize_text(q.question).strip()
            fts = build_fts_query(text)
            vector = safe_embed(box.embedder, [text], query=True)[0]
            arrays[f"q:{q.qid}"] = np.asarray(vector, dtype=np.float32)
            index = {m: i for i, m in enumerate(meta["conversations"][q.conversation]["ids"])}
            scope = store.keyword_scope(fts.phrases, channel=f"locomo:{q.conversation}")
            meta["questions"].append(
                {
                    "qid": q.qid,
                    "conversation": q.conversation,
                    "category": q.category,
                    "question": q.question,
                    "answer": q.answer,
                    "evidence": q.evidence,
                    "phrases": list(fts.phrases),
                    "literals": list(fts.literals),
                    "scope": None
                    if scope is None
                    else {
                        "rows": scope.rows,
                        "tokens": scope.tokens,
                        "df": list(scope.df),
                        "matches": [[index[m.id], m.length, list(m.freqs)] for m in scope.matches],
                    },
                }
            )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.out.with_suffix(".npz"), **arrays)
    args.out.with_suffix(".json").write_text(json.dumps(meta), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
