"""Invariant: no input file makes a parser raise, and every line reported exists."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox.errors import NotFound
from recallbox.importers import PARSERS, Compaction, ImportedMessage

KEYS = [
    "type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "isSidechain", "agentId",
    "sessionId", "message", "content", "role", "id", "isMeta", "isCompactSummary", "payload",
    "timestamp", "tool_calls", "tool_call_id", "messages", "output", "summary", "call_id",
    "arguments", "attachment", "record_type", "text", "tool_use_id", "input", "leafUuid",
]  # fmt: skip
WORDS = [
    "user", "assistant", "system", "tool", "developer", "message", "text", "tool_use",
    "tool_result", "thinking", "compact_boundary", "summary", "response_item", "session_meta",
    "compacted", "event_msg", "function_call", "function_call_output", "reasoning",
    "input_text", "output_text", "image", "queued_command", "a", "b",
]  # fmt: skip

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.sampled_from(WORDS), st.text(max_size=5)
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=4),
    ),
    max_leaves=12,
)
records = st.dictionaries(st.sampled_from(KEYS), values, max_size=6)
lines = st.one_of(records.map(json.dumps), values.map(json.dumps), st.text(max_size=20))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    content=st.lists(lines, max_size=8),
    format_name=st.sampled_from(sorted(PARSERS)),
    suffix=st.sampled_from([".jsonl", ".json"]),
)
def test_parsers_never_raise(content: list[str], format_name: str, suffix: str):
    text = "\n".join(line.replace("\n", " ").replace("\r", " ") for line in content)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"session{suffix}"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        threads = PARSERS[format_name](path)
    assert threads
    assert threads[0].channel.startswith(f"{format_name}:")
    line_count = max(1, len(content))
    for thread in threads:
        assert all(1 <= skipped.line <= line_count for skipped in thread.skipped)
        for item in thread.items:
            assert isinstance(item, ImportedMessage | Compaction)
            assert 1 <= item.line_start <= item.line_end <= line_count
            json.dumps(item.metadata)


def test_non_string_types_anywhere_are_counted_not_fatal(tmp_path: Path):
    odd = ["x"]
    claude = [
        {"type": "assistant", "uuid": "a", "message": {"content": [{"type": odd}]}},
        {"type": "user", "uuid": "u", "message": {"content": [{"type": odd}, 3]}},
        {"type": "attachment", "attachment": {"type": odd}},
    ]
    codex = [
        {"timestamp": "t", "type": "response_item", "payload": {"type": odd}},
        {"type": "message", "role": "user", "content": [{"type": odd, "text": "x"}]},
    ]
    openai = [{"role": "user", "content": [{"type": odd}]}, {"type": odd}]
    for name, records in (("claude-code", claude), ("codex", codex), ("openai", openai)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        thread = PARSERS[name](path)[0]
        assert "<none>" in "".join(thread.unknown_records), name


def test_a_missing_file_raises_not_found(tmp_path: Path):
    for parser in PARSERS.values():
        for suffix in (".jsonl", ".json"):
            with pytest.raises(NotFound, match="no transcript file at"):
                parser(tmp_path / f"missing{suffix}")


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    first=st.lists(lines, max_size=6),
    more=st.lists(lines, max_size=4),
    format_name=st.sampled_from(sorted(PARSERS)),
)
def test_importing_any_file_never_fails_and_keeps_the_store_healthy(
    db_location: DbLocation, first: list[str], more: list[str], format_name: str
):
    def text(content: list[str]) -> str:
        return "".join(line.replace("\n", " ").replace("\r", " ") + "\n" for line in content)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "session.jsonl"
        path.write_text(text(first), encoding="utf-8", errors="surrogatepass")
        with recallbox.open(db_location("x", fresh=True)) as box:
            imported(box.import_transcripts(format_name, path))
            with path.open("a", encoding="utf-8", errors="surrogatepass") as stream:
                stream.write(text(more))
            if imported(box.import_transcripts(format_name, path)):
                assert box.import_transcripts(format_name, path).files[0].status == "unchanged"
            assert box.doctor().healthy


def imported(report: recallbox.ImportReport) -> bool:
    """No file failed, except a new file refused as another format (#17: "wrong format?" —
    it made no message and its records look like another format's); whether none was."""
    assert all((f.error or "").startswith("wrong format? ") for f in report.errors), report
    return not report.errors
