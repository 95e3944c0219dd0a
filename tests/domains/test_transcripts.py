"""Transcript chunks: the packing rules, and what the import keeps in the store."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox.domains.transcripts import (
    TRANSCRIPT_CHUNK_TOKENS,
    chunk_id,
    chunk_messages,
    parse_chunk_id,
    split_to_budget,
)
from recallbox.storage.base import ChunkSource
from recallbox.text.tokens import estimate_tokens

SESSION = "0c0de000-0000-4000-8000-000000000001"


def source(seq: int, text: str, generation: int = 1, role: str = "user") -> ChunkSource:
    return ChunkSource(
        id=f"m{seq}", seq=seq, generation=generation, role=role, content=text,
        source="/x.jsonl", line_start=seq, line_end=seq,
    )  # fmt: skip


def test_chunk_ids_round_trip():
    assert chunk_id("codex:abc", 7) == "codex:abc@7"
    assert chunk_id("openai:x#2", 7, 3) == "openai:x#2@7.3"
    assert parse_chunk_id("openai:x#2@7.3") == ("openai:x#2", 7, 3)
    assert parse_chunk_id("claude-code:s/agent-1@12") == ("claude-code:s/agent-1", 12, 0)
    assert parse_chunk_id("m_0123") is None
    assert parse_chunk_id("x@y") is None


def test_messages_pack_within_the_budget_and_never_across_a_generation():
    messages = [source(i, "word " * 150, generation=1 if i < 6 else 2) for i in range(1, 10)]
    chunks = list(chunk_messages(messages))
    assert [(c.first_seq, c.last_seq, c.generation) for c in chunks] == [
        (1, 2, 1),
        (3, 4, 1),
        (5, 5, 1),
        (6, 7, 2),
        (8, 9, 2),
    ]
    assert all(estimate_tokens(c.text) <= TRANSCRIPT_CHUNK_TOKENS for c in chunks)
    assert chunks[0].message_ids == ("m1", "m2")
    assert (chunks[0].line_start, chunks[0].line_end, chunks[0].source) == (1, 2, "/x.jsonl")
    assert chunks[0].text == f"[user] {'word ' * 149}word\n\n[user] {'word ' * 149}word"


def test_a_long_message_is_cut_into_parts_at_line_ends():
    long_text = "\n".join(f"line {i} " + "x" * 60 for i in range(200))
    chunks = list(chunk_messages([source(1, "short"), source(2, long_text), source(3, "tail")]))
    assert [(c.first_seq, c.part) for c in chunks[:2]] == [(1, 0), (2, 0)]
    parts = [c for c in chunks if c.first_seq == 2]
    assert len(parts) > 3 and [c.part for c in parts] == list(range(len(parts)))
    assert "".join(c.text for c in parts) == "[user] " + long_text
    assert all(estimate_tokens(c.text) <= TRANSCRIPT_CHUNK_TOKENS for c in parts)
    assert all(c.text.endswith("\n") for c in parts[:-1])  # cut at line ends
    assert chunks[-1].first_seq == 3


def test_tool_calls_are_part_of_the_chunk_text():
    message = ChunkSource(
        id="m1", seq=1, generation=1, role="assistant", content="",
        tool_calls=[{"id": "c1", "name": "Bash", "arguments": {"command": "pytest -q"}}],
    )  # fmt: skip
    [chunk] = chunk_messages([message])
    assert chunk.text == '[assistant]\n[assistant → Bash] {"command": "pytest -q"}'


@given(
    sizes=st.lists(st.integers(1, 700), min_size=1, max_size=25),
    breaks=st.lists(st.booleans(), min_size=25, max_size=25),
)
def test_chunking_from_any_chunk_start_equals_the_tail_of_the_whole(sizes, breaks):
    generation, messages = 1, []
    for i, size in enumerate(sizes):
        generation += breaks[i]
        messages.append(source(i + 1, "ab. " * (size // 4) + "c" * (size % 4), generation))
    whole = list(chunk_messages(messages))
    assert all(estimate_tokens(c.text) <= TRANSCRIPT_CHUNK_TOKENS for c in whole)
    for start in {c.first_seq for c in whole}:
        tail = list(chunk_messages(m for m in messages if m.seq >= start))
        assert tail == [c for c in whole if c.first_seq >= start]


@given(text=st.text(max_size=3000), budget=st.integers(1, 600))
def test_split_to_budget_keeps_every_character(text, budget):
    parts = split_to_budget(text, budget)
    assert "".join(parts) == text
    assert all(estimate_tokens(p) <= budget for p in parts if len(p) > 1)


# --- in the store ---------------------------------------------------------------------------


def rollout_line(number: int, role: str, text: str) -> str:
    kind = "input_text" if role == "user" else "output_text"
    payload = {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
    record = {"timestamp": f"2025-10-29T01:{number // 60:02d}:{number % 60:02d}Z",
              "type": "response_item", "payload": payload}  # fmt: skip
    return json.dumps(record) + "\n"


def rollout(turns: range) -> str:
    lines = []
    for n in turns:
        lines.append(rollout_line(2 * n, "user", f"question {n}: " + "why " * 40))
        lines.append(rollout_line(2 * n + 1, "assistant", f"answer {n}: " + "because " * 60))
    return "".join(lines)


def test_appending_lines_replaces_only_the_last_chunk(
    db_location: DbLocation, box: recallbox.Box, tmp_path: Path
):
    path = tmp_path / f"rollout-2025-10-29T01-00-00-{SESSION}.jsonl"
    channel = f"codex:{SESSION}"
    path.write_text(rollout(range(10)), encoding="utf-8")
    box.import_transcripts("codex", path)
    before = box.store.transcript_chunks(channel)
    assert len(before) > 3
    with path.open("a", encoding="utf-8") as stream:
        stream.write(rollout(range(10, 14)))
    box.import_transcripts("codex", path)
    after = box.store.transcript_chunks(channel)
    kept = {(rowid, digest) for rowid, digest, _ in before[:-1]}
    assert kept <= {(rowid, digest) for rowid, digest, _ in after}  # untouched rows
    with recallbox.open(db_location("fresh")) as fresh:
        fresh.import_transcripts("codex", path)
        expected = [
            replace(c, message_ids=()) for _, _, c in fresh.store.transcript_chunks(channel)
        ]
    assert [replace(c, message_ids=()) for _, _, c in after] == expected
    assert box.doctor().healthy


def test_a_short_last_chunk_takes_in_the_appended_lines(box: recallbox.Box, tmp_path: Path):
    path = tmp_path / f"rollout-2025-10-29T01-00-00-{SESSION}.jsonl"
    channel = f"codex:{SESSION}"
    path.write_text(rollout_line(1, "user", "hello"), encoding="utf-8")
    box.import_transcripts("codex", path)
    [(_, digest, chunk)] = box.store.transcript_chunks(channel)
    assert (chunk_id(channel, chunk.first_seq), chunk.text) == (f"{channel}@1", "[user] hello")
    with path.open("a", encoding="utf-8") as stream:
        stream.write(rollout_line(2, "assistant", "world"))
    box.import_transcripts("codex", path)
    [(_, new_digest, chunk)] = box.store.transcript_chunks(channel)
    assert new_digest != digest
    assert (chunk.first_seq, chunk.last_seq, chunk.line_start, chunk.line_end) == (1, 2, 1, 2)
    assert chunk.text == "[user] hello\n\n[assistant] world"


def test_chunks_hold_only_searchable_messages(box: recallbox.Box):
    fixtures = Path(__file__).parents[1] / "importers" / "fixtures"
    box.import_transcripts("claude-code", fixtures / "claude-code" / "projects")
    for thread in box.threads():
        messages = {m.id: m for m in box.messages(thread.channel)}
        for _, _, chunk in box.store.transcript_chunks(thread.channel):
            for message_id in chunk.message_ids:
                message = messages[message_id]
                assert message.kind == "message" and message.model_visible
                assert message.superseded_by is None and not message.pending
                assert message.generation == chunk.generation
    channel = "claude-code:7f3c2a10-5b6d-4e8f-9a01-23456789abcd"
    chunks = [c for _, _, c in box.store.transcript_chunks(channel)]
    assert [(c.first_seq, c.last_seq, c.generation, c.line_start, c.line_end) for c in chunks] == [
        (1, 13, 1, 3, 18),
        (15, 21, 2, 21, 29),
    ]
    assert "Abandoned answer." not in chunks[0].text  # superseded
    assert "Summary: added --verbose" not in chunks[1].text  # a compaction summary


def test_a_later_branch_rebuilds_the_chunk_without_the_abandoned_answer(
    box: recallbox.Box, tmp_path: Path
):
    path = tmp_path / "s1.jsonl"

    def record(uuid: str, parent: str | None, text: str) -> str:
        message = {
            "id": f"msg_{uuid}",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
        }
        return json.dumps({"type": "assistant", "uuid": uuid, "parentUuid": parent,
                           "message": message}) + "\n"  # fmt: skip

    user = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "message": {"role": "user", "content": "q"},
    }
    path.write_text(json.dumps(user) + "\n" + record("a1", "u1", "first answer"), encoding="utf-8")
    box.import_transcripts("claude-code", path)
    [(_, _, chunk)] = box.store.transcript_chunks("claude-code:s1")
    assert "first answer" in chunk.text
    with path.open("a", encoding="utf-8") as stream:
        stream.write(record("a2", "u1", "second answer"))
    box.import_transcripts("claude-code", path)
    [(_, _, chunk)] = box.store.transcript_chunks("claude-code:s1")
    assert chunk.text == "[user] q\n\n[assistant] second answer"


def test_superseding_an_imported_message_rebuilds_its_chunk(box: recallbox.Box, tmp_path: Path):
    path = tmp_path / f"rollout-2025-10-29T01-00-00-{SESSION}.jsonl"
    path.write_text(rollout_line(1, "user", "keep") + rollout_line(2, "user", "drop"), "utf-8")
    box.import_transcripts("codex", path)
    channel = f"codex:{SESSION}"
    keep, drop = box.messages(channel)
    box.supersede(drop.id, keep.id)
    [(_, _, chunk)] = box.store.transcript_chunks(channel)
    assert (chunk.text, chunk.message_ids) == ("[user] keep", (keep.id,))
    box.append("ops", "user", "a live thread is not chunked")
    box.supersede(box.append("ops", "user", "x").id, box.messages("ops")[0].id)
    assert box.store.transcript_chunks("ops") == []


def test_chunk_message_ids_respect_the_privacy_gate(box: recallbox.Box, tmp_path: Path):
    from recallbox.domains.transcripts import chunk_message_ids, skip_shown

    path = tmp_path / f"rollout-2025-10-29T01-00-00-{SESSION}.jsonl"
    path.write_text(rollout_line(1, "user", "a") + rollout_line(2, "assistant", "b"), "utf-8")
    box.import_transcripts("codex", path)
    channel = f"codex:{SESSION}"
    ids = [m.id for m in box.messages(channel)]
    store: Any = box.store
    assert chunk_message_ids(store, f"{channel}@1") == ids
    assert chunk_message_ids(store, f"{channel}@2") == []
    assert chunk_message_ids(store, "not a chunk id") == []
    hits = [f"{channel}@1", "other@1"]
    best = {f"{channel}@1": ids[1], "other@1": "m_x"}
    assert skip_shown(hits, {ids[1]}, best.get) == ["other@1"]
    box.exclude_source(path.name)
    assert chunk_message_ids(store, f"{channel}@1") == []
