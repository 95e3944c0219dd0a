"""The ``search_memory`` half of ``benchmarks/scale.py``: latencies beside same-run baselines,
the completeness check, the acceptance plants and the stress thread (#14).

For one history: ``search_memory`` global, with a channel (the public verb: the literal part
and the other-memory answerer), and the literal part with a channel alone, each timed on
every query of the mix; then the same-run baselines — the naive Python scan (every searchable
message in one list, the same result assembly: the complete answer by construction),
``grep -F`` and ripgrep over an export of the same text — and every answer checked against
the complete one (the same hits, and a "more hits" notice that is the exact count, "1000+",
or a true lower bound). The stress thread (120 × 60 000 characters) is timed the same way.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import scale_baselines as base
import scale_data as data

import recallbox
from recallbox.domains import threads as threads_module
from recallbox.domains.threads import search_literal

CAP_NOTES = ("in this order were checked", "candidate messages only")
NOTICE = "more hits not shown"
STRESS_PASSES_FACTOR = 3  # the stress thread has 6 queries: 3x the passes of the mix


def _notice(text: str) -> str:
    return next((ln for ln in text.splitlines() if NOTICE in ln), "")


def complete_answer(naive: base.NaiveStore, query: str, channel: str | None) -> str:
    """The complete answer: the naive scan with every candidate read and the count exact."""
    saved = threads_module.LITERAL_COUNT_BUDGET
    threads_module.LITERAL_COUNT_BUDGET = 10**12
    try:
        return search_literal(naive, query, channel)  # type: ignore[arg-type]
    finally:
        threads_module.LITERAL_COUNT_BUDGET = saved


def consistent(ours: str, truth: str) -> tuple[bool, bool]:
    """(same hits as the complete answer, a notice it allows): the count is the exact one,
    "1000+" as the exact one, or a true lower bound ("At least N" with N at most the truth)."""
    same = [ln for ln in ours.splitlines() if NOTICE not in ln] == [
        ln for ln in truth.splitlines() if NOTICE not in ln
    ]
    mine, exact = _notice(ours), _notice(truth)
    if mine == exact:
        return same, True
    bound = re.fullmatch(
        r"At least (\d+) more hits not shown; narrow the query to see them\.", mine
    )
    count = re.match(r"(\d+)\+? more hits", exact)
    return same, bool(bound and count and int(bound.group(1)) <= int(count.group(1)))


def channels_for(meta: dict[str, Any]) -> list[str]:
    """The threads the thread-scoped searches rotate through (newest, oldest, plant b, mid)."""
    with recallbox.open(meta["db"]) as box:
        threads = [t.channel for t in box.threads()]
    middle = threads[len(threads) // 2]
    return [threads[-1], threads[0], data.PLANT_B_CHANNEL, middle]


def plants(box: recallbox.Box, naive: base.NaiveStore, meta: dict[str, Any]) -> dict[str, Any]:
    """The acceptance plants (a) and (b), each globally and in its thread."""
    out: dict[str, Any] = {}
    oldest = data.channel_name(0)
    for name, query, channel in (
        ("a_global", data.PLANT_A, None),
        ("a_thread", data.PLANT_A, oldest),
        ("b_global", data.PLANT_B, None),
        ("b_thread", data.PLANT_B, data.PLANT_B_CHANNEL),
    ):
        started = time.perf_counter()
        text = search_literal(box.store, query, channel)
        seconds = time.perf_counter() - started
        same_hits, notice_ok = consistent(text, complete_answer(naive, query, channel))
        entry: dict[str, Any] = {
            "ms": round(seconds * 1000, 1),
            "same_as_naive": same_hits and notice_ok,
            "same_hits_as_naive": same_hits,
            "notice_consistent": notice_ok,
            "cap_note": any(n in text for n in CAP_NOTES),
        }
        if name.startswith("a"):
            entry["found_planted_message"] = meta["plant_a_message_id"] in text
            entry["hits"] = text.count("[message_id=")
        else:
            gens = [line.split("generation=")[1].split()[0] for line in text.splitlines()
                    if line.startswith("[message_id=")]  # fmt: skip
            entry["generations_shown"] = sorted(set(gens))
            entry["notice"] = _notice(text)
        out[name] = entry
    return out


def measure(
    db: Path, meta: dict[str, Any], *, passes: int, naive_every: int = 1
) -> tuple[dict[str, Any], dict[str, Any], base.NaiveStore, float]:
    """``search_memory`` of one history: its operations (with baselines), the correctness
    figures, the naive store (its rows feed ``bm25s``; the caller clears them) and its load
    seconds. ``naive_every`` > 1 runs the global full-history baselines and the global check
    on every ``naive_every``-th query of the mix only (at 1M one full scan takes seconds)."""
    from scale import _op, timed

    size = int(meta["size"])
    queries = [q.text for q in data.query_mix(size, int(meta["identifiers"]))]
    checked = queries[::naive_every]
    meta = {**meta, "db": str(db)}
    channels = channels_for(meta)
    channel_of = {q: channels[i % len(channels)] for i, q in enumerate(queries)}
    print(f"[{size:,}] search_memory: {len(queries)} queries, {passes} timed passes", flush=True)
    with recallbox.open(db) as box:
        box.store.indexer.drain()
        g_times, g_out = timed(lambda q: box.search_memory(q), queries, passes)
        t_times, _ = timed(lambda q: box.search_memory(q, channel_of[q]), queries, passes)
        l_times, l_out = timed(
            lambda q: search_literal(box.store, q, channel_of[q]), queries, passes
        )
    print(f"[{size:,}] naive baseline", flush=True)
    started = time.perf_counter()
    naive = base.NaiveStore(db)
    naive_load = time.perf_counter() - started
    ng_times, ng_out = timed(lambda q: search_literal(naive, q, None), checked, 1, warmup=False)
    nt_times, nt_out = timed(
        lambda q: search_literal(naive, q, channel_of[q]), queries, 1, warmup=False
    )
    export = Path(meta["export_path"])
    grep = {name: base.time_grep(cmd, checked, export) for name, cmd in base.grep_tools().items()}
    ops = {
        "search_memory_global": _op(
            "search_memory(query): global literal search, ms",
            g_times,
            {"naive": ng_times, **grep},
        ),
        "search_memory_thread": _op(
            "search_memory(query, channel): literal part + other-memory answerer, ms",
            t_times,
            {"naive": nt_times},
        ),
        "search_memory_thread_literal": _op(
            "literal part of search_memory(query, channel) alone, ms",
            l_times,
            {"naive": nt_times},
        ),
    }
    with recallbox.open(db) as box:
        plant = plants(box, naive, meta)
    g_ours = dict(zip(queries, g_out, strict=True))
    g_check = [consistent(g_ours[q], complete_answer(naive, q, None)) for q in checked]
    t_check = [
        consistent(o, complete_answer(naive, q, channel_of[q]))
        for q, o in zip(queries, l_out, strict=True)
    ]
    correctness = {
        "global_same_as_naive": sum(g_ours[q] == b for q, b in zip(checked, ng_out, strict=True)),
        "global_same_hits_as_complete": sum(h for h, _ in g_check),
        "global_notice_consistent": sum(n for _, n in g_check),
        "thread_same_as_naive": sum(a == b for a, b in zip(l_out, nt_out, strict=True)),
        "thread_same_hits_as_complete": sum(h for h, _ in t_check),
        "thread_notice_consistent": sum(n for _, n in t_check),
        "global_with_cap_note": sum(any(n in r for n in CAP_NOTES) for r in g_out),
        "queries": len(queries),
        "global_checked_queries": len(checked),
        "differing_global": [
            q for q, (h, n) in zip(checked, g_check, strict=True) if not (h and n)
        ],
        "differing_thread": [
            q for q, (h, n) in zip(queries, t_check, strict=True) if not (h and n)
        ],
        "plants": plant,
    }
    return ops, correctness, naive, naive_load


def run_stress(workdir: Path, passes: int) -> dict[str, Any]:
    """The 120 × 60 000-character stress thread: ``search_memory`` beside the naive scan."""
    from scale import _op, timed

    db = workdir / f"scale-stress-v{data.DATA_VERSION}.db"
    if not db.exists():
        with recallbox.open(db) as box:
            box.append_many(data.STRESS_CHANNEL, data.stress_items())
    queries = list(data.STRESS_QUERIES)
    with recallbox.open(db) as box:
        box.store.indexer.drain()
        times, out = timed(lambda q: box.search_memory(q), queries, passes * STRESS_PASSES_FACTOR)
    naive = base.NaiveStore(db)
    n_times, n_out = timed(
        lambda q: search_literal(naive, q, None),  # type: ignore[arg-type]
        queries,
        passes * STRESS_PASSES_FACTOR,
    )
    op = _op("search_memory(query) on 120 x 60 000 characters, ms", times, {"naive": n_times})
    op["same_as_naive"] = sum(a == b for a, b in zip(out, n_out, strict=True))
    op["consistent_with_complete"] = sum(
        all(consistent(o, complete_answer(naive, q, None)))
        for q, o in zip(queries, out, strict=True)
    )
    return {"dataset": "stress-120x60k", "operations": {"search_memory_global": op}}
