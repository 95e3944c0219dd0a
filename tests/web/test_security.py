"""The guard in-process: Host, token, CSRF, the security headers, hostile content as text."""

from __future__ import annotations

import asyncio
import re
from html import unescape
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.web.conftest import BASE
from tests.web.fixture_store import HOSTILE, PWNED_FLAG, SECRET, Fixture

import recallbox
from recallbox.web.app import build_app
from recallbox.web.render import message_url, thread_url
from recallbox.web.security import (
    AUTH_COOKIE,
    CONTENT_SECURITY_POLICY,
    CSRF_FIELD,
    MAX_FORM_BYTES,
    Guard,
    GuardMiddleware,
    split_host,
)

ORIGIN = {"origin": BASE}


def csrf_of(client: TestClient) -> str:
    html = client.get("/policy/confirm", params={"action": "quarantine", "target": "x"}).text
    found = re.search(rf'name="{CSRF_FIELD}" value="([^"]+)"', html)
    assert found is not None
    return found.group(1)


# -- Host (DNS rebinding) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example:8765", "", "[::2]:8765"]
)
def test_a_foreign_host_gets_403(client: TestClient, host: str) -> None:
    response = client.get("/", headers={"host": host})
    assert response.status_code == 403
    assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


def test_explicit_hosts_pin_the_port(box: recallbox.Box) -> None:
    app = build_app(box, allowed_hosts=("127.0.0.1:8765", "localhost:8765"))
    client = TestClient(app, base_url=BASE)
    assert client.get("/healthz").status_code == 200
    assert client.get("/healthz", headers={"host": "localhost:8765"}).status_code == 200
    assert client.get("/healthz", headers={"host": "127.0.0.1:8766"}).status_code == 403
    assert client.get("/healthz", headers={"host": "LOCALHOST:8765"}).status_code == 200


def test_split_host() -> None:
    assert split_host("127.0.0.1:8765") == ("127.0.0.1", "8765")
    assert split_host("[::1]:80") == ("[::1]", "80")
    assert split_host("[::1]") == ("[::1]", None)
    assert split_host("Localhost") == ("localhost", None)


@given(st.text(max_size=40))
def test_host_check_never_raises(host: str) -> None:
    Guard().host_allowed(host)


# -- token ------------------------------------------------------------------------------------


@pytest.fixture
def token_client(box: recallbox.Box, fixture: Fixture) -> TestClient:
    return TestClient(build_app(box, token="s3cret-t0ken"), base_url=BASE, follow_redirects=False)


@pytest.mark.parametrize("path", ["/", "/healthz", "/policy", "/static/style.css", "/nope"])
def test_token_mode_refuses_without_the_token(token_client: TestClient, path: str) -> None:
    response = token_client.get(path)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert token_client.get(path, headers={"authorization": "Bearer wrong"}).status_code == 401
    forged = {"cookie": f"{AUTH_COOKIE}=forged"}
    assert token_client.get(path, headers=forged).status_code == 401


def test_bearer_token_is_accepted(token_client: TestClient) -> None:
    response = token_client.get("/healthz", headers={"authorization": "Bearer s3cret-t0ken"})
    assert (response.status_code, response.text) == (200, "ok")


def test_token_link_sets_a_cookie_and_drops_the_token_from_the_url(token_client: TestClient) -> None:
    response = token_client.get(thread_url(SECRET) + "?generation=1&token=s3cret-t0ken")
    assert response.status_code == 303
    assert response.headers["location"] == "/threads/secret-thread?generation=1"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "s3cret" not in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    token_client.cookies.clear()  # from here on, only what each request carries
    cookie_header = {"cookie": f"{AUTH_COOKIE}={value}"}
    assert token_client.get("/", headers=cookie_header).status_code == 200
    assert token_client.get("/?token=wrong").status_code == 401
    # another app (another process) does not accept this app's cookie
    other = TestClient(build_app(token_client.app.state.inspector.box, token="s3cret-t0ken"), base_url=BASE)
    assert other.get("/", headers=cookie_header).status_code == 401


def _call(guard: Guard, scope: dict[str, Any]) -> list[Any]:
    """Run the guard on one request scope (an app that answers nothing), return what it sent."""
    sent: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        sent.append("app")

    async def receive() -> Any:
        raise AssertionError("the body was read")

    async def send(message: Any) -> None:
        sent.append(message)

    base = {"type": "http", "method": "GET", "scheme": "http", "query_string": b""}
    asyncio.run(GuardMiddleware(app, guard)({**base, **scope}, receive, send))
    return sent


def test_token_link_never_redirects_off_site() -> None:
    sent = _call(
        Guard(token="t"),
        {
            "path": "//evil.example/",
            "raw_path": b"//evil.example/",
            "query_string": b"token=t",
            "headers": [(b"host", b"127.0.0.1:8765")],
        },
    )
    assert sent[0]["status"] == 303
    assert (b"location", b"/evil.example/") in sent[0]["headers"]


# -- CSRF -------------------------------------------------------------------------------------


def _post(client: TestClient, headers: dict[str, str], **form: str) -> Any:
    return client.post("/policy", data=form, headers=headers, follow_redirects=False)


def test_post_without_the_form_token_is_403_and_changes_nothing(
    client: TestClient, box: recallbox.Box
) -> None:
    before = box.policy()
    assert _post(client, ORIGIN, action="unquarantine", target=SECRET).status_code == 403
    assert _post(client, ORIGIN, action="unquarantine", target=SECRET, csrf_token="0" * 64).status_code == 403
    assert box.policy() == before


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"origin": "http://evil.example"},
        {"origin": "http://127.0.0.1:8766"},
        {"origin": "null"},
        {"origin": BASE, "sec-fetch-site": "cross-site"},
        {"origin": BASE, "sec-fetch-site": "same-site"},
    ],
)
def test_post_without_a_same_origin_is_403(
    client: TestClient, box: recallbox.Box, headers: dict[str, str]
) -> None:
    token = csrf_of(client)
    response = _post(client, headers, action="unquarantine", target=SECRET, csrf_token=token)
    assert response.status_code == 403
    assert SECRET in box.policy().quarantined


def test_a_confirmed_post_changes_the_policy_and_redirects(
    client: TestClient, box: recallbox.Box
) -> None:
    token = csrf_of(client)
    headers = {**ORIGIN, "sec-fetch-site": "same-origin"}
    response = _post(client, headers, action="unquarantine", target=SECRET, csrf_token=token)
    assert response.status_code == 303
    assert response.headers["location"] == "/policy?done=unquarantine&target=secret-thread"
    assert SECRET not in box.policy().quarantined
    done = client.get(response.headers["location"]).text
    assert "Done: <code>secret-thread</code> released." in done
    assert _post(client, ORIGIN, action="drop", target="x", csrf_token=token).status_code == 400


class _Form(HTMLParser):
    """The hidden fields of a page's one POST form."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "input" and found.get("type") == "hidden" and found.get("name"):
            self.fields[str(found["name"])] = str(found.get("value") or "")


def _confirm_and_post(client: TestClient, action: str, target: str) -> int:
    """Open the confirmation page of ``action`` on ``target``, then submit its form as is."""
    page = client.get("/policy/confirm", params={"action": action, "target": target})
    assert page.status_code == 200 and 'method="post" action="/policy"' in page.text
    form = _Form()
    form.feed(page.text)
    assert set(form.fields) == {CSRF_FIELD, "action", "target"}
    return int(_post(client, ORIGIN, **form.fields).status_code)


def test_each_policy_change_goes_through_its_confirmation_form(
    client: TestClient, box: recallbox.Box
) -> None:
    """Quarantine, unquarantine, exclude and include: each reached from its confirmation page,
    each changing the stored policy only once its form is posted."""
    steps = [
        ("quarantine", "ops/new thread", lambda p: "ops/new thread" in p.quarantined),
        ("unquarantine", "ops/new thread", lambda p: "ops/new thread" not in p.quarantined),
        ("unquarantine", SECRET, lambda p: SECRET not in p.quarantined),
        ("quarantine", SECRET, lambda p: SECRET in p.quarantined),
        ("exclude", "notes/private.md", lambda p: "notes/private.md" in p.excluded_sources),
        ("include", "notes/private.md", lambda p: "notes/private.md" not in p.excluded_sources),
    ]
    for action, target, holds in steps:
        before = box.policy()
        client.get("/policy/confirm", params={"action": action, "target": target})
        assert box.policy() == before  # the confirmation page changes nothing
        assert _confirm_and_post(client, action, target) == 303, action
        assert holds(box.policy()), (action, target)


def test_a_form_token_of_another_app_is_refused(client: TestClient, box: recallbox.Box) -> None:
    other = TestClient(build_app(box), base_url=BASE)
    response = _post(other, ORIGIN, action="unquarantine", target=SECRET, csrf_token=csrf_of(client))
    assert response.status_code == 403


def test_an_oversized_body_is_refused(client: TestClient) -> None:
    token = csrf_of(client)
    response = _post(client, ORIGIN, action="exclude", target="x" * MAX_FORM_BYTES, csrf_token=token)
    assert response.status_code == 413


def test_a_refused_post_reads_nothing_of_the_body() -> None:
    """The Origin check answers before the body is received at all (``receive`` raises)."""
    headers = [(b"host", b"127.0.0.1:8765"), (b"origin", b"http://evil.example")]
    sent = _call(Guard(), {"method": "POST", "path": "/policy", "headers": headers})
    assert sent[0]["status"] == 403 and "app" not in sent


# -- headers and hostile content --------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/policy", "/search?q=x", "/static/style.css", "/nope"])
def test_every_response_carries_the_security_headers(client: TestClient, path: str) -> None:
    headers = client.get(path).headers
    assert headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert "script-src" not in CONTENT_SECURITY_POLICY and "default-src 'none'" in CONTENT_SECURITY_POLICY
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["cache-control"] == "no-store"


class _Markup(HTMLParser):
    """Every element and attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]


#: Every element the templates use: stored text can add none.
TEMPLATE_TAGS = {
    "html", "head", "meta", "title", "link", "body", "a", "header", "nav", "ul", "ol", "li",
    "form", "label", "input", "main", "footer", "p", "code", "h1", "h2", "h3", "section", "div",
    "table", "caption", "thead", "tbody", "tr", "th", "td", "span", "br", "time", "dl", "dt",
    "dd", "details", "summary", "pre", "strong", "button", "article",
}  # fmt: skip


def markup_of(html: str) -> _Markup:
    parser = _Markup()
    parser.feed(html)
    return parser


def test_hostile_content_is_escaped_everywhere(client: TestClient, fixture: Fixture) -> None:
    pages = {
        "index": client.get("/").text,
        "thread": client.get(thread_url(HOSTILE)).text,
        "message": client.get(message_url(fixture.hostile_id)).text,
        "search": client.get("/search", params={"q": "click me"}).text,
        "search-thread": client.get("/search", params={"q": "<script>", "channel": HOSTILE}).text,
        "confirm": client.get("/policy/confirm", params={"action": "quarantine", "target": HOSTILE}).text,
    }
    for name, html in pages.items():
        markup = markup_of(html)
        assert markup.tags <= TEMPLATE_TAGS, name
        for tag, attribute, value in markup.attributes:
            assert not attribute.startswith("on"), (name, tag, attribute)
            if attribute in ("href", "action", "src"):
                assert value.startswith(("/", "#main")), (name, tag, value)
    message = pages["message"]
    assert "&lt;script&gt;window.__recallbox_pwned" in message
    assert "{{ 7 * 7 }}" in message  # data, never a template
    assert "&lt;b&gt;key&lt;/b&gt;" in message  # an argument key
    assert "&lt;b&gt;&amp;&lt;/b&gt;" in pages["index"]  # the channel in the index
    assert PWNED_FLAG in unescape(message)


def test_channel_links_are_our_paths(client: TestClient) -> None:
    html = client.get("/").text
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert all(h.startswith(("/", "#")) for h in hrefs)
    assert thread_url(HOSTILE) in html
