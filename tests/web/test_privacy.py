"""The person-facing rendering tier (DESIGN §5), in-process: a denied thread shows metadata and
a notice, never text; canaries appear nowhere until the policy releases them."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.web.conftest import BASE, crawl, inspector_client
from tests.web.fixture_store import (
    CANARY_EXCLUDED,
    CANARY_QUARANTINED,
    DEPLOY,
    EXCLUDED_CHANNEL,
    EXCLUDED_FILE,
    SECRET,
    Fixture,
)
from tests.web.test_security import csrf_of

import recallbox
from recallbox.web.render import message_url, thread_url

CANARIES = (CANARY_QUARANTINED, CANARY_EXCLUDED)
CRAWL_DEPTH = 3


def fetch_with(client: TestClient):  # type: ignore[no-untyped-def]
    def fetch(url: str) -> str:
        response = client.get(url)
        assert response.status_code in (200, 400, 404), url
        return response.text

    return fetch


def test_no_canary_on_any_page_reachable_from_the_index(client: TestClient, fixture: Fixture) -> None:
    pages = crawl(fetch_with(client), BASE + "/", CRAWL_DEPTH)
    opened = set(pages)
    for wanted in (thread_url(SECRET), thread_url(EXCLUDED_CHANNEL)):
        assert BASE + wanted in opened
    assert any(message_url(i) in url for url in opened for i in fixture.secret_ids)
    assert len(pages) > 30
    assert all(BASE + p in opened for p in ("/memory", "/knowledge", "/code", "/hits"))
    for url, html in pages.items():
        for canary in CANARIES:
            assert canary not in html, (url, canary)


def test_denied_threads_show_metadata_and_the_notice(client: TestClient, fixture: Fixture) -> None:
    secret = client.get(thread_url(SECRET)).text
    assert "<strong>quarantined</strong> — 4 messages hidden" in secret
    assert "Generation 2" in secret and "Quarantined work" in secret
    assert all(message_url(i) in secret for i in fixture.secret_ids[2:])  # ids stay usable
    assert 'class="preview"' not in secret
    excluded = client.get(thread_url(EXCLUDED_CHANNEL)).text
    assert "<strong>excluded source</strong> — 2 messages hidden" in excluded
    for message_id in fixture.secret_ids:
        page = client.get(message_url(message_id)).text
        assert "<strong>quarantined</strong> — this message is hidden" in page
        assert "Tool calls" not in page and "Metadata" not in page and "Full text" not in page
    page = client.get(message_url(fixture.excluded_ids[0])).text
    assert "<strong>excluded source</strong> — this message is hidden" in page


def test_a_canary_query_answers_like_a_query_that_matches_nothing(client: TestClient) -> None:
    for canary in CANARIES:
        for channel in (None, SECRET, EXCLUDED_CHANNEL):
            params = {"q": canary} | ({"channel": channel} if channel else {})
            nothing = "NOTHINGZ" + canary[8:]
            found = client.get("/search", params=params).text
            baseline = client.get("/search", params={**params, "q": nothing}).text
            assert found.replace(canary, nothing) == baseline


def _post_policy(client: TestClient, action: str, target: str) -> None:
    response = client.post(
        "/policy",
        data={"action": action, "target": target, "csrf_token": csrf_of(client)},
        headers={"origin": BASE},
        follow_redirects=False,
    )
    assert response.status_code == 303


def test_canaries_come_back_after_the_policy_releases_them(
    client: TestClient, fixture: Fixture, box: recallbox.Box
) -> None:
    _post_policy(client, "unquarantine", SECRET)
    assert CANARY_QUARANTINED in client.get(thread_url(SECRET)).text
    assert CANARY_QUARANTINED in client.get(message_url(fixture.secret_ids[1])).text
    assert CANARY_QUARANTINED in client.get("/search", params={"q": CANARY_QUARANTINED}).text
    assert CANARY_EXCLUDED not in client.get(thread_url(EXCLUDED_CHANNEL)).text
    _post_policy(client, "include", EXCLUDED_FILE)
    assert CANARY_EXCLUDED in client.get(thread_url(EXCLUDED_CHANNEL)).text
    assert CANARY_EXCLUDED in client.get(message_url(fixture.excluded_ids[0])).text
    _post_policy(client, "quarantine", DEPLOY)
    assert box.thread(DEPLOY).quarantined
    assert "rolled out" not in client.get(thread_url(DEPLOY)).text
    _post_policy(client, "exclude", EXCLUDED_FILE)
    assert CANARY_EXCLUDED not in client.get(thread_url(EXCLUDED_CHANNEL)).text


@settings(max_examples=40)
@given(
    st.text(min_size=1, max_size=30).filter(
        lambda c: recallbox.normalize_text(c).strip() and c.strip() not in (".", "..")
    )
)
@example("%00")  # percent signs are characters of the channel, decoded once from the URL
@example("a%2Fb c")
def test_any_channel_round_trips_through_its_url(box: recallbox.Box, channel: str) -> None:
    stored = box.create_thread(channel).channel  # what normalises to blank is refused (#17)
    box.append(stored, "user", "hello there")
    response = inspector_client(box).get(thread_url(stored))
    assert response.status_code == 200
    title = re.search(r'<h1 class="channel-title">(.*?)</h1>', response.text, re.S)
    assert title is not None
