"""Fixtures of the inspector tests: the fixture store, an in-process client, a crawler."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from starlette.testclient import TestClient
from tests.web.fixture_store import Fixture, build_fixture

import recallbox
from recallbox.web.app import build_app

#: The origin the in-process client speaks as (an allowed loopback Host).
BASE = "http://127.0.0.1:8765"


@pytest.fixture
def fixture(box: recallbox.Box, tmp_path: Path) -> Fixture:
    return build_fixture(box, tmp_path)


def decoded_once(app: Any) -> Any:
    """``app`` with ``scope["path"]`` percent-decoded once from ``raw_path``, as a real server
    (uvicorn) does: Starlette's TestClient decodes it twice (httpx's ``URL.path`` is already
    decoded, and it unquotes that again), so a channel holding ``%00`` reached the route as NUL."""

    async def once(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("raw_path"):
            scope = {**scope, "path": unquote(scope["raw_path"].decode("latin-1"))}
        await app(scope, receive, send)

    return once


def inspector_client(box: recallbox.Box) -> TestClient:
    """A TestClient over the inspector of ``box`` that decodes paths as a real server does."""
    return TestClient(decoded_once(build_app(box)), base_url=BASE)


@pytest.fixture
def client(box: recallbox.Box, fixture: Fixture) -> Iterator[TestClient]:
    with inspector_client(box) as test_client:
        yield test_client


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        wanted = {"a": "href", "link": "href", "form": "action"}.get(tag)
        for name, value in attrs:
            if name == wanted and value:
                self.links.append(value)


def links_of(html: str) -> list[str]:
    """Every ``href`` of ``<a>``/``<link>`` and ``action`` of ``<form>`` in ``html``."""
    parser = _Links()
    parser.feed(html)
    return parser.links


def crawl(fetch: Callable[[str], str], start: str, depth: int) -> dict[str, str]:
    """Every same-origin page reachable from ``start`` in at most ``depth`` links: url → html.

    ``fetch(url)`` returns a page's HTML. Only GET links are followed (forms with
    ``method=post`` are never submitted; GET forms are opened without fields).
    """
    origin = urlsplit(start)[:2]
    seen: dict[str, str] = {}
    frontier = [start]
    for _ in range(depth + 1):
        following: list[str] = []
        for url in frontier:
            if url in seen:
                continue
            seen[url] = html = fetch(url)
            for link in links_of(html):
                target = urljoin(url, link).split("#")[0]
                if urlsplit(target)[:2] == origin and target not in seen:
                    following.append(target)
        frontier = following
    return seen
