"""Streaming JSONL reading and timestamp parsing shared by the parsers."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from recallbox.importers._common import FileReport, iter_json_lines, parse_timestamp
from recallbox.importers.records import SkippedLine


def test_lines_blank_lines_crlf_and_bad_bytes(tmp_path: Path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\r\n\n  \n{"b": "\xff"}\nnot json\n[1]\n{"c": tru')
    report = FileReport()
    assert list(iter_json_lines(path, report)) == [(1, {"a": 1}), (4, {"b": "\ufffd"}), (6, [1])]
    assert report.skipped == [SkippedLine(5, "invalid JSON: Expecting value (column 1)")]
    assert report.truncated_tail is True


def test_a_complete_last_line_without_newline_is_not_truncated(tmp_path: Path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}', encoding="utf-8")
    report = FileReport()
    assert [number for number, _ in iter_json_lines(path, report)] == [1, 2]
    assert (report.truncated_tail, report.skipped) == (False, [])


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2025-09-01T10:00:00.000Z", datetime(2025, 9, 1, 10, tzinfo=UTC)),
        ("2025-09-01T12:00:00+02:00", datetime(2025, 9, 1, 10, tzinfo=UTC)),
        ("2025-09-01T10:00:00", datetime(2025, 9, 1, 10, tzinfo=UTC)),
        (1751358660, datetime(2025, 7, 1, 8, 31, tzinfo=UTC)),
        (1751358660500, datetime(2025, 7, 1, 8, 31, 0, 500000, tzinfo=UTC)),
        ("yesterday", None),
        (True, None),
        (None, None),
        (1e300, None),
    ],
)
def test_parse_timestamp(value: object, expected: datetime | None):
    parsed = parse_timestamp(value)
    assert parsed == expected
    if parsed is not None:
        assert parsed.tzinfo is UTC
