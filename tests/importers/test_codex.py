"""Codex CLI rollout parsing: wrapped and bare layouts, tool pairs, compaction, sub-agents."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from recallbox.importers import SkippedLine, parse_codex
from recallbox.importers.codex import session_id_from_filename

WRAPPED = "019a2d7a-0000-7000-8000-00000000c0de"
BARE = "5d1e8a52-0000-4000-8000-0000000b0a2e"
SUBAGENT = "019a2d7b-0000-7000-8000-0000005ab0a9"
WRAPPED_FILE = Path(f"codex/sessions/2025/10/29/rollout-2025-10-29T01-00-00-{WRAPPED}.jsonl")
BARE_FILE = Path(f"codex/sessions/2025/08/18/rollout-2025-08-18T01-16-13-{BARE}.jsonl")
SUBAGENT_FILE = Path(f"codex/archived_sessions/rollout-2025-10-29T01-20-00-{SUBAGENT}.jsonl")
M, E = "message", "machine_event"

WRAPPED_ROWS = [
    (
        2, 2, "system", E, True, False,
        "<permissions instructions>\nSandbox: workspace-write\n</permissions instructions>",
        None, None,
    ),
    (
        3, 3, "user", E, True, False,
        "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>", None, None,
    ),
    (4, 4, "user", M, True, False, "Fix the failing test", None, None),
    (7, 7, "assistant", E, False, False, "**Inspecting tests**", None, None),
    (
        8, 8, "assistant", M, True, False, "",
        [
            {
                "id": "call_1",
                "name": "shell",
                "arguments": '{"command":["pytest","-q"],"workdir":"/repo"}',
            }
        ],
        None,
    ),
    (9, 9, "tool", M, True, False, "1 failed, 3 passed", None, "call_1"),
    (
        10, 10, "assistant", M, True, False, "",
        [
            {
                "id": "call_2",
                "name": "apply_patch",
                "arguments": "*** Begin Patch\n*** Update File: cli.py\n-    verbose = False\n"
                "+    verbose = args.verbose\n*** End Patch",
            }
        ],
        None,
    ),
    (
        11, 11, "tool", M, True, False,
        "Success. Updated the following files:\nM cli.py", None, "call_2",
    ),
    (
        12, 12, "assistant", M, True, False, "",
        [
            {
                "id": "call_3",
                "name": "local_shell",
                "arguments": {
                    "type": "exec",
                    "command": ["cat", "/etc/shadow"],
                    "timeout_ms": 1000,
                },
            }
        ],
        None,
    ),
    (13, 13, "tool", M, True, False, "cat: /etc/shadow: Permission denied", None, "call_3"),
    (
        14, 14, "assistant", M, True, False, "",
        [
            {
                "id": "web_search_call@14",
                "name": "web_search",
                "arguments": {"type": "search", "query": "argparse store_true"},
            }
        ],
        None,
    ),
    (15, 15, "assistant", M, True, False, "Fixed: the flag now parses.", None, None),
    ("compaction", 18, 18, "Summary: fixed the --verbose flag in cli.py."),
    (
        20, 20, "user", M, True, False,
        "Thanks. What does this screenshot show?\n\n[image: image/png]", None, None,
    ),
    (
        21, 21, "assistant", M, True, False, "",
        [{"id": "call_4", "name": "mcp__fs__read_file", "arguments": '{"path":"shot.txt"}'}],
        None,
    ),
    (22, 22, "tool", M, True, False, "a passing test run", None, "call_4"),
    (26, 26, "assistant", M, True, False, "It shows a passing test run.", None, None),
]  # fmt: skip

WRAPPED_UNKNOWN = {
    "event_msg:user_message": 1,
    "turn_context": 1,
    "event_msg:agent_message": 1,
    "event_msg:token_count": 1,
    "event_msg:context_compacted": 1,
    "response_item:ghost_snapshot": 1,
    "world_state": 1,
}


def test_wrapped_rollout_exactly(fixtures: Path, rows):
    [thread] = parse_codex(fixtures / WRAPPED_FILE)
    assert (thread.channel, thread.title, thread.parent_channel) == (
        f"codex:{WRAPPED}",
        None,
        None,
    )
    assert rows(thread) == WRAPPED_ROWS
    assert thread.skipped == [SkippedLine(25, "invalid JSON: Expecting value (column 1)")]
    assert thread.unknown_records == WRAPPED_UNKNOWN
    assert thread.truncated_tail is False
    assert [len(generation) for generation in thread.generations] == [12, 4]


def test_wrapped_rollout_metadata(fixtures: Path):
    path = fixtures / WRAPPED_FILE
    messages = parse_codex(path)[0].messages
    assert messages[0].metadata == {
        "source_file": str(path),
        "line_start": 2,
        "line_end": 2,
        "record_type": "response_item",
        "item_type": "message",
        "cwd": "/repo",
        "git_branch": "main",
        "source_role": "developer",
        "injected_context": True,
    }
    reasoning = messages[3]
    assert reasoning.metadata["item_type"] == "reasoning"
    assert reasoning.metadata["encrypted"] is True
    assert reasoning.metadata["model"] == "gpt-5-codex"  # from the turn_context before it
    assert messages[9].metadata["is_error"] is True
    assert messages[11].metadata["phase"] == "final_answer"
    assert messages[11].created_at == datetime(2025, 10, 29, 1, 0, 8, tzinfo=UTC)


def test_compacted_record_keeps_the_replacement_history_size(fixtures: Path):
    compaction = parse_codex(fixtures / WRAPPED_FILE)[0].items[12]
    assert compaction.created_at == datetime(2025, 10, 29, 1, 10, tzinfo=UTC)
    assert compaction.metadata == {
        "source_file": str(fixtures / WRAPPED_FILE),
        "line_start": 18,
        "line_end": 18,
        "record_type": "compacted",
        "replacement_history_items": 1,
    }


def test_bare_rollout_exactly(fixtures: Path, rows):
    [thread] = parse_codex(fixtures / BARE_FILE)
    assert thread.channel == f"codex:{BARE}"
    assert rows(thread) == [
        (3, 3, "user", M, True, False, "hello codex", None, None),
        (4, 4, "assistant", E, False, False, "", None, None),
        (5, 5, "assistant", M, True, False, "Hi! What should I do?", None, None),
        (
            6, 6, "assistant", M, True, False, "",
            [{"id": "call_b1", "name": "shell", "arguments": '{"command":["ls"]}'}],
            None,
        ),
        (7, 7, "tool", M, True, False, "README.md\n", None, "call_b1"),  # decoded (#17)
    ]  # fmt: skip
    output = thread.messages[-1].metadata
    assert output["output_metadata"] == {"exit_code": 0, "duration_seconds": 0.01}
    assert output["exit_code"] == 0
    assert thread.unknown_records == {"record_type:state": 2}
    assert thread.skipped == []
    assert all(message.created_at is None for message in thread.messages)
    assert thread.messages[0].metadata["record_type"] == "bare_item"


def test_subagent_rollout_names_its_parent(fixtures: Path, rows):
    [thread] = parse_codex(fixtures / SUBAGENT_FILE)
    assert (thread.channel, thread.parent_channel) == (f"codex:{SUBAGENT}", f"codex:{WRAPPED}")
    assert rows(thread) == [
        (3, 3, "user", M, True, False, "Review cli.py", None, None),
        (4, 4, "assistant", M, True, False, "cli.py looks fine.", None, None),
    ]
    assert thread.unknown_records == {"session_meta": 1}  # the parent's, replayed


def test_truncated_copy(fixtures: Path, rows):
    [thread] = parse_codex(fixtures / "codex" / "truncated" / WRAPPED_FILE.name)
    original = (fixtures / WRAPPED_FILE).read_text(encoding="utf-8")
    assert (
        (fixtures / "codex" / "truncated" / WRAPPED_FILE.name)
        .read_text(encoding="utf-8")
        .startswith(original)
    )
    assert thread.truncated_tail is True
    assert rows(thread) == WRAPPED_ROWS
    assert thread.skipped == [SkippedLine(25, "invalid JSON: Expecting value (column 1)")]


def _write(tmp_path: Path, name: str, lines: list[Any]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_session_id_falls_back_to_the_file_name(tmp_path: Path):
    name = "rollout-2025-01-02T03-04-05-0000abcd-0000-4000-8000-00000000beef.jsonl"
    item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "x"}]}
    [thread] = parse_codex(_write(tmp_path, name, [item]))
    assert thread.channel == "codex:0000abcd-0000-4000-8000-00000000beef"
    assert session_id_from_filename(Path("notes.jsonl")) == "notes"


def test_odd_items_are_counted_or_skipped_never_fatal(tmp_path: Path, rows):
    lines = [
        {"type": "message", "role": "narrator", "content": []},
        {"type": "message", "role": "assistant", "content": [{"type": "audio", "id": "a"}]},
        {"type": "function_call_output", "call_id": "c", "output": None},
        {"type": "function_call_output", "call_id": "c", "output": 42},
        {"type": "image_generation_call", "id": "ig"},
        {"no_type": True},
        {"timestamp": "bad", "type": "event_msg", "payload": {}},
    ]
    [thread] = parse_codex(_write(tmp_path, "rollout-x.jsonl", lines))
    assert rows(thread) == [
        (2, 2, "assistant", M, True, False, "[audio]", None, None),
        (3, 3, "tool", M, True, False, "", None, "c"),
        (4, 4, "tool", M, True, False, "42", None, "c"),
    ]
    assert thread.skipped == [SkippedLine(1, "message with unknown role 'narrator'")]
    assert thread.unknown_records == {
        "content_part:audio": 1,
        "bare_item:image_generation_call": 1,
        "<none>": 1,
        "event_msg:<none>": 1,
    }


@pytest.mark.parametrize(
    ("output", "content", "extra"),
    [
        ('{"output":"ok\\n","metadata":{"exit_code":2}}', "ok\n", {"exit_code": 2}),
        ('{"output":"just text"}', "just text", {}),
        ('{"output":"x","other":1}', '{"output":"x","other":1}', None),  # another shape: kept
        ('{"output":3,"metadata":{}}', '{"output":3,"metadata":{}}', None),
        ("{not json", "{not json", None),
        ("plain", "plain", None),
    ],
)
def test_encoded_shell_outputs_are_stored_as_their_text(
    tmp_path: Path, output: str, content: str, extra: dict[str, Any] | None
):
    """Fix (#17 item 9): a shell result Codex encodes as {"output", "metadata"} is stored as
    the output text the model read; the metadata is kept in the message's metadata."""
    path = tmp_path / "rollout-2025-01-01T00-00-00-00000000-0000-4000-8000-000000000001.jsonl"
    record = {"type": "function_call_output", "call_id": "c1", "output": output}
    path.write_text(json.dumps({"id": "s1"}) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    [thread] = parse_codex(path)
    [message] = thread.messages
    assert message.content == content
    if extra is None:
        assert "output_metadata" not in message.metadata
    else:
        assert {k: message.metadata[k] for k in extra} == extra
        assert ("output_metadata" in message.metadata) == ("metadata" in output)
