"""How the browser tests launch Chromium (#20): Debian's ``chromium`` by path, ``--no-sandbox``
only as root, and a missing browser fails the run instead of skipping it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from tests.web import browser


class _FakeChromium:
    def __init__(self) -> None:
        self.launched: list[dict[str, Any]] = []

    def launch(self, **options: Any) -> str:
        self.launched.append(options)
        return "browser"


@pytest.mark.parametrize(("uid", "sandboxed"), [(0, False), (1000, True)])
def test_the_system_chromium_is_launched_headless_by_path(
    monkeypatch: pytest.MonkeyPatch, uid: int, sandboxed: bool
) -> None:
    monkeypatch.setattr(browser.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(browser.os, "geteuid", lambda: uid)
    chromium = _FakeChromium()
    assert browser.launch_browser(SimpleNamespace(chromium=chromium)) == "browser"  # type: ignore[arg-type]
    (options,) = chromium.launched
    assert options["executable_path"] == "/usr/bin/chromium" and options["headless"] is True
    assert ("--no-sandbox" not in options["args"]) == sandboxed
    assert set(browser.CHROMIUM_FLAGS) <= set(options["args"])


def test_a_missing_browser_fails_and_never_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)
    with pytest.raises(pytest.fail.Exception, match="apt-get install -y chromium"):
        browser.chromium_path()
    with pytest.raises(pytest.fail.Exception):
        browser.launch_browser(SimpleNamespace(chromium=_FakeChromium()))  # type: ignore[arg-type]
