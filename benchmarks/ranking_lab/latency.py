"""Experiment only (#21): paired latency of ``box.search``, plain hybrid vs the full ranking.

For each sampled LoCoMo question both rankings run back to back (alternating which goes
first), so machine load hits both alike; the time of the signal step alone is recorded too.

Usage::

    python benchmarks/ranking_lab/latency.py --db /tmp/rk/fresh/locomo.db --every 3
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import locomo

import recallbox
import recallbox.domains.sessions as sessions
from recallbox.search import search


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 2)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--every", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    _turns, _rows, questions, _counts = locomo.load(args.data)
    sample = [q for q in questions if q.category in locomo.SCORED_CATEGORIES][:: args.every]
    signal_ms: list[float] = []
    real = sessions.signal_scores

    def timed(*a: Any, **k: Any) -> Any:
        start = time.perf_counter()
        out = real(*a, **k)
        signal_ms.append((time.perf_counter() - start) * 1000.0)
        return out

    sessions.signal_scores = timed  # type: ignore[assignment]
    times: dict[str, list[float]] = {"plain": [], "full": []}
    rankings = {"plain": sessions.PLAIN_RANKING, "full": sessions.DEFAULT_RANKING}
    with recallbox.open(args.db, embedder="minilm") as box:
        search(box.store, box.embedder, "warm up", channel="locomo:conv-26")  # type: ignore[arg-type]
        for i, q in enumerate(sample):
            order = ("plain", "full") if i % 2 == 0 else ("full", "plain")
            for name in order:
                start = time.perf_counter()
                search(
                    box.store,  # type: ignore[arg-type]
                    box.embedder,
                    q.question,
                    channel=f"locomo:{q.conversation}",
                    limit=locomo.RANKING_DEPTH,
                    ranking=rankings[name],
                )
                times[name].append((time.perf_counter() - start) * 1000.0)
    report = {
        "questions": len(sample),
        **{f"{k}_ms": {"p50": pct(v, 0.5), "p95": pct(v, 0.95)} for k, v in times.items()},
        "signals_ms": {"p50": pct(signal_ms, 0.5), "p95": pct(signal_ms, 0.95)},
        "ratio_full_over_plain_p50": round(pct(times["full"], 0.5) / pct(times["plain"], 0.5), 3),
    }
    print(json.dumps(report))
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
