"""Experiment only (#21): leave-one-conversation-out over a random search (``search.py``).

For each conversation, the setting with the best mean turn R@10 on the other six is chosen and
scored on the seventh; the LOO figure is the mean over all questions of those held-out scores.
Also prints the best settings on all of dev and how flat the surface is around them.

Usage::

    python benchmarks/ranking_lab/loo.py /tmp/rk/rs.npz
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def main() -> int:
    path = Path(sys.argv[1])
    data = np.load(path)
    settings = json.loads(path.with_suffix(".json").read_text())
    r10, s10, conv = data["r10"], data["s10"], data["conv"]
    mean_r = 100 * r10.mean(axis=1)
    mean_s = 100 * s10.mean(axis=1)
    order = np.argsort(-mean_r)
    print(f"{len(settings)} settings; turn R@10 range {mean_r.min():.2f}–{mean_r.max():.2f}")
    for i in order[:8]:
        diff = {k: v for k, v in settings[i].items() if k in SHOWN}
        print(f"  {mean_r[i]:.2f} S@10 {mean_s[i]:.2f}  {diff}")
    held = np.zeros(r10.shape[1])
    held_s = np.zeros(r10.shape[1])
    for name in np.unique(conv):
        inside = conv != name
        best = int(np.argmax(r10[:, inside].mean(axis=1)))
        held[~inside] = r10[best, ~inside]
        held_s[~inside] = s10[best, ~inside]
        print(
            f"  fold {name}: chose #{best} ({mean_r[best]:.2f} on all), held-out "
            f"{100 * r10[best, ~inside].mean():.2f}"
        )
    print(
        f"LOO turn R@10 {100 * held.mean():.2f}  session R@10 {100 * held_s.mean():.2f};"
        f" all-dev best {mean_r.max():.2f}"
    )
    top = order[: max(1, len(order) // 10)]
    print(
        f"top decile: turn R@10 ≥ {mean_r[top].min():.2f}; "
        f"share of settings ≥ 80: {100 * np.mean(mean_r >= 80):.0f} %"
    )
    return 0


SHOWN = (
    "k1",
    "b",
    "w_ctx",
    "w_nb",
    "nb_window",
    "w_ep",
    "w_epd",
    "w_part",
    "part_others",
    "w_date",
    "date_tol",
    "ctx_alpha",
    "ctx_beta",
)

if __name__ == "__main__":
    raise SystemExit(main())
