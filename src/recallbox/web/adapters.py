"""The inspector's reads of the Box that need verbs or fields not on ``main`` yet.

Every function here is one swap away from its final form; each says what it waits for. Until
then each reads only public Box verbs and types, never the store:

* :func:`hit_scores` — ``Hit.explain`` (DESIGN §9) when filled, else ``Hit.keyword``,
  ``Hit.vector`` and ``Hit.score``;
* :func:`last_activity` — ``Thread.last_activity`` (DESIGN §2, §9) when present, else the
  thread's creation time;
* :func:`thread_denial` — ``Thread.excluded`` when present (DESIGN §5: the audit verbs flag
  their records), else one gated read of the thread's first message.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from recallbox import Box, Hit, NotFound, Thread

#: The privacy notices of a person-facing rendering (DESIGN §5).
QUARANTINED = "quarantined"
EXCLUDED = "excluded source"


@dataclass(frozen=True, slots=True)
class HitScores:
    """Each leg's score of one ranked hit, the fused score and the leg that carried it."""

    keyword: float | None
    vector: float | None
    fused: float
    leg: str


def hit_scores(hit: Hit) -> HitScores:
    """The legs of ``hit``: from ``Hit.explain`` when the seams work has filled it."""
    explain: dict[str, Any] = dict(getattr(hit, "explain", None) or {})
    if explain:
        return HitScores(
            keyword=_number(explain.get("keyword")),
            vector=_number(explain.get("vector")),
            fused=float(explain.get("fused", hit.score)),
            leg=str(explain.get("leg", "")),
        )
    if hit.vector is None:
        leg = "keyword"
    elif hit.keyword is None:
        leg = "vector"
    else:  # both legs ran; which one carried the hit needs the fusion weights (Hit.explain)
        leg = "hybrid"
    return HitScores(keyword=hit.keyword, vector=hit.vector, fused=hit.score, leg=leg)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def last_activity(thread: Thread) -> datetime:
    """When the thread last changed: ``Thread.last_activity`` once it exists, else its
    creation time (the index is then ordered by creation)."""
    value = getattr(thread, "last_activity", None)
    return value if isinstance(value, datetime) else thread.created_at


def threads_by_activity(threads: list[Thread]) -> list[Thread]:
    """Newest activity first; ties by thread creation, newest first (DESIGN §2)."""
    return sorted(threads, key=lambda t: (last_activity(t), t.created_at), reverse=True)


def thread_denial(box: Box, thread: Thread, probe: str | None) -> str | None:
    """:data:`QUARANTINED`, :data:`EXCLUDED` or ``None`` (the thread's text may be shown).

    ``probe`` is the id of any message of the thread shown (``None`` when none is, so nothing
    can leak).
    Until ``Thread.excluded`` exists, an excluded source shows as a gated read that refuses a
    message the audit verb found; that read records one hit-log drill, as every read does.
    """
    if thread.quarantined:
        return QUARANTINED
    flag = getattr(thread, "excluded", None)
    if isinstance(flag, bool):
        return EXCLUDED if flag else None
    if probe is None:
        return None
    try:
        box.read_message(probe, view="model")
    except NotFound:
        return EXCLUDED
    return None
