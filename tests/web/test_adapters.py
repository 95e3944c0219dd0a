"""The adapters over Box verbs and fields that are not on main yet: each path, old and new."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import recallbox
from recallbox.web.adapters import (
    EXCLUDED,
    QUARANTINED,
    hit_scores,
    last_activity,
    thread_denial,
    threads_by_activity,
)


def _hit(**fields: Any) -> recallbox.Hit:
    return recallbox.Hit(id="m_1", score=0.7, text="t", domain="sessions", **fields)


def test_hit_scores_from_the_legs() -> None:
    assert hit_scores(_hit(keyword=0.7)).leg == "keyword"
    assert hit_scores(_hit(vector=0.9)).leg == "vector"
    both = hit_scores(_hit(keyword=0.5, vector=0.9))
    assert (both.keyword, both.vector, both.fused) == (0.5, 0.9, 0.7)


def test_hit_scores_prefer_explain() -> None:
    explained = SimpleNamespace(
        score=0.7,
        keyword=0.5,
        vector=0.9,
        explain={"fused": 0.74, "keyword": 0.5, "vector": 0.9, "bm25": 3.2, "leg": "vector"},
    )
    scores = hit_scores(explained)  # type: ignore[arg-type]
    assert (scores.fused, scores.leg, scores.keyword, scores.vector) == (0.74, "vector", 0.5, 0.9)


@dataclass(frozen=True)
class FutureThread:
    """A Thread as DESIGN §9 has it: with ``last_activity`` (and ``excluded``)."""

    channel: str
    created_at: datetime
    last_activity: datetime
    quarantined: bool = False
    excluded: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _at(day: int) -> datetime:
    return datetime(2025, 7, day, tzinfo=UTC)


def test_threads_by_activity_uses_last_activity_once_it_exists() -> None:
    threads = [
        FutureThread("a", created_at=_at(1), last_activity=_at(9)),
        FutureThread("b", created_at=_at(2), last_activity=_at(3)),
        FutureThread("c", created_at=_at(3), last_activity=_at(9)),
    ]
    ordered = threads_by_activity(threads)  # type: ignore[arg-type]
    assert [t.channel for t in ordered] == ["c", "a", "b"]  # ties: newest creation first
    assert last_activity(threads[1]) == _at(3)  # type: ignore[arg-type]


def test_threads_by_activity_falls_back_to_creation(box: recallbox.Box) -> None:
    for channel in ("x", "y"):
        box.create_thread(channel)
    assert [t.channel for t in threads_by_activity(box.threads())] == ["y", "x"]


def test_thread_denial_flags_and_probe(box: recallbox.Box, tmp_path: Any) -> None:
    message = box.append("open", "user", "hello")
    assert thread_denial(box, box.thread("open"), message.id) is None
    assert thread_denial(box, box.thread("open"), None) is None
    box.quarantine("open")
    assert thread_denial(box, box.thread("open"), message.id) == QUARANTINED
    flagged = FutureThread("f", _at(1), _at(1), excluded=True)
    assert thread_denial(box, flagged, None) == EXCLUDED  # type: ignore[arg-type]
