"""Privacy canaries (#15 item 5): unique canaries in quarantined threads and excluded-source
transcripts, planted in a large randomized session; every output of every interface — Python
verbs, the CLI (text and --json, stderr at debug level), MCP over stdio and streamable HTTP,
log files — is scanned: zero leaks. A query that matches only denied items answers exactly
what a query that matches nothing answers."""

from __future__ import annotations

import random

import pytest

from reliability.harness.canaries import Planted, Surface, plant, same_as_nothing, scan
from reliability.harness.canary_surfaces import SURFACES

CI_THREADS, CI_PER_THREAD = 40, 50
"""2 000 messages in CI (the long run plants many more)."""
CI_QUERIES = 6
CLI_QUERIES = 2
"""The CLI starts a process per call (about a second): fewer queries in CI."""


def _count(surface: Surface, default: int) -> int:
    return CLI_QUERIES if surface.name.startswith("cli") else default


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Planted:
    return plant(tmp_path_factory.mktemp("canaries"), threads=CI_THREADS, per_thread=CI_PER_THREAD)


@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
def test_no_canary_leaks_from_any_output(planted: Planted, surface: Surface) -> None:
    assert len(planted.canaries) > 50 and planted.messages >= CI_THREADS * CI_PER_THREAD
    queries = planted.queries(random.Random(surface.name), _count(surface, CI_QUERIES))
    result = scan(planted, surface.outputs(planted, queries), tier=surface.tier, queries=queries)
    assert result.leaks == []
    assert result.outputs > 0


@pytest.mark.parametrize(
    "surface", [s for s in SURFACES if s.compare], ids=[s.name for s in SURFACES if s.compare]
)
def test_a_denied_match_answers_like_no_match(planted: Planted, surface: Surface) -> None:
    queries = planted.queries(random.Random("compare" + surface.name), _count(surface, 4) // 2)
    assert same_as_nothing(planted, surface, queries) == []
