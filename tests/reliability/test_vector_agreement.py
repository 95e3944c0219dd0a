"""Vectors and their bookkeeping agree after ordinary work (#15 item 2, found by the concurrency
harness once import hooks ran beside ``embed --all``): a transcript chunk rewritten because its
session grew, and a code symbol dropped because its file changed, take their vectors with them,
so ``doctor`` stays healthy and never asks for a repair nothing broke."""

from __future__ import annotations

from pathlib import Path

import recallbox
from backends import DbLocation
from reliability.harness import corpus

EMBEDDER = "hash"


def _unhealthy(box: recallbox.Box) -> list[str]:
    return [i.detail for i in box.doctor().indexes if not i.healthy]


def test_a_rewritten_chunk_leaves_no_vector_behind(db_location: DbLocation, tmp_path: Path) -> None:
    path = tmp_path / "claude" / "s.jsonl"
    corpus.write_lines(path, corpus.claude_records("s", 6))
    with recallbox.open(db_location("v"), embedder=EMBEDDER) as box:
        box.import_transcripts("claude-code", [path])
        assert box.embed_all() > 0
        corpus.write_lines(path, corpus.claude_records("s", 6, start=6), mode="a")
        box.import_transcripts("claude-code", [path])  # the session's last chunk is rewritten
        assert _unhealthy(box) == []
        box.embed_all()
        assert _unhealthy(box) == []


def test_a_changed_code_file_leaves_no_vector_behind(
    db_location: DbLocation, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    source = repo / "m.py"
    source.write_text("def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n")
    with recallbox.open(db_location("v"), embedder=EMBEDDER) as box:
        box.index_code(repo, "app")
        assert box.embed_all() > 0
        source.write_text("def gamma():\n    return 3\n")
        box.index_code(repo, "app")  # alpha and beta are dropped
        assert _unhealthy(box) == []
        box.embed_all()
        assert _unhealthy(box) == []
