"""The PNG of ``benchmarks/scale.py``: cost vs history size (matplotlib, the ``bench`` extra).

Two rows: latency (p50 and p95, log-log) of each search operation beside its same-run
baselines. Bottom row: ingest rate (batch and single, per CPU-second of the writing thread,
and all indexes included per CPU-second of the whole process), bytes per message per index,
the cold open, and the resident memory a search process adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

LATENCY_PANELS = (
    "search_memory_global",
    "search_memory_thread",
    "keyword_search",
    "keyword_search_thread",
    "hybrid_search",
    "hybrid_search_thread",
)
SIZE_GROUPS = ("content", "fts", "literal", "vectors")


def _sized(report: dict[str, Any]) -> list[dict[str, Any]]:
    return sorted(
        (d for d in report["datasets"] if "size" in d and d.get("plot", True)),
        key=lambda d: d["size"],
    )


def _latency(ax: Any, sets: list[dict[str, Any]], name: str) -> None:
    have = [d for d in sets if name in d.get("operations", {})]
    sizes = [d["size"] for d in have]
    for stat, style in (("p95_ms", "o-"), ("p50_ms", "o:")):
        values = [d["operations"][name]["index"][stat] for d in have]
        ax.plot(sizes, values, style, label=f"recallbox {stat[:3]}")
    for base in sorted({b for d in have for b in d["operations"][name]["baselines"]}):
        points = [(d["size"], d["operations"][name]["baselines"][base]["p95_ms"])
                  for d in have if base in d["operations"][name]["baselines"]]  # fmt: skip
        ax.plot([p[0] for p in points], [p[1] for p in points], "s--", alpha=0.7,
                label=f"{base} p95")  # fmt: skip
    ax.set_title(name, fontsize=10)
    ax.set_ylabel("latency, ms")


def _ingest(ax: Any, sets: list[dict[str, Any]]) -> None:
    lines = (
        ("append_many", "messages_per_cpu_s", "append_many (writer CPU)"),
        ("append_many", "messages_per_s", "append_many (wall)"),
        ("append", "messages_per_cpu_s", "append (writer CPU)"),
        ("all_indexed", "messages_per_process_cpu_s", "all indexed (process CPU)"),
    )
    for verb, field, label in lines:
        points = [(d["size"], d["ingest"][verb][field]) for d in sets
                  if field in d.get("ingest", {}).get(verb, {})]  # fmt: skip
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", label=label)
    ax.axhline(5000, color="grey", lw=0.8, ls="--", label="target batch 5 000/s")
    ax.axhline(1000, color="grey", lw=0.8, ls=":", label="target single 1 000/s")
    ax.set_title("ingest", fontsize=10)
    ax.set_ylabel("messages/s")


def _size(ax: Any, sets: list[dict[str, Any]]) -> None:
    have = [d for d in sets if "storage" in d]
    for group in SIZE_GROUPS:
        points = [(d["size"], d["storage"]["bytes_per_message_by_index"].get(group, 0))
                  for d in have]  # fmt: skip
        if any(p[1] for p in points):
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", label=group)
    words = [(d["size"], d["storage_main"]["bytes_per_message_by_index"]["words"]) for d in sets
             if "words" in d.get("storage_main", {}).get("bytes_per_message_by_index", {})]  # fmt: skip
    if words:
        ax.plot([w[0] for w in words], [w[1] for w in words], "o--", label="words (main's run)")
    ax.plot([d["size"] for d in have], [d["storage"]["bytes_per_message"] for d in have], "k^-",
            label="whole file")  # fmt: skip
    ax.set_title("bytes per message", fontsize=10)
    ax.set_ylabel("bytes")


def _probe(ax: Any, sets: list[dict[str, Any]]) -> None:
    have = [d for d in sets if "probe" in d]
    sizes = [d["size"] for d in have]
    ax.plot(sizes, [d["probe"]["open_and_first_search_ms"] for d in have], "o-",
            label="cold open + first search, ms")  # fmt: skip
    ax.plot(sizes, [d["probe"].get("open_ms", 0) for d in have], "o:", label="open, ms")
    ax.plot(sizes, [d["probe"].get("peak_over_open_mib", d["probe"]["peak_rss_mib"])
                    for d in have], "s--", label="search RSS added, MiB")  # fmt: skip
    ax.axhline(500, color="grey", lw=0.8, ls="--", label="target open 500 ms")
    ax.set_title("cold open and search memory", fontsize=10)


def _has_positive(ax: Any) -> bool:
    """True when a line or bar of ``ax`` has a value above zero (a log axis needs one)."""
    values = [y for line in ax.get_lines() for y in line.get_ydata()]
    values += [patch.get_height() for patch in ax.patches]
    return any(isinstance(y, int | float) and y > 0 for y in values)


def plot(report: dict[str, Any], out: Path) -> None:
    """Write the figure of ``report`` (``benchmarks/results/scale.json``) to ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sets = _sized(report)
    if not sets:
        return
    fig, grid = plt.subplots(3, 3, figsize=(14, 12))
    axes = list(grid.flat)
    for ax, name in zip(axes, LATENCY_PANELS, strict=False):
        _latency(ax, sets, name)
    _ingest(axes[6], sets)
    _size(axes[7], sets)
    _probe(axes[8], sets)
    for ax in axes:
        ax.set_xscale("log")
        # a partial run (--index-only, --ranked-only) leaves some panels without data
        if _has_positive(ax):
            ax.set_yscale("log")
        ax.set_xlabel("messages in history")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"recallbox cost vs history size — {_caption(report)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)


def _caption(report: dict[str, Any]) -> str:
    machine = report.get("machine", {})
    return (
        f"commit {report.get('commit', '?')}, {machine.get('cpus', '?')} CPUs, "
        f"SQLite {machine.get('sqlite', '?')}; latency: wall time on a shared machine; "
        "ingest: CPU time (writer thread, or every thread of the process)"
    )
