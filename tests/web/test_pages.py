"""Each page, in-process: what it shows for the fixture store, and its errors."""

from __future__ import annotations

import re
from html import unescape
from itertools import pairwise
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient
from tests.web.conftest import BASE, crawl
from tests.web.fixture_store import (
    DEPLOY,
    EXCLUDED_CHANNEL,
    EXCLUDED_FILE,
    HOSTILE,
    LONG_END,
    SECRET,
    Fixture,
)

import recallbox
from recallbox.domains.message_view import MESSAGE_HEADER
from recallbox.domains.timeline import TIMELINE_WINDOW
from recallbox.web.adapters import threads_by_activity
from recallbox.web.app import build_app
from recallbox.web.pages import MESSAGES_PAGE_SIZE, THREADS_PAGE_SIZE, split_summary
from recallbox.web.render import message_url, thread_url
from table_dump import dump_tables


def text_of(html: str) -> str:
    """The visible text of a page, roughly: tags dropped, entities decoded."""
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert (response.status_code, response.text) == (200, "ok")


def test_index_lists_threads_by_last_activity_and_the_excluded_sources(
    client: TestClient, box: recallbox.Box
) -> None:
    html = client.get("/").text
    # by Thread.last_activity once the store fills it; by creation until then (adapters.py)
    expected = [t.channel for t in threads_by_activity(box.threads())]
    assert len(expected) == 4
    positions = [html.index(f'href="{thread_url(c)}"') for c in expected]
    assert positions == sorted(positions)
    rows = re.findall(r"<tr>.*?</tr>", html, re.DOTALL)
    secret_row = next(r for r in rows if thread_url(SECRET) in r)
    assert "quarantined" in secret_row
    assert "<code>private-export.json</code>" in html and "excluded source" in html
    deploy_html = next(r for r in rows if thread_url(DEPLOY) in r)
    deploy_row = text_of(deploy_html).split()
    assert deploy_row[-4:-2] == ["3", "11"]  # generations, messages (6 + 3 + 2, summaries included)
    assert '<td data-label="Title">Deploy billing to staging</td>' in deploy_html
    assert re.search(r'<td data-label="Last activity" class="time">[^<]*\d{4}-\d\d-\d\d', deploy_html)


def test_index_pages_threads(box: recallbox.Box) -> None:
    for n in range(THREADS_PAGE_SIZE + 3):
        box.create_thread(f"t{n:03d}")
    client = TestClient(build_app(box), base_url="http://127.0.0.1:8765")
    first, second = client.get("/").text, client.get("/?page=2").text
    assert first.count('href="/threads/') == THREADS_PAGE_SIZE
    assert second.count('href="/threads/') == 3 and "Page 2 of 2" in second
    assert client.get("/?page=3").status_code == 404
    assert client.get("/?page=zero").status_code == 400


def test_channel_urls_survive_slash_hash_and_spaces(client: TestClient) -> None:
    assert thread_url(DEPLOY) == "/threads/ops%2Fdeploy%20%2342%20staging"
    response = client.get(thread_url(DEPLOY))
    assert response.status_code == 200
    assert "<h1 class=\"channel-title\">ops/deploy #42 staging</h1>" in response.text
    assert client.get(thread_url("no such thread")).status_code == 404


def test_thread_timeline_shows_generations_summaries_and_directory(
    client: TestClient, fixture: Fixture
) -> None:
    html = client.get(thread_url(DEPLOY)).text
    visible = text_of(html)
    for number in (1, 2, 3):
        assert f"Generation {number}" in visible
    assert "6 messages" in visible and "3 messages" in visible  # gen 1: 6; gen 2: summary + 2
    assert "Billing 4f2c9e1 rolled out to staging" in visible
    assert "Resource directory of generation 1" in visible
    # message ids in the directory link to their pages
    assert f'<a href="{message_url(fixture.nested_call_id)}">{fixture.nested_call_id}</a>' in html
    assert "2025-07-01 08:00:00 → 2025-07-01 08:05:00" in visible


def test_thread_messages_of_one_generation_with_flags_and_previews(
    client: TestClient, fixture: Fixture
) -> None:
    html = client.get(thread_url(DEPLOY, generation=1)).text
    assert f'href="{message_url(fixture.long_output_id)}"' in html
    assert "superseded" in html and "machine_event" in html
    for role in ("user", "assistant", "tool"):
        assert f'<span class="role role-{role}">{role}</span>' in html
    preview = re.search(r'<td data-label="Preview" class="preview">(.*?)</td>', html.split(fixture.long_output_id)[-1], re.S)
    assert preview is not None and len(unescape(preview.group(1))) <= 161
    current = text_of(client.get(thread_url(DEPLOY)).text)
    assert "pending" in current and "Messages of generation 3" in current
    assert "hidden" in text_of(client.get(thread_url(DEPLOY, generation=2)).text)
    assert client.get(thread_url(DEPLOY, generation=4)).status_code == 404


def test_thread_messages_are_paged(box: recallbox.Box) -> None:
    box.append_many("long", [{"role": "user", "content": f"m{n}"} for n in range(MESSAGES_PAGE_SIZE + 1)])
    client = TestClient(build_app(box), base_url="http://127.0.0.1:8765")
    first = client.get(thread_url("long")).text
    last = client.get(thread_url("long", generation=1, page=2)).text
    assert first.count('href="/messages/') == MESSAGES_PAGE_SIZE
    assert last.count('href="/messages/') == 1 and "Page 2 of 2" in last


def test_a_long_thread_page_reads_a_window_and_a_page_never_the_whole_thread(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    total = TIMELINE_WINDOW + 3
    for g in range(total):
        if g:
            box.compact("long", f"summary of generation {g}")
        box.append_many("long", [{"role": "user", "content": f"g{g + 1} m{n}"} for n in range(3)])

    def whole_thread(*args: object, **kwargs: object) -> None:
        raise AssertionError("the thread page read the whole thread")

    for name in ("messages", "iter_messages", "generations"):
        monkeypatch.setattr(box.store, name, whole_thread)
    client = TestClient(build_app(box), base_url="http://127.0.0.1:8765")
    newest = text_of(client.get(thread_url("long")).text)
    assert f"Generations 4–{total} of {total}" in newest and "Earlier generations" in newest
    assert "Generation 3 " not in newest and "Later generations" not in newest
    assert f"g{total} m2" in newest and f"summary of generation {total - 1}" in newest
    html = client.get(thread_url("long", generation=3)).text
    oldest = text_of(html)
    assert "Generations 1–3 of 23" in oldest and "Later generations" in oldest
    assert "g3 m0" in oldest and f"g{total} m0" not in oldest
    assert f'href="{thread_url("long", generation=4)}"' in html


def test_message_page_shows_metadata_and_argument_tree(
    client: TestClient, fixture: Fixture, box: recallbox.Box
) -> None:
    html = client.get(message_url(fixture.nested_call_id)).text
    visible = text_of(html)
    assert "bash" in visible and "call_rollout" in visible
    assert html.count('<details class="tree"') >= 5  # arguments, options, flags, {timeout}, files…
    for leaf in ("namespace", "staging", "timeout", "300", "/srv/billing/deploy.yaml"):
        assert leaf in visible
    superseded = text_of(client.get(message_url(fixture.superseded_id)).text)
    assert "Superseded by" in superseded and "m_" in superseded.split("Superseded by")[1][:40]
    pending = text_of(client.get(message_url(fixture.pending_id)).text)
    assert "yes — queued, not delivered to the model" in pending
    hidden = next(m for m in box.messages(DEPLOY) if not m.model_visible)
    page = " ".join(text_of(client.get(message_url(hidden.id)).text).split())
    assert "Seen by the model no (hidden)" in page and f"Generation {hidden.generation} " in page
    assert "Seen by the model yes" in " ".join(visible.split())


def test_message_text_pages_reach_the_last_character(client: TestClient, fixture: Fixture) -> None:
    offset: int | None = 0
    seen = []
    while offset is not None:
        html = client.get(message_url(fixture.long_output_id, offset=offset)).text
        page = unescape(re.search(r'<pre class="text audit">(.*?)</pre>', html, re.S).group(1))
        seen.append((offset, page))
        assert len(page) <= 12_000
        found = re.search(r'rel="next" href="[^"]*offset=(\d+)"', html)
        offset = int(found.group(1)) if found else None
    assert len(seen) == 5  # 50 000 characters of output and the header, under 12 000 a page
    assert seen[-1][1].endswith(LONG_END)  # the audit text ends with the content
    # every page starts with the message header (DESIGN §3.3), which offsets do not count;
    # consecutive pages join without a gap or an overlap
    assert all(text.startswith(MESSAGE_HEADER + "\n") for _, text in seen)
    for (start, text), (following, _) in pairwise(seen):
        assert start + len(text) - len(MESSAGE_HEADER) - 1 == following
    # "previous" from the last page lands on the page before it
    html = client.get(message_url(fixture.long_output_id, offset=seen[-1][0])).text
    assert f'offset={seen[-2][0]}"' in html
    assert client.get(message_url(fixture.long_output_id, offset=10**9)).status_code == 400
    assert client.get(message_url("m_0000000000000000")).status_code == 404


def test_split_summary_finds_the_engine_directory() -> None:
    text = "own words\n\n## Resources used in generation 1\n- tool `bash`"
    assert split_summary(text) == ("own words", "## Resources used in generation 1\n- tool `bash`")
    old = "own words\n\n## 10. Resources used in generation 1\n- tool `bash`"  # older releases
    assert split_summary(old) == ("own words", "## 10. Resources used in generation 1\n- tool `bash`")
    assert split_summary("no directory") == ("no directory", None)


def test_search_shows_windows_and_ranked_hits(client: TestClient, fixture: Fixture) -> None:
    html = client.get("/search", params={"q": "rollout", "channel": DEPLOY}).text
    visible = text_of(html)
    assert "search_memory" in visible and "recall buckets" in visible
    assert f'href="{message_url(fixture.nested_call_id)}"' in html
    assert "field=tool_call.arguments.command" in visible
    assert "keyword" in visible and "fused" in visible and "carried by" in visible
    assert "sessions" in visible and "transcripts" in visible
    empty = client.get("/search").text
    assert "search_memory" not in text_of(empty) and 'name="q"' in empty
    assert client.get("/search", params={"q": "x" * 1001}).status_code == 400


def test_policy_page_lists_both_kinds_with_confirm_links(client: TestClient) -> None:
    html = client.get("/policy").text
    assert f'href="{thread_url(SECRET)}"' in html
    assert "/policy/confirm?action=unquarantine&amp;target=secret-thread" in html
    assert f"/policy/confirm?action=include&amp;target={EXCLUDED_FILE}" in html
    confirm = client.get("/policy/confirm", params={"action": "quarantine", "target": "new"}).text
    assert 'method="post" action="/policy"' in confirm and "creates it" in confirm
    assert client.get("/policy/confirm", params={"action": "drop", "target": "x"}).status_code == 400
    assert client.get("/policy/confirm", params={"action": "exclude", "target": " "}).status_code == 400


def test_get_never_changes_the_policy(client: TestClient, box: recallbox.Box) -> None:
    before = box.policy()
    for url in (
        "/policy/confirm?action=unquarantine&target=secret-thread",
        "/policy?action=unquarantine&target=secret-thread",
        "/policy/confirm?action=quarantine&target=" + DEPLOY,
    ):
        assert client.get(url).status_code == 200
    assert box.policy() == before


def test_no_get_of_any_page_changes_anything_but_the_hit_log(
    client: TestClient, box: recallbox.Box, fixture: Fixture, db_path: Path
) -> None:
    """Every page reachable from the index (confirmation pages, searches and the inventories
    among them), fetched: every table but the hit-log's is exactly as it was."""
    box.store.indexer.drain()  # type: ignore[attr-defined]  # the literal index's own catch-up
    box.hits.flush()
    before = dump_tables(db_path)
    pages = crawl(lambda url: client.get(url).text, BASE + "/", 3)
    extra = ["/search?q=rollout", "/search?q=billing&channel=" + quote(DEPLOY, safe=""),
             "/policy/confirm?action=exclude&target=x.md", "/memory?state=dormant"]  # fmt: skip
    for path in extra:
        assert client.get(path).status_code == 200, path
    assert len(pages) > 30 and any("/policy/confirm" in url for url in pages)
    box.store.indexer.drain()  # type: ignore[attr-defined]
    box.hits.flush()
    assert dump_tables(db_path) == before


def test_unknown_pages_are_404_pages(client: TestClient) -> None:
    response = client.get("/nothing-here")
    assert response.status_code == 404 and "<h1>Not Found</h1>" in response.text
    assert client.post("/", headers={"origin": "http://127.0.0.1:8765"}).status_code == 403


def test_hostile_thread_and_excluded_thread_pages_render(client: TestClient) -> None:
    assert client.get(thread_url(HOSTILE)).status_code == 200
    assert client.get(thread_url(EXCLUDED_CHANNEL)).status_code == 200


def test_a_store_error_is_a_503_page(box: recallbox.Box, fixture: Fixture) -> None:
    def broken() -> list[recallbox.Thread]:
        raise recallbox.StoreUnavailable("the database is locked; retry")

    client = TestClient(build_app(box), base_url="http://127.0.0.1:8765")
    box.threads = broken  # type: ignore[method-assign]
    response = client.get("/")
    assert response.status_code == 503 and "the database is locked; retry" in response.text


def test_a_failing_search_verb_is_its_own_error_page(box: recallbox.Box, fixture: Fixture) -> None:
    def broken(query: str, channel: str | None = None) -> str:
        raise recallbox.StoreUnavailable("the database is locked; retry")

    client = TestClient(build_app(box), base_url="http://127.0.0.1:8765")
    box.search_memory = broken  # type: ignore[method-assign]
    response = client.get("/search", params={"q": "rollout"})
    assert response.status_code == 503 and "the database is locked; retry" in response.text


def test_ranked_hits_show_their_time_and_episode_neighbours(client: TestClient) -> None:
    """#21: a ranked hit shows when it was written and the messages next to it."""
    html = client.get("/search", params={"q": "rollout finished pods ready", "channel": DEPLOY}).text
    ranked = html[html.index('id="ranked-h"') :]
    assert "<time datetime=" in ranked
    assert 'class="neighbours"' in ranked and ("before · " in ranked or "after · " in ranked)
