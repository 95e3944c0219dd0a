"""A deterministic Claude Code session file of any length, for the import tests that need a
long one (processes, sizes)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

SESSION = "0b5e55ed-0000-4000-8000-0000000c0ffe"
RECORDS_PER_TURN = 4
"""A prompt, a tool call, its result and an answer (plus a retried answer every 50 turns)."""


def write_session(path: Path, turns: int) -> int:
    """A deterministic Claude Code session: per turn a prompt, a tool call, a long tool
    result and an answer; a retried answer every 50 turns; a compaction half way."""
    lines: list[dict[str, Any]] = []
    parent: str | None = None
    clock = 1_756_720_800

    def add(kind: str, message: dict[str, Any], **more: Any) -> str:
        nonlocal parent, clock
        clock += 2
        uuid = f"{len(lines):08d}-0000-4000-8000-000000000000"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock))
        record = {"type": kind, "uuid": uuid, "parentUuid": more.pop("parentUuid", parent),
                  "sessionId": SESSION, "timestamp": stamp, "message": message, **more}  # fmt: skip
        lines.append(record)
        parent = uuid
        return uuid

    for turn in range(turns):
        if turn == turns // 2:
            boundary = add("system", {}, subtype="compact_boundary", content="compacted",
                           parentUuid=None, logicalParentUuid=parent)  # fmt: skip
            lines[-1].pop("message")
            parent = boundary
            add("user", {"role": "user", "content": f"Summary of turns before {turn}"},
                isCompactSummary=True)  # fmt: skip
        add("user", {"role": "user", "content": f"turn {turn}: please check service-{turn}"})
        call = f"toolu_{turn:06d}"
        add("assistant", {"id": f"msg_{turn}a", "role": "assistant", "content": [
            {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": f"check {turn}"}}
        ]})  # fmt: skip
        output = "\n".join(f"line {i} of the output of check {turn}" for i in range(60))
        add("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call, "content": output}
        ]})  # fmt: skip
        asked = parent
        add("assistant", {"id": f"msg_{turn}b", "role": "assistant",
                          "content": [{"type": "text", "text": f"service-{turn} is fine"}]})  # fmt: skip
        if turn % 50 == 49:  # a retried answer: the first one is abandoned
            add("assistant", {"id": f"msg_{turn}c", "role": "assistant",
                              "content": [{"type": "text", "text": f"service-{turn}: retried"}]},
                parentUuid=asked)  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return len(lines)
