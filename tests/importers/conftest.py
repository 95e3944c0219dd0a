"""Shared fixtures of the importer tests: the fixture directory and an item-to-row view."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from recallbox.importers import Compaction, ParsedTranscript

FIXTURES = Path(__file__).parent / "fixtures"

Row = tuple[Any, ...]


def _rows(transcript: ParsedTranscript) -> list[Row]:
    """Every item as a tuple: messages as (lines, role, kind, visible, superseded, content,
    tool_calls, tool_call_id), compactions as ("compaction", lines, summary)."""
    result: list[Row] = []
    for item in transcript.items:
        if isinstance(item, Compaction):
            result.append(("compaction", item.line_start, item.line_end, item.summary))
        else:
            result.append(
                (
                    item.line_start,
                    item.line_end,
                    item.role,
                    item.kind,
                    item.model_visible,
                    item.superseded,
                    item.content,
                    item.tool_calls,
                    item.tool_call_id,
                )
            )
    return result


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def rows() -> Callable[[ParsedTranscript], list[Row]]:
    return _rows
