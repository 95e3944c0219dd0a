"""The pure helpers of the templates: URLs, previews, bounded JSON trees, linked ids."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

from hypothesis import given
from hypothesis import strategies as st

from recallbox.web.render import (
    PREVIEW_CHARS,
    TREE_LEAF_MAX_CHARS,
    TREE_MAX_DEPTH,
    TREE_MAX_NODES,
    Piece,
    TreeNode,
    json_tree,
    link,
    link_ids,
    message_url,
    preview,
    thread_url,
)

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=60,
)


def count(node: TreeNode) -> int:
    return 1 + sum(count(child) for child in node.children)


def depth(node: TreeNode) -> int:
    return 1 + max((depth(child) for child in node.children), default=0)


@given(st.text(min_size=1))
def test_thread_url_encodes_every_channel_into_one_segment(channel: str) -> None:
    url = thread_url(channel)
    path = url.removeprefix("/threads/")
    assert "/" not in path and "#" not in path and "?" not in path and " " not in path
    assert unquote(path) == channel


def test_urls() -> None:
    assert message_url("m_1", offset=5) == "/messages/m_1?offset=5"
    assert link("/policy/confirm", action="include", target="a&b #c") == (
        "/policy/confirm?action=include&target=a%26b+%23c"
    )
    assert link("/search", channel=None) == "/search"


@given(st.text())
def test_preview_is_one_bounded_line(text: str) -> None:
    shown = preview(text)
    assert "\n" not in shown and len(shown) <= PREVIEW_CHARS + 1
    assert shown == " ".join(text.split()) or shown.endswith("…")


@given(JSON)
def test_json_tree_shows_every_small_value(value: Any) -> None:
    tree = json_tree(value)
    assert count(tree) <= TREE_MAX_NODES + 1 + 1  # the root and one "more" marker at most


def test_json_tree_is_bounded_in_nodes_depth_and_leaf_length() -> None:
    wide = json_tree({"items": list(range(10_000))})
    assert count(wide) <= TREE_MAX_NODES + 3
    assert wide.children[0].children[-1].kind == "more"
    deep: Any = "leaf"
    for _ in range(200):
        deep = [deep]
    assert depth(json_tree(deep)) <= TREE_MAX_DEPTH + 2
    long = json_tree({"text": "x" * 50_000}).children[0]
    assert len(long.value) == TREE_LEAF_MAX_CHARS and long.clipped == 50_000 - TREE_LEAF_MAX_CHARS
    assert json_tree("raw arguments").kind == "string"
    assert [c.kind for c in json_tree({"a": True, "b": None, "c": 1.5}).children] == [
        "boolean", "null", "number",
    ]  # fmt: skip


def test_link_ids_cuts_out_message_ids_only() -> None:
    text = "- tool `bash`: first successful use m_0123456789abcdef, m_fedcba9876543210x"
    assert link_ids(text) == [
        Piece("- tool `bash`: first successful use "),
        Piece("m_0123456789abcdef", "m_0123456789abcdef"),
        Piece(", m_fedcba9876543210x"),
    ]
    assert link_ids("") == []


@given(st.text())
def test_link_ids_keeps_the_text(text: str) -> None:
    assert "".join(p.text for p in link_ids(text)) == text
