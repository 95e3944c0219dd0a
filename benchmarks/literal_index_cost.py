"""Benchmark: what each full-text index costs per message to write, on its own (#14 ingest).

Writes the first ``--messages`` texts of a scale history's export (``scale_build``'s
``*.export.txt``: one message per line) into a fresh table of each index kind, in one
transaction, and reports CPU per message (and bytes per message) for:

* ``trigram_full`` — the literal index (``messages_literal``: trigram, ``detail=full``);
* ``trigram_none`` — the same with ``detail=none`` (the option the literal plan gave up);
* ``words`` — the word index (``messages_words``), its Python stream and its insert apart;
* ``ranked`` — the ranked index's tokenizer (``messages_fts``: porter unicode61).

A fresh table is the cheapest case (no segment merges against a big index), so these are
lower bounds of what the indexer pays per message on a big history. Usage::

    python benchmarks/literal_index_cost.py --export CACHE/scale-100000-v1.export.txt

Writes ``benchmarks/results/literal_index_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402

from recallbox.storage.sqlite.literal_words import word_stream  # noqa: E402

RESULTS = HERE / "results" / "literal_index_cost.json"
KINDS = {
    "trigram_full": "tokenize='trigram', detail='full'",
    "trigram_none": "tokenize='trigram', detail='none'",
    "words": "tokenize='ascii', detail='full'",
    "ranked": "tokenize='porter unicode61 remove_diacritics 2'",
}


def _texts(export: Path, count: int) -> list[str]:
    texts: list[str] = []
    with export.open(encoding="utf-8") as lines:
        for line in lines:
            _, _, text = line.rstrip("\n").partition("\t")
            texts.append(text.replace("\\n", "\n"))
            if len(texts) >= count:
                break
    return texts


def measure(kind: str, texts: list[str], folder: Path) -> dict[str, Any]:
    """CPU per message to prepare and insert ``texts`` into a fresh ``kind`` table."""
    path = folder / f"{kind}.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE t USING fts5(a, content='', {KINDS[kind]})")
    started = time.process_time()
    rows = [word_stream(text) for text in texts] if kind == "words" else texts
    prepared = time.process_time()
    with conn:
        conn.executemany("INSERT INTO t (rowid, a) VALUES (?, ?)", list(enumerate(rows, 1)))
    inserted = time.process_time()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    count = len(texts)
    return {
        "prepare_ms_per_message": round(1000 * (prepared - started) / count, 4),
        "insert_ms_per_message": round(1000 * (inserted - prepared) / count, 4),
        "bytes_per_message": round(path.stat().st_size / count),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--export", type=Path, required=True)
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    from scale import commit  # not at the top: scale.py imports the benchmark modules

    texts = _texts(args.export, args.messages)
    with tempfile.TemporaryDirectory() as folder:
        kinds = {kind: measure(kind, texts, Path(folder)) for kind in KINDS}
    report = {
        "benchmark": "literal_index_cost",
        "metric": "CPU ms per message to write each index kind into a fresh table",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/literal_index_cost.py " + " ".join(sys.argv[1:]),
        "parameters": {
            "messages": len(texts),
            "mean_chars": round(sum(map(len, texts)) / max(1, len(texts))),
            "sqlite": apsw.sqlite_lib_version(),
        },
        "kinds": kinds,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report["kinds"], indent=1))


if __name__ == "__main__":
    main()
