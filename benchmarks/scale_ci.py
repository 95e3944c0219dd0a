"""The CI-sized check of ``benchmarks/scale.py`` (``--ci``, ``make bench-scale-ci``, #14 item 7).

At 10k messages, every operation's p95 is divided by its same-run baselines' (the naive scan,
``grep``, ``bm25s``, numpy KNN: ratios, never absolute times — machines are noisy), and the run
fails when a ratio grew more than :data:`CI_REGRESSION_FACTOR` times over the committed
reference run (``benchmarks/results/scale.json``), or when an acceptance plant is answered
differently from the complete naive scan.
"""

from __future__ import annotations

from typing import Any

CI_REGRESSION_FACTOR = 3.0


def ci_check(current: dict[str, Any], reference: dict[str, Any] | None) -> list[str]:
    """Operations whose index/baseline p95 ratio grew more than 3x over the reference's
    (CPU-time ratios where both runs have them: a busy machine distorts them least)."""
    failures = []
    for label, plant in current["correctness"]["plants"].items():
        if not plant["same_as_naive"]:
            failures.append(f"plant {label}: the answer differs from the complete naive scan")
    if reference is None:
        return failures
    for name, op in current["operations"].items():
        ref_op = reference["operations"].get(name)
        if ref_op is None:
            continue
        kind = (
            "ratio_cpu_p95"
            if op.get("ratio_cpu_p95") and ref_op.get("ratio_cpu_p95")
            else "ratio_p95"
        )
        for baseline, ratio in op[kind].items():
            ref = ref_op[kind].get(baseline)
            if ratio is not None and ref and ratio > CI_REGRESSION_FACTOR * ref:
                failures.append(
                    f"{name}: p95 ratio to {baseline} {ratio:.2f} > {CI_REGRESSION_FACTOR}x "
                    f"the reference {ref:.2f}"
                )
    return failures
