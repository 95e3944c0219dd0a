"""``/memory``, ``/knowledge``, ``/code`` and ``/hits``: the inventories, each a Box verb or two,
rendered (issue #20).

All four are person-facing audit views: a denied document or code file (an excluded source) is
counted, never named; entries of an excluded ``MEMORY.md`` show their metadata, never their
title. The hit-log chart is an inline SVG drawn here from numbers only (no stored text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from starlette.requests import Request
from starlette.responses import Response

from recallbox import DayHits, InvalidArgument
from recallbox.web.params import Pager, int_param, paginate, text_param
from recallbox.web.render import inspector

#: Rows per page of the memory, knowledge and code tables.
INVENTORY_PAGE_SIZE = 100
#: Days the hit-log chart covers (today included).
CHART_DAYS = 30
#: Most recalled targets the hits page lists.
MOST_RECALLED_TOP = 20
#: The chart's drawing box (SVG user units) and its margins.
CHART_WIDTH = 720
CHART_HEIGHT = 220
CHART_LEFT = 44
CHART_BOTTOM = 28
CHART_TOP = 10
#: Memory states in lifecycle order.
MEMORY_STATES: tuple[str, ...] = ("active", "dormant", "archived")
#: The recall domains in the chart's stacking order (any other domain stacks after them).
CHART_DOMAINS: tuple[str, ...] = ("memory", "knowledge", "sessions", "transcripts", "code")
#: Where the hits page stops counting one corpus's never-recalled rows ("at least N").
NEVER_RECALLED_LIMIT = 10_000


def _choice(request: Request, name: str, allowed: Sequence[str]) -> str | None:
    value = text_param(request, name).strip()
    if value and value not in allowed:
        raise InvalidArgument(f"{name} must be one of {', '.join(allowed)}")
    return value or None


def memory(request: Request) -> Response:
    """Memory entries by type and state, with ``ref_count``, last reference and the decay
    forecast (``box.memory_forecast``: nothing written)."""
    app = inspector(request)
    today = datetime.now(UTC).date()
    rows = app.box.memory_forecast(today)
    types = list(dict.fromkeys(f.entry.type for f in rows))
    state = _choice(request, "state", MEMORY_STATES)
    kind = _choice(request, "type", types) if types else None
    counts = {s: sum(1 for f in rows if f.entry.state == s) for s in MEMORY_STATES}
    order = {s: i for i, s in enumerate(MEMORY_STATES)}
    shown = sorted(
        (
            f
            for f in rows
            if (state is None or f.entry.state == state) and kind in (None, f.entry.type)
        ),
        key=lambda f: (types.index(f.entry.type), order.get(f.entry.state, 9), f.entry.key),
    )
    pager = paginate(shown, int_param(request, "page", 1, 1), INVENTORY_PAGE_SIZE)
    return app.page(
        "memory.html", pager=pager, counts=counts, types=types, state=state or "",
        kind=kind or "", today=today, total=len(rows), nav="memory",
    )  # fmt: skip


def knowledge(request: Request) -> Response:
    """Indexed documents with section counts, last sync and the stale mark
    (``box.knowledge_page``: only this page's files are read for the marks)."""
    app = inspector(request)
    found = app.box.knowledge_page(int_param(request, "page", 1, 1), INVENTORY_PAGE_SIZE)
    pager = Pager(found.documents, found.page, found.pages, found.total, found.page_size)
    stale = sum(1 for d in found.documents if d.stale is not None)
    return app.page(
        "knowledge.html", pager=pager, denied=found.denied, stale=stale, nav="knowledge",
    )  # fmt: skip


def code(request: Request) -> Response:
    """Indexed code files with symbol counts, last index and the stale mark
    (``box.code_page``: counts from the store, only this page's files checked)."""
    app = inspector(request)
    found = app.box.code_page(int_param(request, "page", 1, 1), INVENTORY_PAGE_SIZE)
    pager = Pager(found.files, found.page, found.pages, found.total, found.page_size)
    stale = sum(1 for f in found.files if f.stale is not None)
    return app.page(
        "code.html", pager=pager, denied=found.denied, stale=stale, scopes=found.scopes,
        nav="code",
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bar:
    """One stacked segment of the chart (SVG coordinates) and what it counts."""

    x: float
    y: float
    width: float
    height: float
    domain: str
    day: str
    count: int


@dataclass(frozen=True, slots=True)
class Chart:
    """The hit-log chart: segments, axis ticks, the legend's domains, the days it covers."""

    bars: list[Bar]
    ticks: list[tuple[float, int]]
    labels: list[tuple[float, str]]
    domains: list[str]
    days: list[str]
    peak: int
    width: int = CHART_WIDTH
    height: int = CHART_HEIGHT
    left: int = CHART_LEFT
    bottom: int = CHART_HEIGHT - CHART_BOTTOM


def _domain_order(rows: Sequence[DayHits]) -> list[str]:
    seen = {r.domain for r in rows}
    return [d for d in CHART_DOMAINS if d in seen] + sorted(seen - set(CHART_DOMAINS))


def build_chart(rows: Sequence[DayHits], today: date, days: int = CHART_DAYS) -> Chart:
    """Hit rows (recalls) per day, stacked by domain, over the ``days`` days up to ``today``."""
    names = [(today - timedelta(days=days - 1 - i)).isoformat() for i in range(days)]
    domains = _domain_order(rows)
    counts = {(r.day, r.domain): r.hits for r in rows}
    totals = [sum(counts.get((day, d), 0) for d in domains) for day in names]
    peak = max([1, *totals])
    plot_h = CHART_HEIGHT - CHART_BOTTOM - CHART_TOP
    slot = (CHART_WIDTH - CHART_LEFT) / days
    bars: list[Bar] = []
    for i, day in enumerate(names):
        base = float(CHART_HEIGHT - CHART_BOTTOM)
        for domain in domains:
            count = counts.get((day, domain), 0)
            if count:
                height = plot_h * count / peak
                base -= height
                x = CHART_LEFT + i * slot + slot * 0.15
                bars.append(Bar(round(x, 1), round(base, 1), round(slot * 0.7, 1),
                                round(height, 1), domain, day, count))  # fmt: skip
    ticks = [(round(CHART_HEIGHT - CHART_BOTTOM - plot_h * v / peak, 1), v)
             for v in sorted({0, peak // 2, peak})]  # fmt: skip
    step = max(1, days // 6)
    labels = [(round(CHART_LEFT + (i + 0.5) * slot, 1), names[i][5:])
              for i in range(0, days, step)]  # fmt: skip
    return Chart(bars, ticks, labels, domains, names, peak)


def hits(request: Request) -> Response:
    """The hit-log: recalls per day per domain (inline SVG), most and never recalled
    (``box.hit_overview``: never-recalled rows counted up to :data:`NEVER_RECALLED_LIMIT`)."""
    app = inspector(request)
    today = datetime.now(UTC).date()
    rows = app.box.hit_days(CHART_DAYS, today)
    stats = app.box.hit_overview(top=MOST_RECALLED_TOP, never_limit=NEVER_RECALLED_LIMIT)
    return app.page(
        "hits.html", chart=build_chart(rows, today), stats=stats, most=stats.most_recalled,
        rows=rows, nav="hits",
    )  # fmt: skip
