"""The format sniffer behind "wrong format?" (#17 item 9) reads hostile lines like the
importers do (#15): a line nested past the JSON parser's own limit is no vote, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

from recallbox.importers.detect import sniff_format, wrong_format
from recallbox.importers.records import FORMAT_CLAUDE_CODE, FORMAT_CODEX
from recallbox.limits import MAX_JSON_DEPTH

PAST_THE_PARSER = 10 * MAX_JSON_DEPTH  # deeper than Python's recursion limit too


def test_a_line_nested_past_the_parser_limit_is_no_vote(tmp_path: Path) -> None:
    path = tmp_path / "rollout-x.jsonl"
    deep = "[" * PAST_THE_PARSER + "]" * PAST_THE_PARSER
    codex = json.dumps({"type": "session_meta", "payload": {"id": "x"}})
    path.write_text(f"{deep}\n{codex}\n", encoding="utf-8")
    assert sniff_format(path) == FORMAT_CODEX
    hint = wrong_format(path, FORMAT_CLAUDE_CODE)
    assert hint is not None and hint.startswith("wrong format? this looks like a Codex rollout")
