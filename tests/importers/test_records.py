"""The neutral records: validation, append arguments, generations."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from recallbox.errors import InvalidArgument
from recallbox.importers import Compaction, ImportedMessage, ParsedTranscript


def _message(**overrides: Any) -> ImportedMessage:
    fields: dict[str, Any] = {
        "role": "user",
        "content": "hi",
        "tool_calls": None,
        "tool_call_id": None,
        "kind": "message",
        "model_visible": True,
        "created_at": datetime(2025, 1, 1, tzinfo=UTC),
        "metadata": {"uuid": "u1"},
        "superseded": False,
        "line_start": 1,
        "line_end": 1,
    }
    fields.update(overrides)
    return ImportedMessage(**fields)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"role": "developer"}, "role 'developer'"),
        ({"kind": "compaction_summary"}, "kind 'compaction_summary'"),
        ({"line_start": 0}, "line range 0-1"),
        ({"line_start": 3, "line_end": 2}, "line range 3-2"),
        ({"created_at": datetime(2025, 1, 1)}, "timezone-aware"),
    ],
)
def test_invalid_messages_raise(overrides: dict[str, Any], message: str):
    with pytest.raises(InvalidArgument, match=message):
        _message(**overrides)


def test_compaction_validates_lines():
    with pytest.raises(InvalidArgument):
        Compaction(summary="s", created_at=None, metadata={}, line_start=2, line_end=1)


def test_append_kwargs_copy_the_metadata():
    message = _message()
    kwargs = message.as_append_kwargs()
    kwargs["metadata"]["uuid"] = "changed"
    assert message.metadata == {"uuid": "u1"}
    assert set(kwargs) == {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "kind",
        "model_visible",
        "created_at",
        "metadata",
    }


def test_generations_and_messages_views():
    first, second, third = _message(content="a"), _message(content="b"), _message(content="c")
    compaction = Compaction(summary="s", created_at=None, metadata={}, line_start=2, line_end=2)
    transcript = ParsedTranscript(
        channel="openai:x", title=None, source_file="x", items=[first, compaction, second, third]
    )
    assert transcript.messages == [first, second, third]
    assert transcript.generations == [[first], [second, third]]
    empty = ParsedTranscript(channel="openai:y", title=None, source_file="y")
    assert (empty.generations, empty.skipped, empty.unknown_records) == ([[]], [], {})
