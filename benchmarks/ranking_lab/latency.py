"""The cost of the ranking signals inside ``box.search`` at LoCoMo scale (#21: "the ranking
signals themselves ≤ 5 ms" of a search whose p95 must stay ≤ 150 ms).

For each sampled LoCoMo dev question (categories 1–4, within its conversation's channel, the
default configuration: MiniLM), the plain hybrid (no signals) and the full ranking run back to
back, alternating which goes first, so machine load hits both alike. Inside the full ranking
the signal step (``recallbox.domains.signal_inputs.signal_scores``) is timed as a whole and by
part: its reads (episode breaks, the newest time), the query's own signals (participants,
dates) and the arithmetic (``score_columns``). Wall and thread CPU time are both recorded.

Usage::

    python benchmarks/ranking_lab/latency.py --db /tmp/locomo.db [--every 1] [--out PATH]

``--db`` is a database ``benchmarks/locomo.py --db`` kept (indexed and embedded with MiniLM).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "src"), str(ROOT / "benchmarks")]
import locomo  # noqa: E402

import recallbox  # noqa: E402
import recallbox.domains.sessions as sessions  # noqa: E402
import recallbox.domains.signal_inputs as signal_inputs  # noqa: E402
from recallbox.search import search  # noqa: E402

DEFAULT_OUT = ROOT / "benchmarks" / "results" / "ranking_latency.json"
SIGNAL_BUDGET_MS = 5.0
SEARCH_BUDGET_P95_MS = 150.0
#: The parts of the signal step, timed by wrapping these functions of ``signal_inputs``.
PARTS = {
    "columns": "columns",
    "spans": "timeline_spans",
    "participants": "query_participants",
    "dates": "query_dates",
    "arithmetic": "score_columns",
}
READS = ("episode_breaks", "newest_created_at")


class Clock:
    """Wall and thread-CPU milliseconds per label for the current search."""

    def __init__(self) -> None:
        self.current: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])

    @contextmanager
    def timing(self, label: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            yield
        finally:
            entry = self.current[label]
            entry[0] += (time.perf_counter() - wall) * 1000.0
            entry[1] += (time.thread_time() - cpu) * 1000.0

    def wrap(self, owner: Any, name: str, label: str) -> None:
        real: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.timing(label):
                return real(*args, **kwargs)

        setattr(owner, name, timed)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def summary(values: list[float]) -> dict[str, float]:
    return {
        "p50": pct(values, 0.5),
        "p95": pct(values, 0.95),
        "mean": round(statistics.fmean(values), 3),
    }


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--every", type=int, default=1, help="every N-th scored question")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    _turns, _rows, questions, _counts = locomo.load(args.data)
    sample = [q for q in questions if q.category in locomo.SCORED_CATEGORIES][:: args.every]
    clock = Clock()
    clock.wrap(sessions, "signal_scores", "signals")
    for label, name in PARTS.items():
        clock.wrap(signal_inputs, name, label)
    domains = {
        "plain": sessions.SessionsDomain(sessions.PLAIN_RANKING),
        "full": sessions.SessionsDomain(sessions.DEFAULT_RANKING),
    }
    wall: dict[str, list[float]] = {"plain": [], "full": []}
    cpu: dict[str, list[float]] = {"plain": [], "full": []}
    parts: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"wall": [], "cpu": []})
    load_before = os.getloadavg()
    with recallbox.open(args.db, embedder="minilm") as box:
        for name in READS:
            clock.wrap(box.store, name, "reads")
        store, embedder = box.store, box.embedder
        search(store, embedder, "warm up", channel="locomo:conv-26")  # type: ignore[arg-type]
        for i, q in enumerate(sample):
            order = ("plain", "full") if i % 2 == 0 else ("full", "plain")
            for name in order:
                clock.current.clear()
                started, cpu_started = time.perf_counter(), time.thread_time()
                search(
                    store,  # type: ignore[arg-type]
                    embedder,
                    q.question,
                    channel=f"locomo:{q.conversation}",
                    limit=locomo.RANKING_DEPTH,
                    using=domains[name],
                )
                wall[name].append((time.perf_counter() - started) * 1000.0)
                cpu[name].append((time.thread_time() - cpu_started) * 1000.0)
                if name == "full":
                    for label in ("signals", "reads", *PARTS):
                        w, c = clock.current.get(label, [0.0, 0.0])
                        parts[label]["wall"].append(w)
                        parts[label]["cpu"].append(c)
    load_after = os.getloadavg()
    signals_cpu = summary(parts["signals"]["cpu"])
    report = {
        "benchmark": "ranking_latency",
        "commit": commit(),
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "command": "python benchmarks/ranking_lab/latency.py " + " ".join(sys.argv[1:]),
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "load_average": {"before": load_before, "after": load_after},
        "dataset": "LoCoMo dev, categories 1-4, within each conversation's channel",
        "questions": len(sample),
        "metric": "milliseconds per search; wall (perf_counter) and thread CPU (thread_time)",
        "search": {
            name: {"wall": summary(wall[name]), "cpu": summary(cpu[name])} for name in wall
        },
        "signals": {
            label: {"wall": summary(v["wall"]), "cpu": summary(v["cpu"])}
            for label, v in parts.items()
        },
        "budgets": {
            "signals_ms": SIGNAL_BUDGET_MS,
            "search_p95_ms": SEARCH_BUDGET_P95_MS,
            "signals_cpu_p50_within": signals_cpu["p50"] <= SIGNAL_BUDGET_MS,
            "signals_cpu_p95_within": signals_cpu["p95"] <= SIGNAL_BUDGET_MS,
            "search_full_wall_p95_within": summary(wall["full"])["p95"] <= SEARCH_BUDGET_P95_MS,
        },
    }
    print(json.dumps({k: report[k] for k in ("search", "signals", "budgets")}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
