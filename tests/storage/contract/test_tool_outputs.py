"""ToolOutputStore: originals under handles, denied exactly where their thread or source is."""

from __future__ import annotations

import pytest

import recallbox
from recallbox.storage.base import NewToolOutput, Store

ORIGINAL = "line one\n" * 2_000 + "ERROR disk full at /var/lib/x\n"


def test_an_original_is_kept_whole_under_its_handle(store: Store) -> None:
    store.put_tool_output(NewToolOutput("o_1", ORIGINAL, tool="bash"))
    assert store.tool_output("o_1") == ORIGINAL
    assert store.tool_output("o_2") is None
    with pytest.raises(recallbox.InvalidArgument):
        store.put_tool_output(NewToolOutput("o_1", "another"))
    assert store.tool_output("o_1") == ORIGINAL


def test_a_handle_follows_its_thread(store: Store) -> None:
    store.put_tool_output(NewToolOutput("o_t", ORIGINAL, channel="ops"))
    assert store.get_thread("ops") is not None  # the thread is made, so it can be quarantined
    store.set_quarantined("ops", True)
    assert store.tool_output("o_t") is None
    store.set_quarantined("ops", False)
    assert store.tool_output("o_t") == ORIGINAL
    store.set_thread_source("ops", "session.jsonl", None)
    store.set_source_excluded("session.jsonl", True)
    assert store.tool_output("o_t") is None


@pytest.mark.parametrize(
    ("source", "identity", "exclusion", "exclusion_identity"),
    [
        ("docs/secrets.env", None, "secrets.env", None),  # by basename
        ("repo/docs/secrets.env", None, "docs/secrets.env", None),  # by path suffix
        ("a.txt", "5:9", "renamed.txt", "5:9"),  # by file identity (a hard link)
    ],
)
def test_a_handle_follows_its_source(
    store: Store, source: str, identity: str | None, exclusion: str, exclusion_identity: str | None
) -> None:
    store.put_tool_output(NewToolOutput("o_s", ORIGINAL, source=source, identity=identity))
    store.put_tool_output(NewToolOutput("o_other", ORIGINAL, source="other/file.txt"))
    assert store.tool_output("o_s") == ORIGINAL
    store.set_source_excluded(exclusion, True, exclusion_identity)
    assert store.tool_output("o_s") is None
    assert store.tool_output("o_other") == ORIGINAL
    store.set_source_excluded(exclusion, False)
    assert store.tool_output("o_s") == ORIGINAL
