"""Decay reads the hit-log through the shared watermark table after the #10/#12 merge: drills of
memory entries made through ``recall_context`` from the Python API, the MCP tool and the CLI are
folded in by the next ``decay`` (DESIGN §4.3, §5; #10 item 4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

import recallbox
from backends import home_for
from recallbox.config import Settings
from recallbox.domains.memory_ops import remember
from recallbox.mcp_server import build_server
from recallbox.types import DecayTransition

TODAY = date.today()
OLD = TODAY - timedelta(days=400)


def dormant_entry(box: recallbox.Box, text: str) -> str:
    """A guideline created 400 days ago, made dormant by a decay 100 days ago."""
    key = remember(box.store, text, today=OLD).key
    box.decay(TODAY - timedelta(days=100))
    entry = box.store.memory_entry(key)
    assert entry is not None and entry.state == "dormant"
    return key


def watermarks(box: recallbox.Box) -> dict[str, int]:
    return {c: box.store.hit_watermark(c) for c in ("decay", "embed")}


def test_a_recall_context_drill_through_the_mcp_tool_revives_on_the_next_decay(
    db_path: Path,
) -> None:
    with recallbox.open(db_path) as box:
        key = dormant_entry(box, "Drain the ocelot queue before a failover")

    async def go() -> Any:
        async with Client(
            build_server(Settings(home=home_for(db_path), db=str(db_path)))
        ) as client:
            return await client.call_tool("recall_context", {"query": "ocelot queue"})

    found = anyio.run(go)
    assert "Drain the ocelot queue" in found.content[0].text
    with recallbox.open(db_path) as box:
        assert box.store.memory_entry(key).state == "dormant"  # type: ignore[union-attr]
        assert watermarks(box)["decay"] == 0
        report = box.decay(TODAY)
        assert report.references_folded == 1
        assert report.transitions == (
            DecayTransition(key, "dormant", "active", TODAY, f"referenced on {TODAY}"),
        )
        entry = box.store.memory_entry(key)
        assert entry is not None
        assert (entry.state, entry.last_referenced, entry.ref_count) == ("active", TODAY, 1)
        # decay's position is recall's watermark table (consumer, upto); embed's is its own
        assert watermarks(box) == {"decay": box.store.hit_high_water(), "embed": 0}
        again = box.decay(TODAY)
        assert (again.references_folded, again.transitions) == (0, ())


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "RECALLBOX_HOME": str(home_for(db))}
    return subprocess.run(
        [sys.executable, "-m", "recallbox", "--db", str(db), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )


def test_a_cli_recall_context_drill_is_seen_by_a_later_decay_process(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        key = dormant_entry(box, "Rotate the heron credentials monthly")
    shown = _cli(db_path, "recall-context", "heron credentials")
    assert shown.returncode == 0 and "Rotate the heron credentials" in shown.stdout
    decayed = _cli(db_path, "decay", "--json")
    assert decayed.returncode == 0, decayed.stderr
    report = json.loads(decayed.stdout)
    assert report["references_folded"] == 1
    assert [(t["key"], t["from_state"], t["to_state"]) for t in report["transitions"]] == [
        (key, "dormant", "active")
    ]


def test_a_recall_hit_is_not_a_drill(box: recallbox.Box) -> None:
    """``recall`` appends hit rows only (DESIGN §5): showing an entry in a bucket is not a
    reference; only ``recall_context`` (and ``touch``) revive."""
    key = dormant_entry(box, "Snapshot the walrus volume first")
    result = box.recall("walrus volume", domains=["memory"])
    assert [h.id for h in result.buckets["memory"].hits] == [key]
    report = box.decay(TODAY)  # no reference: dormant 100 days, idle 400 -> archived
    assert report.references_folded == 0
    assert [(t.key, t.to_state) for t in report.transitions] == [(key, "archived")]
    box.recall_context("walrus volume")
    assert box.decay(TODAY).references_folded == 1
    assert box.store.memory_entry(key).state == "active"  # type: ignore[union-attr]
