"""Experiment only (#21): random search of the signal weights over the cached features.

Stores, for every sampled setting, each question's turn R@10 and session R@10, so that the
leave-one-conversation-out figure (choose on six conversations, score the seventh) and the
flatness of the surface can be read afterwards (``loo.py``).

Usage::

    python benchmarks/ranking_lab/search.py --cache /tmp/rk/cache --n 400 --out /tmp/rk/rs.npz
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab

SPACES: dict[str, dict[str, list[object]]] = {}
SPACES["sum"] = {
    "ctx_kind": ["sum"],
    "k1": [0.9, 1.2, 1.5],
    "b": [0.1, 0.2, 0.3],
    "ctx_alpha": [0.5, 0.7, 1.0],
    "ctx_beta": [0.0, 0.3, 0.5],
    "w_ctx": [0.4, 0.6, 0.8, 1.0],
    "w_nb": [0.3, 0.4, 0.5, 0.6],
    "nb_window": [2, 3],
    "w_ep": [0.3, 0.4, 0.5, 0.6, 0.75],
    "w_epk": [0.0, 0.1, 0.2],
    "w_part": [0.2, 0.25, 0.3, 0.35, 0.4],
    "part_others": [0.0, 0.5],
    "w_date": [0.3, 0.4, 0.5, 0.6, 0.7],
    "date_tol": [2, 3, 4],
}
SPACES["lin0"] = {
    "ctx_kind": ["lin0"],
    "k1": [1.2],
    "b": [0.1, 0.2, 0.3],
    "ctx_alpha": [0.7, 1.0],
    "ctx_beta": [0.3, 0.5],
    "w_ctx": [0.4, 0.6, 0.8],
    "w_nb": [0.4, 0.5, 0.6, 0.7],
    "nb_window": [2],
    "w_ep": [0.4, 0.5, 0.6, 0.75],
    "w_epd": [0.0, 0.1, 0.2],
    "ep_vec": [0.0, 0.3, 0.6],
    "w_epk": [0.0, 0.1],
    "w_part": [0.25, 0.3, 0.35],
    "part_others": [0.0, 0.5],
    "w_date": [0.4, 0.5, 0.6, 0.7],
    "date_tol": [2, 3, 4],
}
SPACE: dict[str, list[object]] = {
    "k1": [0.9, 1.2, 1.5],
    "b": [0.05, 0.1, 0.2, 0.3],
    "w_ctx": [0.5, 0.6, 0.7, 0.8, 1.0],
    "w_nb": [0.3, 0.4, 0.5, 0.6],
    "nb_window": [2, 3],
    "w_ep": [0.3, 0.4, 0.5, 0.6, 0.75],
    "w_epd": [0.0, 0.1, 0.2],
    "w_part": [0.2, 0.25, 0.3, 0.35, 0.4],
    "part_others": [0.0, 0.5],
    "w_date": [0.3, 0.4, 0.5, 0.6, 0.7],
    "date_tol": [2, 3, 4],
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--n", type=int, default=400)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--pool", type=int, default=400)
    parser.add_argument("--fix", default="{}", help="JSON of parameters held fixed")
    parser.add_argument("--space", default="embed", help="embed or sum")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    _convs, qs = lab.load(args.cache)
    rng = random.Random(args.seed)
    fixed = json.loads(args.fix)
    base = replace(lab.Params(), kw_pool=args.pool, vec_pool=args.pool, **fixed)
    settings, r10, s10 = [], [], []
    for i in range(args.n):
        space = SPACE if args.space == "embed" else SPACES[args.space]
        choice = {k: rng.choice(v) for k, v in space.items() if k not in fixed}
        p = replace(base, **choice)
        rows = lab.evaluate(qs, p)
        settings.append(asdict(p))
        r10.append([r["r10"] for r in rows])
        s10.append([r["s10"] for r in rows])
        if i % 20 == 0:
            print(i, round(100 * np.mean(r10[-1]), 2), round(100 * np.mean(s10[-1]), 2), flush=True)
    np.savez_compressed(
        args.out,
        r10=np.asarray(r10),
        s10=np.asarray(s10),
        conv=np.asarray([q.conv.name for q in qs]),
        category=np.asarray([q.category for q in qs]),
    )
    args.out.with_suffix(".json").write_text(json.dumps(settings), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
