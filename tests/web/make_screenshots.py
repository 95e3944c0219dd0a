"""Screenshots of every inspector page at 1280 and 390 px, on demo-like data.

Run: ``.venv/bin/python -m tests.web.make_screenshots [OUT_DIR]`` (default ``docs/screenshots``).
The store is the ``recallbox demo`` thread plus the browser tests' fixture (hostile thread left
out); the real server serves it and Debian's Chromium takes each picture.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from tests.web.browser import launch_browser
from tests.web.fixture_store import DEPLOY, SECRET, build_fixture
from tests.web.server import running

import recallbox
from recallbox.samples.demo import load_sample
from recallbox.web.render import message_url, thread_url

OUT = Path("docs/screenshots")
SIZES = {"1280": {"width": 1280, "height": 1000}, "390": {"width": 390, "height": 844}}


def _pages(demo: str, nested_call: str, long_output: str) -> dict[str, str]:
    return {
        "threads": "/",
        "thread": thread_url(demo),
        "generation": thread_url(DEPLOY, generation=1),
        "message": message_url(nested_call),
        "long-message": message_url(long_output, offset=12_000),
        "search": "/search?q=pg-replica-1&channel=" + thread_url(demo).removeprefix("/threads/"),
        "policy": "/policy",
        "confirm": "/policy/confirm?action=unquarantine&target=" + SECRET,
        "quarantined": thread_url(SECRET),
        "memory": "/memory",
        "knowledge": "/knowledge",
        "code": "/code",
        "hits": "/hits",
    }


def main(out: Path = OUT) -> None:
    """Write ``<page>-<width>.png`` (and ``threads-1280-dark.png``) into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="recallbox-shots-"))
    db = folder / "demo.db"
    with recallbox.open(db) as box:
        demo = load_sample(box)
        fixture = build_fixture(box, folder, hostile=False)
    pages = _pages(demo, fixture.nested_call_id, fixture.long_output_id)
    with running(db, folder / "home") as server, sync_playwright() as playwright:
        browser = launch_browser(playwright)
        for width, viewport in SIZES.items():
            context = browser.new_context(viewport=viewport)  # type: ignore[arg-type]
            page = context.new_page()
            for name, path in pages.items():
                page.goto(server.origin + path)
                page.screenshot(path=str(out / f"{name}-{width}.png"))
            context.close()
        dark = browser.new_context(viewport=SIZES["1280"], color_scheme="dark")  # type: ignore[arg-type]
        page = dark.new_page()
        page.goto(server.origin + pages["thread"])
        page.screenshot(path=str(out / "thread-1280-dark.png"))
        browser.close()
    print(f"wrote {len(pages) * len(SIZES) + 1} screenshots to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
