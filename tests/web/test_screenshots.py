"""The README's screenshots (#20): made by the browser on the demo data, one per page at 1280
and 390 px plus dark mode, the committed set is the one the script makes, and the README shows
only screenshots that exist."""

from __future__ import annotations

import re
from pathlib import Path

from tests.web.make_screenshots import SIZES, _pages, main

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "docs" / "screenshots"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_every_page_is_screenshot_in_chromium_and_the_committed_set_matches(tmp_path: Path) -> None:
    main(tmp_path)
    names = _pages("demo", "m_0", "m_1")
    expected = {f"{n}-{w}.png" for n in names for w in SIZES} | {"thread-1280-dark.png"}
    made = {p.name for p in tmp_path.glob("*.png")}
    assert made == expected
    assert {p.name for p in COMMITTED.glob("*.png")} == expected
    for name in expected:
        assert (tmp_path / name).read_bytes().startswith(PNG_SIGNATURE), name
        assert (COMMITTED / name).read_bytes().startswith(PNG_SIGNATURE), name


def test_the_readme_shows_screenshots_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r"docs/screenshots/([\w.-]+\.png)", readme)
    assert len(shown) >= 4
    assert all((COMMITTED / name).is_file() for name in shown), shown
