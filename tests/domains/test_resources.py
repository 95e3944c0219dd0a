"""The compaction summary's mechanical resource directory (DESIGN §3.4)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import recallbox
from recallbox.domains.resources import (
    RESOURCE_DIRECTORY_MAX_CHARS,
    extract_resources,
    instruction_line,
    resources_of_call,
)
from recallbox.samples.demo import load_sample

INSTRUCTION = (
    'To recover earlier experience with a resource, call search_memory(channel="ops", '
    'query="<resource name or path>"); results are bounded windows with message ids for '
    "read_message."
)


def call(name: str, arguments: Any, call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def test_resources_of_one_call() -> None:
    found = resources_of_call(
        call(
            "bash",
            {
                "command": "ssh -i ~/.ssh/id_ed25519 deploy@staging-03.example "
                "'curl -s https://api.example.com/v1/health'",
                "files": [{"path": "src/app.py"}, {"path": "C:\\Users\\ci\\.ssh\\id_rsa"}],
                "url": "https://docs.example.org/x?y=1",
                "host": "db-1",
            },
        )
    )
    assert found == [
        ("tool", "bash"),
        (
            "command",
            "ssh -i ~/.ssh/id_ed25519 deploy@staging-03.example "
            "'curl -s https://api.example.com/v1/health'",
        ),
        ("url", "https://api.example.com/v1/health"),
        ("host", "api.example.com"),
        ("file", "~/.ssh/id_ed25519"),
        ("host", "staging-03.example"),
        ("file", "src/app.py"),
        ("file", "C:\\Users\\ci\\.ssh\\id_rsa"),
        ("file", "C:\\Users\\ci\\.ssh\\id_rsa"),
        ("url", "https://docs.example.org/x?y=1"),
        ("url", "https://docs.example.org/x?y=1"),
        ("host", "docs.example.org"),
        ("host", "db-1"),
    ]


def test_a_raw_string_argument_is_scanned_too() -> None:
    found = resources_of_call(call("shell", "cat /etc/hosts && ping -c1 web@10.0.0.7"))
    assert ("file", "/etc/hosts") in found and ("host", "10.0.0.7") in found


def _thread(box: recallbox.Box, results: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """One ssh call per result; returns the message ids in order (call, result, call, ...)."""
    ids = []
    for i, (content, metadata) in enumerate(results):
        ids.append(
            box.append(
                "ops",
                "assistant",
                "",
                tool_calls=[call("bash", {"command": "ssh deploy@web-1"}, f"c{i}")],
            ).id
        )
        ids.append(box.append("ops", "tool", content, tool_call_id=f"c{i}", metadata=metadata).id)
    return ids


def test_first_successful_use_skips_failures(box: recallbox.Box) -> None:
    ids = _thread(
        box,
        [
            ("ok", {"is_error": True}),
            ("ok", {"exit_code": 255}),
            ("ssh: connect to host web-1 port 22: Connection refused", {}),
            ("Error: permission denied (publickey)", {}),
            ("Last login: Mon\nwelcome to web-1\n" + "line\n" * 10 + "error later is fine", {}),
        ],
    )
    resources = {(r.kind, r.name): r for r in extract_resources(box.messages("ops"))}
    host = resources[("host", "web-1")]
    assert host.succeeded and host.evidence == (ids[8], ids[9])
    assert resources[("tool", "bash")].evidence == (ids[8], ids[9])


def test_never_successful_resources_are_listed_with_their_first_use(box: recallbox.Box) -> None:
    ids = _thread(box, [("fatal: no route", {})])
    box.append("ops", "assistant", "", tool_calls=[call("read", {"path": "/nowhere"}, "orphan")])
    [_bash, _command, host, _read, nowhere] = extract_resources(box.messages("ops"))
    assert not host.succeeded and host.evidence == (ids[0], ids[1])
    assert not nowhere.succeeded and len(nowhere.evidence) == 1  # a call without a result
    box.compact("ops", "summary")
    summary = box.messages("ops", 2)[0].content
    assert "- host `web-1`: no successful use; first use " + ", ".join(ids[:2]) in summary


def test_compaction_appends_directory_and_instruction(box: recallbox.Box) -> None:
    box.append("ops", "user", "hello")
    box.compact("ops", "First summary.")
    summary = box.messages("ops", 2)[0]
    assert summary.kind == "compaction_summary" and summary.role == "system"
    assert summary.content == (
        "First summary.\n\n## Resources used in generation 1\n"
        "A mechanical directory: each resource with the message ids of its first successful "
        "use (tool call, tool result).\n(no tool activity)\n\n" + INSTRUCTION
    )
    assert instruction_line("ops") == INSTRUCTION
    assert box.compact("ops", "Second.").number == 3  # an empty generation compacts too
    assert box.messages("ops", 3)[0].content.startswith(
        "Second.\n\n## Resources used in generation 2"
    )


@pytest.mark.parametrize("summary", ["", "   ", "\n\t", "\x00"])
def test_an_empty_summary_is_refused(box: recallbox.Box, summary: str) -> None:
    box.append("ops", "user", "hello")
    with pytest.raises(recallbox.InvalidArgument, match="summary is empty"):
        box.compact("ops", summary)
    assert box.thread("ops").generation_count == 1


def test_the_demo_directory_points_at_the_evidence(box: recallbox.Box) -> None:
    channel = load_sample(box)
    gen1 = box.messages(channel, 1)
    summary = box.messages(channel, 2)[0].content
    ssh_call = next(m for m in gen1 if m.tool_calls and m.tool_calls[0]["id"] == "call_ssh_1")
    journal = next(m for m in gen1 if m.tool_call_id == "call_ssh_1")
    evidence = f"first successful use {ssh_call.id}, {journal.id}"
    assert f"- file `~/.ssh/staging_ed25519`: {evidence}" in summary
    assert f"- host `staging-03.internal.example`: {evidence}" in summary
    assert "- file `C:\\Users\\ci\\.ssh\\id_rsa`:" in summary
    assert "- host `pg-replica-1`:" in summary
    assert summary.endswith(instruction_line(channel))
    # the directory's names are queries that find the evidence (tool names are not a searched
    # field: the evidence ids next to them are read with read_message)
    for name in re.findall(r"^- (?:command|file|url|host) `([^`]+)`", summary, re.MULTILINE):
        assert "[message_id=" in box.search_memory(name, channel), name


def test_directory_is_bounded(box: recallbox.Box) -> None:
    box.append_many(
        "ops",
        [
            {
                "role": "assistant",
                "tool_calls": [call(f"tool_{i}", {"path": f"/srv/data/file_{i:04d}.csv"}, f"c{i}")],
            }
            for i in range(500)
        ],
    )
    box.compact("ops", "s")
    summary = box.messages("ops", 2)[0].content
    directory = summary.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
    assert len(directory) <= RESOURCE_DIRECTORY_MAX_CHARS
    assert re.search(r"- … \d+ more resources not listed; search_memory finds them\.$", directory)
    long_name = "x" * 5000
    box.append("ops", "assistant", "", tool_calls=[call("bash", {"command": long_name})])
    box.compact("ops", "s")
    assert "x" * 201 not in box.messages("ops", 3)[0].content
