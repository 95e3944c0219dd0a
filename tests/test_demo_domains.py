"""``recallbox demo``'s data: its closing ``recall`` finds the billing failure in every domain the
sample loads (memory, knowledge, sessions, code), not only in the thread (#10, #11)."""

from __future__ import annotations

import recallbox
from recallbox.samples.demo import (
    CODE_DEMO_QUERY,
    CODE_DEMO_SCOPE,
    DEMO_RECALL_QUERY,
    run_demo,
)


def test_the_closing_recall_has_hits_in_memory_knowledge_sessions_and_code(
    box: recallbox.Box,
) -> None:
    result = run_demo(box, "pg-replica-1")
    assert result.recalled is not None
    buckets = result.recalled.buckets
    assert result.recalled.query == DEMO_RECALL_QUERY
    assert [h.id for h in buckets["memory"].hits] == ["PIT01"]
    knowledge = buckets["knowledge"].hits
    assert [(h.source, h.lines) for h in knowledge] == [("deploy-runbook.md", (11, 15))]
    assert "connection refused" in knowledge[0].text
    assert buckets["sessions"].hits
    code = buckets["code"].hits
    assert code[0].id == "db.py::connect_replica" and code[0].callers == ("service.py::start",)
    assert code[0].scope == CODE_DEMO_SCOPE
    text = result.recalled.render()
    for label in ("memory", "knowledge", "sessions", "code"):
        assert f"[bucket={label} layer=keyword]" in text
    assert len(text) <= result.recalled.budget_chars


def test_the_code_step_indexes_the_sample_billing_repository(box: recallbox.Box) -> None:
    result = run_demo(box, "pg-replica-1")
    assert result.code is not None
    assert (result.code.scope, result.code.files, result.code.query) == (
        CODE_DEMO_SCOPE,
        3,
        CODE_DEMO_QUERY,
    )
    assert result.code.hits[0].id == "db.py::connect_replica"
    assert [h.id for h in box.callees("service.py::start")] == ["db.py::connect_replica"]
    assert result.curated.memory_keys == ["PIT01", "GDL01", "PRI01"]
