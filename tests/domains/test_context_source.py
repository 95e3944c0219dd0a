"""Which source recall_context means, and its results (DESIGN §4.4, §5)."""

from __future__ import annotations

import pytest

from recallbox.domains.context_slice import ContextSlice
from recallbox.domains.context_source import (
    SOURCE_NOT_AVAILABLE,
    context_result,
    is_memory_request,
    resolve_knowledge_source,
    unavailable,
)
from recallbox.errors import InvalidArgument
from recallbox.types import RecallResult

SOURCES = [
    "docs/deploy.md",
    "Runbook.md",
    "team/notes/MEMORY.md",
    "MEMORY.md",
    "a/faq.md",
    "b/faq.md",
]


@pytest.mark.parametrize("name", ["MEMORY.md", "memory.md", " MEMORY.MD "])
def test_memory_requests(name: str) -> None:
    assert is_memory_request(name)


@pytest.mark.parametrize("name", ["./MEMORY.md", "notes/MEMORY.md", "MEMORY", "x\\MEMORY.md"])
def test_not_memory_requests(name: str) -> None:
    assert not is_memory_request(name)


@pytest.mark.parametrize(
    ("requested", "expected"),
    [
        ("docs/deploy.md", "docs/deploy.md"),  # exact
        ("./DOCS\\deploy.md", "docs/deploy.md"),  # normalised path
        ("deploy.md", "docs/deploy.md"),  # unique basename
        ("runbook.MD", "Runbook.md"),
        ("./MEMORY.md", "MEMORY.md"),  # a document named MEMORY.md needs a "/"
        ("team/notes/memory.md", "team/notes/MEMORY.md"),
        ("MEMORY.md", None),  # that is the memory entries
        ("missing.md", None),
        ("", None),
        ("/", None),
    ],
)
def test_resolution(requested: str, expected: str | None) -> None:
    assert resolve_knowledge_source(requested, SOURCES) == expected


def test_several_allowed_matches_are_named() -> None:
    with pytest.raises(InvalidArgument, match=r"a/faq\.md, b/faq\.md"):
        resolve_knowledge_source("faq.md", SOURCES)
    # a denied source is not among the allowed ones the caller passes: no ambiguity, no leak
    assert resolve_knowledge_source("faq.md", ["a/faq.md"]) == "a/faq.md"


def test_results() -> None:
    assert unavailable() == RecallResult(allowed=False, content="", reason=SOURCE_NOT_AVAILABLE)
    empty = context_result(ContextSlice(""), layer="keyword", memory=True)
    assert empty == RecallResult(allowed=True, content="", hit_layer="none")
    piece = ContextSlice("## Pitfalls\n\n- x", ("pitfall",), ("PIT01",))
    assert context_result(piece, layer="keyword", memory=True) == RecallResult(
        True, "## Pitfalls\n\n- x", ("pitfall",), "keyword", ("PIT01",)
    )
    section = ContextSlice("## A\n\nx", ("s7",), ("s7:2",), True)
    assert context_result(section, layer="hybrid", memory=False).drilled == ("s7",)
