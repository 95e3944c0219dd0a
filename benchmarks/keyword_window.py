"""How far the keyword candidate window (#14, ``RankWindow``) is from the exact ranking.

For each query of ``benchmarks/scale.py``'s mix on a built history, the global keyword ranking
of the sessions domain (``keyword_ranked`` of the message corpus, the 400-row pool the search
fuses) is computed twice on one snapshot: exactly (every match scored) and with the window the
domain uses (``HISTORY_RANK_WINDOW``). Reports, per query and overall: whether the window
applied (more matches than it holds), the top 10 equal, the overlap of the 400-row pools, and
the CPU time of each.

Usage::

    python benchmarks/keyword_window.py --db ~/scale-cache/scale-1000000-v1.db
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT / "src"), str(HERE)]

import scale_build  # noqa: E402
import scale_data as data  # noqa: E402

import recallbox  # noqa: E402
from recallbox.domains.hybrid import HISTORY_RANK_WINDOW  # noqa: E402
from recallbox.domains.sessions import KEYWORD_CANDIDATES  # noqa: E402
from recallbox.storage.base import CORPUS_MESSAGE, EVERYTHING  # noqa: E402
from recallbox.text.fts_query import build_fts_query  # noqa: E402

RESULTS = HERE / "results" / "keyword_window.json"
TOP = 10


def p95(values: list[float]) -> float:
    return round(sorted(values)[int(0.95 * (len(values) - 1))], 1)


def cpu_ms(call: Any) -> tuple[Any, float]:
    started = time.process_time()
    out = call()
    return out, (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    meta = scale_build.load_meta(args.db)
    mix = data.query_mix(int(meta["size"]), int(meta["identifiers"]))
    rows: list[dict[str, Any]] = []
    load_before = os.getloadavg()
    with recallbox.open(args.db) as box:
        store = box.store
        for q in mix:
            lexical = build_fts_query(q.text).lexical
            if lexical.is_empty:
                continue

            def ranked(window: Any, lexical: Any = lexical) -> list[tuple[str, float]]:
                return store.keyword_ranked(
                    CORPUS_MESSAGE, lexical, where=EVERYTHING, limit=KEYWORD_CANDIDATES,
                    window=window,
                )  # fmt: skip

            with store.read_snapshot():
                ranked(HISTORY_RANK_WINDOW)  # warm the pages for both
                exact, exact_ms = cpu_ms(lambda: ranked(None))
                windowed, window_ms = cpu_ms(lambda: ranked(HISTORY_RANK_WINDOW))
            pool = {i for i, _ in exact}
            rows.append(
                {
                    "query": q.text,
                    "band": q.band,
                    "kind": q.kind,
                    "pool": len(exact),
                    "same_top10": [i for i, _ in exact[:TOP]] == [i for i, _ in windowed[:TOP]],
                    "pool_overlap": len(pool & {i for i, _ in windowed}),
                    "exact_cpu_ms": round(exact_ms, 2),
                    "window_cpu_ms": round(window_ms, 2),
                }
            )
            print(f"{q.text!r:36} top10 {rows[-1]['same_top10']!s:5} overlap "
                  f"{rows[-1]['pool_overlap']:3}/{len(pool):3}  exact {exact_ms:7.1f} ms  "
                  f"window {window_ms:6.1f} ms", flush=True)  # fmt: skip
    differ = [r for r in rows if r["pool_overlap"] < r["pool"]]
    report = {
        "benchmark": "keyword_window",
        "commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/keyword_window.py " + " ".join(sys.argv[1:]),
        "dataset": f"synthetic-{meta['size']}",
        "window": {
            "matches": HISTORY_RANK_WINDOW.matches,
            "rare_rows": HISTORY_RANK_WINDOW.rare_rows,
        },
        "pool": KEYWORD_CANDIDATES,
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "summary": {
            "queries": len(rows),
            "window_changed_the_pool": len(differ),
            "same_top10": sum(r["same_top10"] for r in rows),
            "pool_overlap_mean_where_changed": round(
                statistics.fmean(r["pool_overlap"] / r["pool"] for r in differ), 3
            )
            if differ
            else 1.0,
            "exact_cpu_ms_p95": p95([r["exact_cpu_ms"] for r in rows]),
            "window_cpu_ms_p95": p95([r["window_cpu_ms"] for r in rows]),
        },
        "queries": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(report["summary"]))


if __name__ == "__main__":
    main()
