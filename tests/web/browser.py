"""Debian's Chromium under Playwright, launched the one way that works on these machines.

``playwright install`` cannot download a browser here, so the tests drive the system
``chromium`` (``apt-get install -y chromium``, as ``.ci/run`` does). A missing browser fails the
run: the browser tests never skip.
"""

from __future__ import annotations

import os
import shutil

import pytest
from playwright.sync_api import Browser, Playwright

#: Without the background-networking flags Chromium keeps dialling out on a closed network.
CHROMIUM_FLAGS: tuple[str, ...] = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-gpu",
    "--disable-quic",
)
WIDE = {"width": 1280, "height": 900}
NARROW = {"width": 390, "height": 844}


def chromium_path() -> str:
    """The system Chromium, or a test failure that says how to install it."""
    path = shutil.which("chromium")
    if path is None:
        pytest.fail(
            "Debian's chromium is not installed: run `apt-get install -y chromium` "
            "(the browser tests fail rather than skip without it)"
        )
    return path


def launch_browser(playwright: Playwright) -> Browser:
    """Headless Chromium with the flags above (and ``--no-sandbox`` when running as root)."""
    flags = list(CHROMIUM_FLAGS)
    if os.geteuid() == 0:
        flags.append("--no-sandbox")
    return playwright.chromium.launch(executable_path=chromium_path(), args=flags, headless=True)
