"""box.search(domain="transcripts"): one hit per chunk, hybrid, with file and line range."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import recallbox
from backends import DbLocation
from recallbox.domains.sessions_render import render_sessions_bucket
from recallbox.domains.transcripts import chunk_message_ids, skip_shown
from recallbox.storage.base import CORPUS_TRANSCRIPT_CHUNK, SearchFilter
from recallbox.storage.sqlite import vectors
from recallbox.storage.sqlite.store import SQLiteStore
from recallbox.text.excerpt import HIT_TEXT_MAX_CHARS

FIXTURES = Path(__file__).parent / "importers" / "fixtures"
SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
CHANNEL = f"claude-code:{SESSION}"
CODEX = "0c0de000-0000-4000-8000-00000000feed"


class KeywordEmbedder:
    """A fake embedder: a text's vector marks which of three topics it mentions."""

    model_id = "topics-3"
    dim = 3
    TOPICS = (("verbose", "flag"), ("readme", "changelog"), ("marsupial", "kangaroo"))

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls += 1
        out: list[list[float] | None] = []
        for text in texts:
            folded = text.casefold()
            vector = [float(any(w in folded for w in words)) for words in self.TOPICS]
            out.append(vector if any(vector) else None)
        return out


@pytest.fixture
def session_file(tmp_path: Path) -> Path:
    target = tmp_path / "projects"
    shutil.copytree(FIXTURES / "claude-code" / "projects", target)
    return target / "-home-dev-app" / f"{SESSION}.jsonl"


def rollout(path: Path, texts: list[str]) -> Path:
    lines = []
    for n, text in enumerate(texts):
        role = "user" if n % 2 == 0 else "assistant"
        kind = "input_text" if role == "user" else "output_text"
        payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
        record = {"timestamp": f"2025-10-29T01:00:{n:02d}Z", "type": "response_item"}
        lines.append(json.dumps({**record, "payload": payload}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_a_transcripts_hit_names_its_chunk_file_and_lines(
    box: recallbox.Box, session_file: Path
) -> None:
    box.import_transcripts("claude-code", session_file)
    hits = box.search("pytest failed", domain="transcripts")
    assert [(h.id, h.domain, h.channel, h.source, h.lines) for h in hits] == [
        (f"{CHANNEL}@1", "transcripts", CHANNEL, str(session_file), (3, 18))
    ]
    [hit] = hits
    assert hit.text.startswith("[user] Add a --verbose flag to the CLI")
    assert len(hit.text) <= HIT_TEXT_MAX_CHARS and 0 < hit.score == hit.keyword < 1
    messages = box.messages(CHANNEL)
    by_id = {m.id: m for m in messages}
    # "failed" is in two messages' content ("pytest" only in a tool call's arguments, which
    # the sessions domain does not rank): the shorter, denser one is the chunk's best message
    assert by_id[hit.best_message_id or ""].content == "1 failed, 3 passed"
    store: Any = box.store
    assert chunk_message_ids(store, hit.id)[0] == messages[0].id
    assert box.search("Abandoned answer", domain="transcripts") == []  # superseded: not indexed
    assert box.search("Summary test_verbose", domain="transcripts")[0].id == f"{CHANNEL}@1"


def test_privacy_gate_applies_to_chunks(box: recallbox.Box, session_file: Path) -> None:
    box.import_transcripts("claude-code", session_file)
    assert box.search("README", domain="transcripts")
    box.exclude_source(session_file.name)
    assert box.search("README", domain="transcripts") == []
    assert box.search("README", domain="transcripts", channel=CHANNEL) == []
    box.include_source(session_file.name)
    box.quarantine(CHANNEL)
    assert box.search("README", domain="transcripts") == []


def test_ranking_is_stable_under_a_row_limit(box: recallbox.Box, tmp_path: Path) -> None:
    texts = [f"deploy step {n}: " + "deploy " * (n % 5 + 1) + "filler " * 600 for n in range(12)]
    rollout(tmp_path / f"rollout-2025-10-29T01-00-00-{CODEX}.jsonl", texts)
    box.import_transcripts("codex", tmp_path)
    full = box.search("deploy", domain="transcripts", limit=20)
    assert len(full) > 5
    for limit in (1, 3, 5):
        assert box.search("deploy", domain="transcripts", limit=limit) == full[:limit]
    assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)


def test_hybrid_chunks_through_the_vector_leg(
    db_location: DbLocation, tmp_path: Path, session_file: Path
) -> None:
    embedder = KeywordEmbedder()
    with recallbox.open(db_location("x"), embedder=embedder) as box:
        box.import_transcripts("claude-code", session_file)
        written = box.embed_all()
        assert written == 8 + 2  # the session's messages with a topic, and its two chunks
        hits = box.search("kangaroo", domain="transcripts")
        assert hits == []  # no chunk is about marsupials: nothing near, nothing matched
        calls = embedder.calls
        hits = box.search("a flag for more output", domain="transcripts")
        assert embedder.calls == calls + 1  # one embedder call per search
        assert hits[0].id == f"{CHANNEL}@1" and hits[0].vector == pytest.approx(1.0)
        assert box.search("a flag for more output", domain="transcripts", allow_embed=False)
        assert box.embed_all() == 0  # nothing left to embed


def test_appending_replaces_the_last_chunk_and_its_vector(
    db_location: DbLocation, tmp_path: Path
) -> None:
    embedder = KeywordEmbedder()
    path = rollout(tmp_path / f"rollout-2025-10-29T01-00-00-{CODEX}.jsonl", ["verbose flag?"])
    with recallbox.open(db_location("x"), embedder=embedder) as box:
        box.import_transcripts("codex", path)
        assert box.embed_all() == 2  # the message and its chunk
        rollout(path, ["verbose flag?", "see the README"])
        box.import_transcripts("codex", path)
        [hit] = box.search("README", domain="transcripts", allow_embed=False)
        assert hit.vector is None  # the rebuilt chunk has no vector yet
        assert box.embed_all() == 2  # the new message and the rebuilt chunk
        [hit] = box.search("README", domain="transcripts")
        assert hit.vector == pytest.approx(1 / 2**0.5)


def test_the_aggregator_skips_chunks_the_sessions_bucket_shows(
    box: recallbox.Box, session_file: Path
) -> None:
    box.import_transcripts("claude-code", session_file)
    sessions = box.search("pytest failed", limit=3)
    transcripts = box.search("pytest failed", domain="transcripts")
    bucket = render_sessions_bucket(box.store, sessions, 4_000)  # type: ignore[arg-type]
    shown = {h.id for h in sessions}
    assert all(f"message_id={mid}" in bucket for mid in shown)
    assert skip_shown(transcripts, shown, lambda h: h.best_message_id) == []
    assert skip_shown(transcripts, set(), lambda h: h.best_message_id) == transcripts


def test_nearest_chunks_past_the_knn_limit_scan_exactly(
    db_location: DbLocation, tmp_path: Path, session_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with recallbox.open(db_location("x"), embedder=KeywordEmbedder()) as box:
        box.import_transcripts("claude-code", session_file)
        box.embed_all()
        store: SQLiteStore = box.store  # type: ignore[assignment]
        space = store.embedding_spaces(CORPUS_TRANSCRIPT_CHUNK)[0]
        full = vectors.VEC_MAX_K
        got = {}
        for max_k in (full, 1):
            monkeypatch.setattr(vectors, "VEC_MAX_K", max_k)
            for channel in (None, CHANNEL):
                got[max_k, channel] = store.nearest(
                    [1.0, 0.0, 0.0], space=space, where=SearchFilter(channel=channel), limit=2
                )
        for channel in (None, CHANNEL):
            assert len(got[full, channel]) == 2
            # the exact scan breaks distance ties by chunk id, the KNN by row id
            assert sorted(got[1, channel]) == sorted(got[full, channel])
