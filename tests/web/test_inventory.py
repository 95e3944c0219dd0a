"""``/memory``, ``/knowledge``, ``/code``, ``/hits`` and the recall buckets of ``/search``,
in-process over the fixture store; the inventory verbs on their own."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.web.conftest import BASE
from tests.web.fixture_store import (
    CODE_FRESH,
    CODE_STALE,
    KNOWLEDGE_FRESH,
    KNOWLEDGE_STALE,
    MEMORY_ARCHIVED,
    Fixture,
)
from tests.web.test_pages import text_of

import recallbox
from recallbox import DayHits, InvalidArgument
from recallbox.domains import inventory as domain_inventory
from recallbox.ranking.decay import forecast
from recallbox.web import inventory as web_inventory
from recallbox.web.app import build_app
from recallbox.web.inventory import CHART_DAYS, build_chart


def _row(html: str, needle: str) -> str:
    rows = re.findall(r"<tr[ >].*?</tr>", html, re.DOTALL)
    return " ".join(text_of(next(r for r in rows if needle in r)).split())


def test_memory_lists_every_state_with_its_forecast(
    client: TestClient, fixture: Fixture, box: recallbox.Box
) -> None:
    html = client.get("/memory").text
    active, evergreen, dormant, archived, superseded, _ = fixture.memory_keys
    today = datetime.now(UTC).date()
    row = _row(html, f'id="{active}"')
    assert "active" in row and "Migrations first" in row and today.isoformat() in row
    assert (today + timedelta(days=90)).isoformat() in row  # touched today: dormant in 90 days
    assert (today + timedelta(days=180)).isoformat() in row
    assert "never (evergreen)" in _row(html, f'id="{evergreen}"')
    dormant_row = _row(html, f'id="{dormant}"')
    assert "dormant" in dormant_row and "already dormant" in dormant_row
    assert "already archived" in _row(html, f'id="{archived}"')
    assert "superseded by" in _row(html, f'id="{superseded}"')
    for state, count in (("active", 4), ("dormant", 1), ("archived", 1)):
        assert f"<dt>{state}</dt><dd>{count}</dd>" in html
    for entry in box.memories():  # key, ref_count, last reference and evergreen, cell by cell
        cells = re.search(rf'<tr id="{entry.key}".*?</tr>', html, re.DOTALL)
        assert cells is not None, entry.key
        last = entry.last_referenced.isoformat() if entry.last_referenced else "never"
        assert f'<td class="num" data-label="Refs">{entry.ref_count}</td>' in cells.group(0)
        assert f'<td class="time" data-label="Last referenced">{last}</td>' in cells.group(0)
        evergreen = "yes" if entry.evergreen else "no"
        assert f'<td data-label="Evergreen">{evergreen}</td>' in cells.group(0)


def test_memory_forecast_matches_the_decay_rules(box: recallbox.Box, fixture: Fixture) -> None:
    day = date(2030, 1, 1)
    for item in box.memory_forecast(day):
        expected = forecast(item.entry, day)
        assert (item.dormant_on, item.archived_on) == (expected.dormant_on, expected.archived_on)
    before = [(e.key, e.state, e.state_since) for e in box.memories()]
    box.memory_forecast(day + timedelta(days=3650))
    assert [(e.key, e.state, e.state_since) for e in box.memories()] == before  # nothing written


def test_memory_filters_and_refuses_unknown_values(client: TestClient, fixture: Fixture) -> None:
    dormant = client.get("/memory?state=dormant").text
    assert "VPN for staging" in dormant and "Release script" not in dormant
    assert "Release script" in client.get("/memory?type=decision").text
    assert client.get("/memory?state=gone").status_code == 400
    assert client.get("/memory?page=9").status_code == 404


def test_memory_of_an_excluded_memory_md_shows_no_text(box: recallbox.Box, fixture: Fixture) -> None:
    box.exclude_source("MEMORY.md")
    html = TestClient(build_app(box), base_url=BASE).get("/memory").text
    assert "excluded source" in html
    for text in ("Migrations first", "Release script", MEMORY_ARCHIVED[:20]):
        assert text not in html


def test_knowledge_lists_documents_with_counts_and_stale_marks(
    client: TestClient, fixture: Fixture
) -> None:
    html = client.get("/knowledge").text
    stale, fresh = _row(html, KNOWLEDGE_STALE), _row(html, KNOWLEDGE_FRESH)
    assert "stale: changed" in stale and "global library" in stale
    assert "up to date" in fresh and " 1 0 " in f" {fresh} "
    assert "1 stale" in html


def test_knowledge_pages_read_only_their_own_files(
    box: recallbox.Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "many"
    folder.mkdir()
    for n in range(7):
        (folder / f"doc-{n}.md").write_text(f"# Doc {n}\n\n## Part\nbody {n}\n", encoding="utf-8")
    box.sync_directory(folder)
    (folder / "doc-5.md").write_text("# Doc 5\n\n## Part\nchanged\n", encoding="utf-8")
    box.exclude_source("doc-6.md")
    read: list[str] = []
    real = domain_inventory.read_knowledge_file
    monkeypatch.setattr(domain_inventory, "read_knowledge_file", lambda f: read.append(f.source) or real(f))
    pages = [box.knowledge_page(n, 3) for n in (1, 2)]
    assert [d.document.source for p in pages for d in p.documents] == [f"doc-{n}.md" for n in range(6)]
    assert sorted(read) == [f"doc-{n}.md" for n in range(6)]  # each page read its own three
    assert [(p.total, p.denied, p.pages) for p in pages] == [(6, 1, 2), (6, 1, 2)]
    assert [d.stale for d in pages[1].documents] == [None, None, "changed"]
    with pytest.raises(recallbox.NotFound):
        box.knowledge_page(3, 3)
    for bad in ((0, 3), (1, 0), (1, 10**6)):
        with pytest.raises(InvalidArgument):
            box.knowledge_page(*bad)
    with TestClient(build_app(box), base_url=BASE) as client:
        html = client.get("/knowledge").text
    assert "6 indexed documents" in html and "doc-6.md" not in html


def test_code_lists_files_with_symbol_counts_and_stale_marks(
    client: TestClient, fixture: Fixture
) -> None:
    html = client.get("/code").text
    assert "stale: changed" in _row(html, CODE_STALE)
    fresh = _row(html, CODE_FRESH)
    assert "up to date" in fresh and "python" in fresh and "billing-svc" in fresh


def test_code_pages_count_symbols_in_the_store_and_check_only_their_files(
    box: recallbox.Box, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(5):
        (repo / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n\n\ndef g{n}():\n    return f{n}()\n")
    box.index_code(repo)
    (repo / "m3.py").write_text("def changed():\n    return 1\n", encoding="utf-8")
    box.exclude_source("m4.py")
    whole = {f.path: f for f in box.code_files()}

    def no_graph(*args: object, **kwargs: object) -> None:
        raise AssertionError("the code page loaded the whole code graph")

    monkeypatch.setattr(box.store, "code_graph", no_graph)
    checked: list[str] = []
    real = domain_inventory.stale_files
    monkeypatch.setattr(domain_inventory, "stale_files", lambda root, stamps: real(root, [s for s in stamps if not checked.append(s.path)]))  # fmt: skip
    pages = [box.code_page(n, 2) for n in (1, 2)]
    shown = [f for p in pages for f in p.files]
    assert [f.path for f in shown] == ["m0.py", "m1.py", "m2.py", "m3.py"]
    assert checked == ["m0.py", "m1.py", "m2.py", "m3.py"]  # each page stat'ed its own two
    for got in shown:
        expected = whole[got.path]
        assert (got.symbols, got.stale, got.scope, got.language) == (
            expected.symbols, expected.stale, expected.scope, expected.language,
        )  # fmt: skip
    assert [(p.total, p.denied, p.pages) for p in pages] == [(4, 1, 2), (4, 1, 2)]
    assert pages[1].files[1].stale == "changed" and pages[0].scopes == [shown[0].scope]
    with pytest.raises(recallbox.NotFound):
        box.code_page(3, 2)
    with pytest.raises(InvalidArgument):
        box.code_page(0, 2)
    with TestClient(build_app(box), base_url=BASE) as client:
        html = client.get("/code").text
    assert "4 indexed files" in html and "m4.py" not in html and "1 file not shown" in html


def test_a_vanished_file_is_stale_missing(box: recallbox.Box, fixture: Fixture, tmp_path: Path) -> None:
    (tmp_path / "kb" / KNOWLEDGE_FRESH).unlink()
    (tmp_path / "billing-svc" / CODE_FRESH).unlink()
    assert {d.document.source: d.stale for d in box.knowledge_documents()}[KNOWLEDGE_FRESH] == "missing"
    assert {f.path: f.stale for f in box.code_files()}[CODE_FRESH] == "missing"


def test_excluded_documents_and_files_are_counted_never_named(
    box: recallbox.Box, fixture: Fixture
) -> None:
    box.exclude_source(KNOWLEDGE_STALE)
    box.exclude_source(CODE_STALE)
    client = TestClient(build_app(box), base_url=BASE)
    knowledge, code = client.get("/knowledge").text, client.get("/code").text
    assert KNOWLEDGE_STALE not in knowledge and "1 document not shown" in knowledge
    assert CODE_STALE not in code and "1 file not shown" in code
    assert CODE_STALE not in client.get("/hits").text
    box.include_source(KNOWLEDGE_STALE)
    assert KNOWLEDGE_STALE in client.get("/knowledge").text


def test_hits_shows_the_chart_most_and_never_recalled(client: TestClient, fixture: Fixture) -> None:
    html = client.get("/hits").text
    svg = html[html.index("<svg") : html.index("</svg>")]
    today = datetime.now(UTC).date().isoformat()
    assert re.search(rf"<title>{today} · sessions: \d+</title>", svg)
    assert 'class="bar d-sessions"' in svg and "<script" not in svg
    assert "Most recalled" in html and 'href="/messages/m_' in html
    assert "Never recalled" in html and re.search(r"<td>message\w*</td><td class=\"num\">\d+</td>", html)


def test_hits_counts_never_recalled_rows_only_up_to_its_limit(
    box: recallbox.Box, fixture: Fixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    exact = {n.corpus: n for n in box.hit_stats().never_recalled}
    assert exact["message"].count == 2 and not exact["message"].capped
    monkeypatch.setattr(web_inventory, "NEVER_RECALLED_LIMIT", 1)
    with TestClient(build_app(box), base_url=BASE) as client:
        html = client.get("/hits").text
    assert re.search(r'<td>message</td><td class="num">at least 1</td>', html)
    bounded = {n.corpus: n for n in box.hit_overview(never_limit=1).never_recalled}
    assert (bounded["message"].count, bounded["message"].capped) == (1, True)
    assert bounded["message"].examples == exact["message"].examples
    above = {n.corpus: n for n in box.hit_overview(never_limit=3).never_recalled}
    assert (above["message"].count, above["message"].capped) == (2, False)
    for bad in ({"top": 0}, {"never_limit": 0}, {"never_limit": True}, {"top": "3"}):
        with pytest.raises(InvalidArgument):
            box.hit_overview(**bad)  # type: ignore[arg-type]


def test_the_chart_stacks_domains_per_day() -> None:
    today = date(2026, 3, 10)
    rows = [DayHits("2026-03-10", "sessions", 6, 1), DayHits("2026-03-10", "memory", 2, 0),
            DayHits("2026-03-09", "code", 4, 0), DayHits("2025-01-01", "code", 99, 0)]  # fmt: skip
    chart = build_chart(rows, today)
    assert len(chart.days) == CHART_DAYS and chart.days[-1] == "2026-03-10"
    assert chart.peak == 8 and chart.domains == ["memory", "sessions", "code"]
    last = [b for b in chart.bars if b.day == "2026-03-10"]
    assert [b.domain for b in last] == ["memory", "sessions"]
    assert last[0].y + last[0].height == pytest.approx(chart.bottom, abs=0.2)
    assert last[1].y + last[1].height == pytest.approx(last[0].y, abs=0.2)  # stacked on top
    assert all(b.day != "2025-01-01" for b in chart.bars)


def test_hit_days_counts_per_day_and_domain(box: recallbox.Box) -> None:
    box.append("c", "user", "zebra crossing")
    box.search_memory("zebra")
    rows = box.hit_days(7)
    assert rows and all(r.day == datetime.now(UTC).date().isoformat() for r in rows)
    assert sum(r.hits for r in rows) >= 1
    with pytest.raises(InvalidArgument):
        box.hit_days(0)
    assert box.hit_days(1, date(2000, 1, 1)) == []  # a window before every row


def test_search_shows_the_recall_buckets_beside_search_memory(
    client: TestClient, fixture: Fixture
) -> None:
    html = client.get("/search", params={"q": "billing rollout"}).text
    assert "recall buckets" in html and "search_memory" in html
    for domain in ("memory", "knowledge", "sessions", "transcripts", "code"):
        assert f"<h3>{domain}" in html
    assert "carried by" in html and "fused" in html
