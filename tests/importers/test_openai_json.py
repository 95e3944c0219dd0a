"""OpenAI-format chat files: every container shape, names, lines, tool calls."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from recallbox.importers import SkippedLine, parse_openai

M = "message"
OPENAI = Path("openai")


def _summary(threads):
    return [(t.channel, t.title, t.skipped, t.unknown_records, t.truncated_tail) for t in threads]


def test_single_conversation_document(fixtures: Path, rows):
    [thread] = parse_openai(fixtures / OPENAI / "chat.json")
    assert (thread.channel, thread.title, thread.parent_channel) == (
        "openai:conv-42",
        "Weather lookup",
        None,
    )
    assert rows(thread) == [
        (5, 8, "system", M, True, False, "You are a helpful assistant.", None, None),
        (9, 12, "user", M, True, False, "What's the weather in Oslo?", None, None),
        (
            13, 26, "assistant", M, True, False, "",
            [{"id": "call_w1", "name": "get_weather", "arguments": '{"city":"Oslo","unit":"c"}'}],
            None,
        ),
        (27, 31, "tool", M, True, False, '{"temp": 4, "sky": "rain"}', None, "call_w1"),
        (32, 41, "assistant", M, True, False, "It is 4 °C and raining in Oslo.", None, None),
        (
            42, 59, "user", M, True, False,
            "And this picture?\n\n[image: https://example.invalid/oslo.jpg]", None, None,
        ),
        (60, 64, "assistant", M, True, False, "That is the Oslo Opera House.", None, None),
    ]  # fmt: skip
    assert (thread.skipped, thread.unknown_records, thread.truncated_tail) == ([], {}, False)
    picture, answer = thread.messages[5], thread.messages[6]
    assert picture.created_at == datetime(2025, 7, 1, 8, 30, tzinfo=UTC)
    assert answer.created_at == datetime(2025, 7, 1, 8, 31, tzinfo=UTC)
    assert picture.metadata == {
        "source_file": str(fixtures / OPENAI / "chat.json"),
        "line_start": 42,
        "line_end": 59,
        "fields": {"name": "kari", "created_at": "2025-07-01T08:30:00Z"},
    }


def test_list_of_conversations(fixtures: Path, rows):
    first, second, third = parse_openai(fixtures / OPENAI / "conversations.json")
    assert [(t.channel, t.title) for t in (first, second, third)] == [
        ("openai:conv-a", None),
        ("openai:conversations#2", "Untitled export"),
        ("openai:conv-a#3", None),
    ]
    assert rows(first) == [
        (5, 8, "user", M, True, False, "Hi", None, None),
        (9, 12, "assistant", M, True, False, "Hello!", None, None),
    ]
    assert rows(second) == [
        (18, 21, "system", M, True, False, "Answer tersely.", None, None),
        (22, 25, "user", M, True, False, "2+2?", None, None),
        (26, 29, "assistant", M, True, False, "4", None, None),
    ]
    assert second.messages[0].metadata["source_role"] == "developer"
    assert rows(third) == [(35, 38, "user", M, True, False, "Same id again", None, None)]


def test_bare_list_of_messages(fixtures: Path, rows):
    [thread] = parse_openai(fixtures / OPENAI / "messages.json")
    assert thread.channel == "openai:messages"
    assert rows(thread) == [
        (2, 5, "user", M, True, False, "List three colours", None, None),
        (6, 9, "assistant", M, True, False, "Red, green, blue.", None, None),
    ]


CHATS_ROWS = [
    [
        (1, 1, "user", M, True, False, "Ping", None, None),
        (1, 1, "assistant", M, True, False, "Pong", None, None),
    ],
    [
        (2, 2, "user", M, True, False, "Translate 'hei'", None, None),
        (2, 2, "assistant", M, True, False, "'hi'", None, None),
    ],
    [
        (5, 5, "user", M, True, False, "A bare list line", None, None),
        (5, 5, "assistant", M, True, False, "Noted.", None, None),
    ],
]
CHATS_SKIPPED = [SkippedLine(4, "invalid JSON: Expecting ',' delimiter (column 31)")]


def test_jsonl_with_one_conversation_per_line(fixtures: Path, rows):
    threads = parse_openai(fixtures / OPENAI / "chats.jsonl")
    assert _summary(threads) == [
        ("openai:c1", None, CHATS_SKIPPED, {"export_metadata": 1}, False),
        ("openai:chats#2", None, [], {}, False),
        ("openai:chats#3", None, [], {}, False),
    ]
    assert [rows(t) for t in threads] == CHATS_ROWS


def test_truncated_copy(fixtures: Path, rows):
    original = (fixtures / OPENAI / "chats.jsonl").read_text(encoding="utf-8")
    truncated = fixtures / OPENAI / "truncated" / "chats.jsonl"
    assert truncated.read_text(encoding="utf-8").startswith(original)
    threads = parse_openai(truncated)
    assert _summary(threads)[0] == (
        "openai:c1",
        None,
        CHATS_SKIPPED,
        {"export_metadata": 1},
        True,
    )
    assert [rows(t) for t in threads] == CHATS_ROWS


def test_jsonl_with_one_message_per_line(fixtures: Path, rows):
    [thread] = parse_openai(fixtures / OPENAI / "notes.jsonl")
    assert thread.channel == "openai:notes"
    assert rows(thread) == [
        (1, 1, "system", M, True, False, "You are terse.", None, None),
        (2, 2, "user", M, True, False, "Read notes.txt", None, None),
        (
            3, 3, "assistant", M, True, False, "",
            [
                {"id": "call_r1", "name": "read_file", "arguments": '{"path": "notes.txt"}'},
                {"id": "call_r2", "name": "grep", "arguments": "TODO notes.txt"},
            ],
            None,
        ),
        (4, 4, "tool", M, True, False, "buy milk", None, "call_r1"),
        (5, 5, "tool", M, True, False, "no matches", None, "call_r2"),
        (7, 7, "assistant", M, True, False, "Your notes say: buy milk.", None, None),
    ]  # fmt: skip
    assert thread.skipped == [SkippedLine(6, "message with unknown role 'narrator'")]


@pytest.mark.parametrize(
    ("text", "line", "kept"),
    [
        ('{\n  "messages": [\n    {"role": "user",, "content": "x"}\n  ]\n}\n', 3, []),
        ('{\n  "messages": [\n    {"role": "user", "content": "x"}\n', 4, []),
        # elements of a top-level list before the error are kept
        ('[\n  {"role": "user", "content": "x"}\n  {"role": "user"}\n]\n', 3, ["x"]),
    ],
)
def test_a_broken_document_reports_the_line_of_the_error(
    tmp_path: Path, text: str, line: int, kept: list[str]
):
    path = tmp_path / "broken.json"
    path.write_text(text, encoding="utf-8")
    [thread] = parse_openai(path)
    assert [message.content for message in thread.messages] == kept
    assert [skipped.line for skipped in thread.skipped] == [line]


def test_documents_of_other_shapes(tmp_path: Path, rows):
    cases = {
        "number.json": ("42\n", [SkippedLine(1, "not a JSON object: int")], {}),
        "meta.json": ('{\n "type": "export"\n}\n', [], {"export": 1}),
        "empty.json": ("", [], {}),
        "one.json": ('{"role": "user", "content": [{"type": "input_audio", '
                     '"input_audio": {"format": "wav"}}, {"type": "file", '
                     '"file": {"filename": "a.pdf"}}, {"type": "mystery"}]}\n', [],
                     {"content_part:mystery": 1}),
    }  # fmt: skip
    for name, (text, skipped, unknown) in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        [thread] = parse_openai(path)
        assert (thread.channel, thread.skipped, thread.unknown_records) == (
            f"openai:{Path(name).stem}",
            skipped,
            unknown,
        ), name
    [one] = parse_openai(tmp_path / "one.json")
    assert one.messages[0].content == "[audio: wav]\n\n[file: a.pdf]\n\n[mystery]"


def test_jsonl_detected_by_content_when_the_suffix_is_json(tmp_path: Path):
    path = tmp_path / "export.json"
    lines = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    [thread] = parse_openai(path)
    assert [(m.content, m.line_start) for m in thread.messages] == [("a", 1), ("b", 2)]


def test_a_minified_one_line_document_is_a_document(tmp_path: Path):
    conversations = [
        {"messages": [{"role": "user", "content": "a"}]},
        {"id": "k", "messages": [{"role": "user", "content": "b"}]},
    ]
    listing = tmp_path / "list.json"
    listing.write_text(json.dumps(conversations), encoding="utf-8")
    assert [(t.channel, t.messages[0].content) for t in parse_openai(listing)] == [
        ("openai:list#1", "a"),
        ("openai:k", "b"),
    ]
    single = tmp_path / "single.json"
    single.write_text(json.dumps(conversations[0]), encoding="utf-8")
    assert [t.channel for t in parse_openai(single)] == ["openai:single"]
