"""``store_tool_output`` and ``expand`` through the Box (DESIGN §6): the failure list of similar
tools, the handle's privacy, paging the original back."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.text.compress import EXPAND_HEADER, TOOL_OUTPUT_MAX_CHARS
from recallbox.text.render import unescape_stored
from recallbox.text.spans import identifiers

HANDLE_CALL = re.compile(r"expand\((o_[0-9a-f]+), offset=(\d+)\)")
CONTINUE = re.compile(r"\nContinue with expand\((o_[0-9a-f]+), offset=(\d+)\)\.$")


def expand_all(box: recallbox.Box, handle: str) -> str:
    """Follow the continuation lines; the original, unescaped, in one piece."""
    text, offset = "", 0
    while True:
        page = box.expand(handle, offset)
        assert len(page) <= TOOL_OUTPUT_MAX_CHARS
        head, body = page.split("\n", 2)[:2], page.split("\n", 2)[2]
        assert head[0] == EXPAND_HEADER and head[1].startswith(f"[handle={handle} offset={offset}")
        found = CONTINUE.search(body)
        if found is None:
            return text + unescape_stored(body)
        piece = unescape_stored(body[: found.start()])
        text += piece
        assert int(found.group(2)) == offset + len(piece)
        offset = int(found.group(2))


def log_text(lines: int) -> str:
    rows = [f"2025-11-30T02:{i // 60 % 60:02d}:{i % 60:02d}Z worker[{i}]: ok" for i in range(lines)]
    rows[lines // 3] = "ERROR run 8f14e45fceea167a5a36dedd4bea2543 failed at /srv/app/jobs/sync.py:88"
    rows[2 * lines // 3] = "ERROR upload to https://ci.example.com/artifacts/build-7731.tar.gz refused"
    return "\n".join(rows)


def test_the_original_is_kept_and_pages_back_whole(box: recallbox.Box) -> None:
    original = log_text(4_000)
    stored = box.store_tool_output(original, channel="ops", tool="bash")
    assert stored.handle is not None and stored.handle in stored.view
    assert len(stored.view) < len(original) and "expand(" in stored.view
    assert expand_all(box, stored.handle) == original  # never a placeholder, never the view


def test_a_small_output_keeps_no_handle(box: recallbox.Box) -> None:
    assert box.store_tool_output("3 files changed") == recallbox.StoredOutput("3 files changed", None)


def test_an_expand_page_is_never_compressed_again(box: recallbox.Box) -> None:
    stored = box.store_tool_output(log_text(4_000))
    assert stored.handle is not None
    page = box.expand(stored.handle)
    again = box.store_tool_output(page, tool="expand")
    assert again == recallbox.StoredOutput(page, None)
    assert box.store_tool_output(stored.view) == recallbox.StoredOutput(stored.view, None)


def test_json_never_loses_a_field_silently(box: recallbox.Box) -> None:
    data = {f"field_{i}": {"values": list(range(300)), "note": "n" * 50} for i in range(60)}
    stored = box.store_tool_output(json.dumps(data), tool="api")
    assert stored.handle is not None and len(stored.view) <= TOOL_OUTPUT_MAX_CHARS
    view = stored.view
    shown = json.loads(view.split("\n", 1)[1]) if view.startswith("[") else json.loads(view)
    text = json.dumps(shown)
    for key in data:
        assert key in text or "$" in text  # present, or inside an elision naming its path
    assert json.loads(expand_all(box, stored.handle)) == data


def test_without_an_expand_tool_no_handle_is_made(box: recallbox.Box, db_path: Path) -> None:
    stored = box.store_tool_output(log_text(4_000), can_expand=False)
    assert stored.handle is None and "expand(" not in stored.view
    assert "characters elided; no expand tool available]" in stored.view
    assert len(stored.view) <= TOOL_OUTPUT_MAX_CHARS


def test_a_5mb_log_view_is_bounded_and_keeps_every_error_identifier(box: recallbox.Box) -> None:
    original = log_text(100_000)
    original = original + "\n" + "x" * (5_000_000 - len(original))
    stored = box.store_tool_output(original, channel="ci", tool="bash")
    assert len(stored.view) <= TOOL_OUTPUT_MAX_CHARS and stored.handle is not None
    for line in original.splitlines():
        if line.startswith("ERROR"):
            kept = all(ident in stored.view for ident in identifiers(line))
            assert kept or "more lines with errors" in stored.view


def test_a_denied_handle_is_the_same_not_found_as_an_unknown_one(box: recallbox.Box) -> None:
    stored = box.store_tool_output(log_text(4_000), channel="secret")
    sourced = box.store_tool_output(log_text(4_000), source="./deploy/prod.env")
    assert stored.handle is not None and sourced.handle is not None
    with pytest.raises(recallbox.NotFound) as unknown:
        box.expand("o_0000000000000000")
    box.quarantine("secret")
    box.exclude_source("prod.env")
    for handle in (stored.handle, sourced.handle, "not a handle", "x" * 100):
        with pytest.raises(recallbox.NotFound) as denied:
            box.expand(handle)
        assert str(denied.value) == str(unknown.value)
    box.unquarantine("secret")
    assert box.expand(stored.handle).startswith(EXPAND_HEADER)


def test_arguments_are_checked(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        box.store_tool_output(b"bytes")  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        box.store_tool_output("x", channel="")
    with pytest.raises(recallbox.InvalidArgument):
        box.store_tool_output("x", can_expand="yes")  # type: ignore[arg-type]
    stored = box.store_tool_output(log_text(4_000))
    assert stored.handle is not None
    with pytest.raises(recallbox.InvalidArgument):
        box.expand(stored.handle, -1)
    with pytest.raises(recallbox.InvalidArgument):
        box.expand(stored.handle, 10**9)


@settings(max_examples=30)
@given(
    st.lists(
        st.sampled_from(["ok\n", "ERROR a/b.py:3\n", "[message_id=m_1]\n", "x" * 300, "召回\n"]),
        max_size=200,
    ).map("".join)
)
def test_any_output_round_trips(text: str) -> None:
    with recallbox.open(":memory:") as box:
        stored = box.store_tool_output(text)
        assert len(stored.view) <= TOOL_OUTPUT_MAX_CHARS
        if stored.handle is None:
            assert stored.view == text or "expand(" not in stored.view
        else:
            assert expand_all(box, stored.handle) == text
