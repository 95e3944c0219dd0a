"""The inspector in a real browser (Debian's Chromium under Playwright) against the real server.

What only a browser shows: forms typed into and submitted, scripts that must not run, the
layout at 1280 and 390 px, keyboard focus, and axe-core's accessibility rules.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright
from tests.web.browser import NARROW, WIDE, launch_browser
from tests.web.conftest import crawl
from tests.web.fixture_store import (
    CANARY_EXCLUDED,
    CANARY_QUARANTINED,
    CODE_FRESH,
    CODE_STALE,
    DEPLOY,
    EXCLUDED_CHANNEL,
    HOSTILE,
    KNOWLEDGE_STALE,
    LONG_END,
    PWNED_FLAG,
    SECRET,
    Fixture,
    build_fixture,
)
from tests.web.server import Server, running

import recallbox
from recallbox.web.render import message_url, thread_url

CANARIES = (CANARY_QUARANTINED, CANARY_EXCLUDED)
#: axe-core impacts that fail a page.
BLOCKING_IMPACTS = frozenset({"serious", "critical"})
#: The inventory pages (#20), each reachable from every page's navigation.
INVENTORY_PAGES = ("/memory", "/knowledge", "/code", "/hits")
#: Another origin, served by the browser itself (page.route), for the cross-site form.
ATTACKER = "http://attacker.invalid/"


@dataclass(frozen=True)
class Site:
    server: Server
    fixture: Fixture
    db: Path


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = launch_browser(playwright)
        yield launched
        launched.close()


def _make_site(folder: Path) -> tuple[Path, Fixture]:
    db = folder / "inspector.db"
    with recallbox.open(db) as box:
        fixture = build_fixture(box, folder)
    return db, fixture


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A read-only site: tests that change the policy start their own."""
    folder = tmp_path_factory.mktemp("site")
    db, fixture = _make_site(folder)
    with running(db, folder / "home") as server:
        yield Site(server, fixture, db)


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    made = browser.new_context(viewport=WIDE)
    yield made
    made.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


def visit(page: Page, url: str, status: int = 200) -> None:
    response = page.goto(url)
    assert response is not None and response.status == status, url


# -- each page renders its expected items -----------------------------------------------------


def test_index_lists_every_thread_and_the_excluded_source(page: Page, site: Site) -> None:
    visit(page, site.server.url)
    rows = page.locator("table.threads tbody tr")
    assert rows.count() == 4
    secret = rows.filter(has_text=SECRET)
    assert secret.locator(".badge.quarantined").inner_text() == "quarantined"
    assert page.locator("ul.sources").inner_text().startswith("private-export.json")
    page.get_by_role("link", name=DEPLOY).click()
    assert page.url == site.server.origin + thread_url(DEPLOY)


def test_thread_timeline_and_generation_messages(page: Page, site: Site) -> None:
    visit(page, site.server.origin + thread_url(DEPLOY))
    assert page.locator("ol.timeline > li").count() == 3
    assert page.locator("ol.timeline > li.selected h3").inner_text().startswith("Generation 3")
    summary = page.locator("details.summary").first
    summary.locator("summary").click()
    assert "rolled out to staging" in summary.inner_text()
    page.get_by_role("link", name="Generation 1", exact=True).click()
    assert page.locator("table.messages tbody tr").count() == 6
    assert page.get_by_text("machine_event").count() == 1
    page.get_by_role("link", name=site.fixture.nested_call_id).click()
    assert page.get_by_role("heading", name="Tool calls").is_visible()


def test_message_tree_is_collapsible(page: Page, site: Site) -> None:
    visit(page, site.server.origin + message_url(site.fixture.nested_call_id))
    files = page.locator("details.tree", has=page.locator("summary", has_text="files")).first
    assert files.get_attribute("open") is not None
    files.locator("summary").first.click()
    assert files.get_attribute("open") is None
    assert page.get_by_text("/srv/billing/deploy.yaml").first.is_hidden()
    files.locator("summary").first.press("Enter")
    assert page.get_by_text("/srv/billing/deploy.yaml").first.is_visible()


def test_search_form_works_by_typing_and_enter(page: Page, site: Site) -> None:
    visit(page, site.server.url)
    page.get_by_role("searchbox", name="Search memory").press_sequentially("rollout")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(r"/search\?q=rollout$"))
    assert page.locator("section.literal article.window").count() >= 1
    page.locator("#channel").press_sequentially(DEPLOY)
    page.locator("#q").press("Enter")
    page.wait_for_url(re.compile(r"channel="))
    assert DEPLOY in page.locator("section.literal p.meta").inner_text()
    sessions = page.locator("section.ranked #bucket-sessions ol.hits")
    assert "carried by" in sessions.inner_text()
    sessions.locator("a").first.click()
    assert "/messages/m_" in page.url


def test_paging_a_long_message_reaches_its_last_character(page: Page, site: Site) -> None:
    visit(page, site.server.origin + message_url(site.fixture.long_output_id))
    texts = [page.locator("pre.audit").inner_text()]
    while page.get_by_role("link", name="Next page →").count():
        page.get_by_role("link", name="Next page →").first.click()
        texts.append(page.locator("pre.audit").inner_text())
    assert len(texts) == 5 and texts[-1].endswith(LONG_END)
    page.get_by_role("link", name="← Previous page").click()
    assert page.locator("pre.audit").inner_text() == texts[-2]


def test_inventory_pages_show_their_items(page: Page, site: Site) -> None:
    visit(page, site.server.origin + "/memory")
    _, evergreen, _, archived, _, _ = site.fixture.memory_keys
    rows = page.locator("table.memory tbody tr")
    assert rows.count() == len(site.fixture.memory_keys)
    assert "never (evergreen)" in page.locator(f"tr#{evergreen}").inner_text()
    assert "already archived" in page.locator(f"tr#{archived}").inner_text()
    page.get_by_label("State").select_option("dormant")
    page.get_by_role("button", name="Show").click()
    page.wait_for_url(re.compile(r"/memory\?type=&state=dormant$"))
    assert page.locator("table.memory tbody tr").count() == 1
    visit(page, site.server.origin + "/knowledge")
    assert "stale: changed" in page.locator("tr", has_text=KNOWLEDGE_STALE).inner_text()
    visit(page, site.server.origin + "/code")
    assert "stale: changed" in page.locator("tr", has_text=CODE_STALE).inner_text()
    assert "up to date" in page.locator("tr", has_text=CODE_FRESH).inner_text()
    visit(page, site.server.origin + "/hits")
    assert page.locator("svg.hits-chart rect.bar").count() >= 1
    assert page.get_by_role("img", name="Recalls per day by domain").is_visible()
    assert page.locator("ol.most-recalled li").count() >= 1


# -- privacy -------------------------------------------------------------------------------------


def test_canaries_appear_nowhere_then_return_through_the_policy_form(
    browser: Browser, tmp_path: Path
) -> None:
    db, fixture = _make_site(tmp_path)
    with running(db, tmp_path / "home") as server:
        context = browser.new_context(viewport=WIDE)
        page = context.new_page()

        def fetch(url: str) -> str:
            response = context.request.get(url)
            assert response.status in (200, 400, 404), url
            return response.text()

        pages = crawl(fetch, server.url, 3)
        assert server.origin + thread_url(SECRET) in pages and len(pages) > 30
        assert all(server.origin + p in pages for p in INVENTORY_PAGES)
        for url, html in pages.items():
            assert not any(c in html for c in CANARIES), url
        visit(page, server.origin + thread_url(SECRET))
        assert page.locator(".notice.denied").inner_text() == "quarantined — 4 messages hidden"
        # release the thread through the form: policy page → confirmation → POST
        visit(page, server.origin + "/policy")
        page.locator("li", has_text=SECRET).get_by_role("link", name="Release…").click()
        assert page.url.startswith(server.origin + "/policy/confirm")
        page.get_by_role("button", name="Release the thread").click()
        page.wait_for_url(re.compile(r"/policy\?done=unquarantine"))
        assert "released" in page.locator(".notice.done").inner_text()
        visit(page, server.origin + message_url(fixture.secret_ids[0]))
        assert CANARY_QUARANTINED in page.locator("pre.audit").inner_text()
        visit(page, server.origin + "/policy")
        page.locator("li", has_text="private-export.json").get_by_role("link", name="Include…").click()
        page.get_by_role("button", name="Include the source again").click()
        page.wait_for_url(re.compile(r"/policy\?done=include"))
        visit(page, server.origin + thread_url(EXCLUDED_CHANNEL))
        assert CANARY_EXCLUDED in page.locator("table.messages").inner_text()
        context.close()


def test_hostile_content_renders_as_text_and_runs_nothing(page: Page, site: Site) -> None:
    violations: list[str] = []
    page.on("console", lambda message: violations.append(message.text))
    for url in ("/", thread_url(HOSTILE), message_url(site.fixture.hostile_id), "/search?q=click+me"):
        visit(page, site.server.origin + url)
        assert page.evaluate(f"window.{PWNED_FLAG}") is None, url
        assert page.locator("script, img:not([src^='/']), svg, iframe").count() == 0, url
    visit(page, site.server.origin + message_url(site.fixture.hostile_id))
    audit = page.locator("pre.audit").inner_text()
    assert f'<script>window.{PWNED_FLAG} = "script"</script>' in audit
    assert page.get_by_text("click me").first.is_visible()
    assert page.locator("a", has_text="click me").count() == 0
    # nothing even tried to run: the escaping holds before the CSP has to
    assert not [v for v in violations if "Content Security Policy" in v]


def test_a_cross_origin_form_post_is_refused(page: Page, site: Site) -> None:
    visit(page, site.server.origin + "/policy/confirm?action=unquarantine&target=" + SECRET)
    token = page.locator("input[name=csrf_token]").get_attribute("value")
    assert token
    # an attacker's site, even one that knows the form token, posting the form to us
    attack = (
        f'<form method="post" action="{site.server.origin}/policy">'
        f'<input name="csrf_token" value="{token}"><input name="action" value="unquarantine">'
        f'<input name="target" value="{SECRET}"><button>go</button></form>'
    )
    page.route(ATTACKER, lambda route: route.fulfill(body=attack, content_type="text/html"))
    visit(page, ATTACKER)
    with page.expect_navigation() as navigation:
        page.get_by_role("button", name="go").click()
    response = navigation.value
    assert response is not None and response.status == 403
    with recallbox.open(site.db) as box:
        assert SECRET in box.policy().quarantined


def test_post_without_a_form_token_is_403(context: BrowserContext, site: Site) -> None:
    response = context.request.post(
        site.server.origin + "/policy",
        form={"action": "unquarantine", "target": SECRET},
        headers={"origin": site.server.origin},
    )
    assert response.status == 403


def test_token_mode_needs_the_token(browser: Browser, site: Site, tmp_path: Path) -> None:
    with running(site.db, tmp_path / "home", "--token", "let-me-in") as server:
        context = browser.new_context(viewport=WIDE)
        page = context.new_page()
        visit(page, server.url, 401)
        visit(page, server.origin + thread_url(DEPLOY) + "?token=let-me-in")
        assert page.url == server.origin + thread_url(DEPLOY)  # the token left the address
        visit(page, server.origin + "/policy")
        context.close()


# -- accessibility, layout, keyboard ------------------------------------------------------------


def page_paths(fixture: Fixture) -> list[str]:
    """One URL of every kind of page."""
    return [
        "/",
        thread_url(DEPLOY),
        thread_url(DEPLOY, generation=1),
        thread_url(SECRET),
        message_url(fixture.nested_call_id),
        message_url(fixture.long_output_id, offset=12_000),
        message_url(fixture.secret_ids[0]),
        message_url(fixture.hostile_id),
        "/search",
        "/search?" + "q=rollout&channel=" + thread_url(DEPLOY).removeprefix("/threads/"),
        "/search?q=billing+rollout",
        *INVENTORY_PAGES,
        "/memory?state=dormant",
        "/policy",
        "/policy/confirm?action=quarantine&target=new-thread",
        "/no-such-page",
    ]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_serious_accessibility_violation_on_any_page(
    browser: Browser, site: Site, scheme: str
) -> None:
    axe = Axe()
    for viewport in (WIDE, NARROW):
        context = browser.new_context(viewport=viewport, color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        for path in page_paths(site.fixture):
            page.goto(site.server.origin + path)
            page.evaluate("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            result = axe.run(page)
            blocking = [
                (v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
                for v in result.response["violations"]
                if v["impact"] in BLOCKING_IMPACTS
            ]
            assert blocking == [], (path, viewport["width"], scheme, json.dumps(blocking))
        context.close()


def _luminance(css_color: str) -> float:
    """Relative luminance (WCAG) of an ``rgb(r, g, b)`` computed colour."""
    channels = [int(v) / 255 for v in re.findall(r"\d+", css_color)[:3]]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def test_pages_follow_the_system_colour_scheme(browser: Browser, site: Site) -> None:
    """``prefers-color-scheme``: light text on a dark page in dark mode, the reverse in light."""
    seen = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=WIDE, color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        for path in ("/", thread_url(DEPLOY), "/hits"):
            visit(page, site.server.origin + path)
            style = "getComputedStyle(document.body)"
            background, text = page.evaluate(f"[{style}.backgroundColor, {style}.color]")
            seen[(scheme, path)] = (_luminance(background), _luminance(text))
        context.close()
    for (scheme, path), (background, text) in seen.items():
        assert (background > text) == (scheme == "light"), (scheme, path, background, text)


def test_no_page_scrolls_sideways_at_390px(browser: Browser, site: Site) -> None:
    context = browser.new_context(viewport=NARROW)
    page = context.new_page()
    for path in page_paths(site.fixture):
        page.goto(site.server.origin + path)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, path
    context.close()


def test_keyboard_skip_link_and_visible_focus(page: Page, site: Site) -> None:
    visit(page, site.server.origin + thread_url(DEPLOY))
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Skip to content"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"
    box = page.locator("a.skip").bounding_box()
    assert box is not None and box["x"] >= 0
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.tagName") == "A"
