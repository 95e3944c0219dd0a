"""Shared helpers for the code-domain tests: index a fixture repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from recallbox.code import parse_repository, resolve_edges
from recallbox.code.types import Edge, FileIndex

FIXTURES = Path(__file__).parent / "fixtures"


def index_fixture(name: str) -> tuple[list[FileIndex], list[Edge]]:
    """Parse a fixture repository and resolve its edges."""
    root = FIXTURES / name
    parsed = parse_repository(root)
    assert parsed.report.failed == ()
    return list(parsed.files), resolve_edges(parsed.files, root_name=root.name)


def symbol_rows(files: list[FileIndex]) -> list[tuple[str, str, int, int]]:
    return [(s.id, s.kind, s.start_line, s.end_line) for f in files for s in f.symbols]


def edge_rows(edges: list[Edge], kind: str) -> list[tuple[str, str, str | None, str]]:
    return [(e.source_id, e.target_name, e.target_id, e.confidence) for e in edges if e.kind == kind]


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
