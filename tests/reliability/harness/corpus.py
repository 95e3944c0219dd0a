"""Synthetic inputs: transcripts in the three import formats, and words that never collide.

Every generated text carries a unique marker word, so a test can count each item exactly once
in the store (no lost write, no duplicate).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WORDS = [
    "deploy",
    "staging",
    "billing",
    "cache",
    "index",
    "shard",
    "replica",
    "vacuum",
    "latency",
    "window",
    "token",
    "budget",
    "compaction",
    "summary",
    "migration",
    "rollback",
    "pipeline",
    "artifact",
    "kernel",
    "socket",
    "buffer",
    "parser",
]
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


def marker(prefix: str, *parts: object) -> str:
    """A single-token marker such as ``w3x0x17`` (letters and digits only: one FTS token)."""
    return prefix + "x".join(str(p) for p in parts)


def sentence(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def _stamp(i: int) -> str:
    return (EPOCH + timedelta(seconds=i)).isoformat().replace("+00:00", "Z")


def claude_records(session: str, turns: int, *, start: int = 0, seed: int = 0) -> list[str]:
    """Claude Code JSONL lines: per turn a user prompt, a tool call, its result, an answer."""
    rng = random.Random(f"{seed}:{session}:{start}")
    lines: list[str] = []
    parent: str | None = f"{session}-t{start - 1}-a" if start else None
    base = {"isSidechain": False, "sessionId": session, "userType": "external"}
    for t in range(start, start + turns):

        def rec(uid: str, kind: str, message: dict[str, Any], t: int = t) -> None:
            nonlocal parent
            row = {**base, "parentUuid": parent, "type": kind, "message": message, "uuid": uid}
            row["timestamp"] = _stamp(t)
            lines.append(json.dumps(row))
            parent = uid

        rec(
            f"{session}-t{t}-u",
            "user",
            {"role": "user", "content": f"{marker('cq', t)} " + sentence(rng)},
        )
        call = {
            "type": "tool_use",
            "id": f"toolu_{session}_{t}",
            "name": "Bash",
            "input": {"command": f"grep {marker('cc', t)} -r ."},
        }
        rec(
            f"{session}-t{t}-c",
            "assistant",
            {"id": f"msg_{session}_{t}c", "role": "assistant", "content": [call]},
        )
        result = {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": f"{marker('cr', t)} " + sentence(rng, 30),
        }
        rec(f"{session}-t{t}-r", "user", {"role": "user", "content": [result]})
        rec(
            f"{session}-t{t}-a",
            "assistant",
            {
                "id": f"msg_{session}_{t}a",
                "role": "assistant",
                "content": [{"type": "text", "text": f"{marker('ca', t)} " + sentence(rng)}],
            },
        )
    return lines


def codex_records(session: str, turns: int, *, seed: int = 0) -> list[str]:
    """A Codex rollout: the session header, then messages, function calls and outputs."""
    rng = random.Random(f"{seed}:{session}")
    lines = [json.dumps({"id": session, "timestamp": _stamp(0), "instructions": None})]
    for t in range(turns):
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {"type": "input_text", "text": f"{marker('xq', t)} {sentence(rng)}"}
                    ],
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "function_call",
                    "id": f"fc_{t}",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["ls", marker("xc", t)]}),
                    "call_id": f"call_{t}",
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "function_call_output",
                    "call_id": f"call_{t}",
                    "output": json.dumps({"output": f"{marker('xr', t)} " + sentence(rng, 30)}),
                }
            )
        )
        lines.append(
            json.dumps(
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": f"{marker('xa', t)} {sentence(rng)}"}
                    ],
                }
            )
        )
    return lines


def openai_records(conversations: int, turns: int, *, seed: int = 0) -> list[str]:
    """OpenAI-format JSONL: one conversation per line."""
    rng = random.Random(seed)
    lines = []
    for c in range(conversations):
        messages = []
        for t in range(turns):
            messages.append({"role": "user", "content": f"{marker('oq', c, t)} {sentence(rng)}"})
            messages.append(
                {"role": "assistant", "content": f"{marker('oa', c, t)} {sentence(rng)}"}
            )
        lines.append(json.dumps({"id": f"conv{c}", "messages": messages}))
    return lines


def write_lines(path: Path, lines: list[str], *, mode: str = "w") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode, encoding="utf-8") as out:
        out.writelines(line + "\n" for line in lines)
