"""Experiment only (#21): one-at-a-time leave-one-conversation-out for every tuned constant.

Around a centre setting, each constant takes each value of its grid with the others held at the
centre; per held-out conversation the value best on the other six is chosen. Prints, per
constant, the all-dev R@10 of each value, the value each fold chose, and the LOO figure; then
the ablation rows (each component removed, each alone) over the same cached features.

Usage::

    python benchmarks/ranking_lab/per_weight.py --cache /tmp/rk/cache
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab

CENTRE = lab.Params(
    ctx_kind="lin0",
    k1=1.2,
    b=0.3,
    ctx_alpha=1.0,
    ctx_beta=0.3,
    w_ctx=0.6,
    w_nb=0.6,
    nb_window=2,
    w_ep=0.6,
    w_part=0.3,
    part_others=0.5,
    w_date=0.5,
    date_tol=3,
    kw_pool=400,
    vec_pool=400,
)
GRID: dict[str, list[object]] = {
    "k1": [0.9, 1.2, 1.5],
    "b": [0.1, 0.2, 0.3, 0.75],
    "ctx_alpha": [0.5, 0.7, 1.0, 1.5],
    "ctx_beta": [0.0, 0.3, 0.5],
    "w_ctx": [0.0, 0.4, 0.6, 0.8],
    "w_nb": [0.0, 0.4, 0.5, 0.6, 0.7],
    "nb_window": [1, 2, 3],
    "w_ep": [0.0, 0.4, 0.5, 0.6, 0.75],
    "w_part": [0.0, 0.2, 0.3, 0.4],
    "part_others": [0.0, 0.5, 1.0],
    "w_date": [0.0, 0.3, 0.5, 0.7],
    "date_tol": [0, 1, 2, 3, 5],
    "kw_pool": [200, 400],
    "vec_pool": [200, 400],
}
ABLATIONS: dict[str, dict[str, object]] = {
    "plain hybrid": {
        "k1": 1.2, "b": 0.75, "w_ctx": 0.0, "w_nb": 0.0, "w_ep": 0.0, "w_part": 0.0,
        "w_date": 0.0, "kw_pool": 200, "vec_pool": 200,
    },
    "full": {},
    "− BM25 b (0.75)": {"b": 0.75},
    "− context": {"w_ctx": 0.0},
    "− neighbour": {"w_nb": 0.0},
    "− episode": {"w_ep": 0.0},
    "− participant": {"w_part": 0.0},
    "− date": {"w_date": 0.0},
    "structural only (− participant − date)": {"w_part": 0.0, "w_date": 0.0},
    "pools 200": {"kw_pool": 200, "vec_pool": 200},
}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    _convs, qs = lab.load(args.cache)
    conv = np.asarray([q.conv.name for q in qs])
    report: dict[str, object] = {"centre": asdict(CENTRE), "constants": {}, "ablations": {}}
    for name, values in GRID.items():
        r10 = np.asarray(
            [[r["r10"] for r in lab.evaluate(qs, replace(CENTRE, **{name: v}))] for v in values]
        )
        held = np.zeros(len(qs))
        chosen = []
        for c in np.unique(conv):
            inside = conv != c
            best = int(np.argmax(r10[:, inside].mean(axis=1)))
            chosen.append(values[best])
            held[~inside] = r10[best, ~inside]
        row = {
            "values": {str(v): round(100 * float(r10[i].mean()), 2) for i, v in enumerate(values)},
            "folds_chose": chosen,
            "loo": round(100 * float(held.mean()), 2),
        }
        report["constants"][name] = row  # type: ignore[index]
        print(f"{name:12s} {row['values']}  folds chose {chosen}  LOO {row['loo']}", flush=True)
    for label, change in ABLATIONS.items():
        rows = lab.evaluate(qs, replace(CENTRE, **change))
        m = lab.mean_metrics(rows)
        cat = lab.by_category(qs, rows)
        report["ablations"][label] = {**m, **{f"cat{c}": v for c, v in cat.items()}}  # type: ignore[index]
        print(lab.fmt(label, qs, rows), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
