"""MEMORY.md export and parse (DESIGN §4.3): round trips for any text, edits, problems by line."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.memory_md import (
    HEADER_COMMENT,
    FileProblem,
    ParsedEntry,
    entry_markdown,
    export_memory_md,
    metadata_comment,
    parse_memory_md,
)
from recallbox.domains.memory_model import MEMORY_STATES, MEMORY_TYPES, format_key, parse_key
from recallbox.types import MemoryEntry

DAY = date(2025, 3, 1)


def entry(key: str = "GDL01", **changes: object) -> MemoryEntry:
    base = MemoryEntry(
        key=key,
        type=parse_key(key)[0],
        title="Run the tests",
        body="Before every commit.",
        state="active",
        created=DAY,
        last_referenced=None,
        state_since=DAY,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def entries_back(text: str) -> list[MemoryEntry]:
    parsed = parse_memory_md(text)
    assert parsed.errors == () and parsed.unknown == ()
    out = []
    for item in parsed.entries:
        assert item.metadata is not None
        out.append(replace(item.metadata, title=item.title, body=item.body))
    return out


def test_export_layout_is_exact() -> None:
    text = export_memory_md(
        [
            entry("PIT01", title=None, body="Never rebase main.\nAsk first."),
            entry("GDL02", evergreen=True, ref_count=3, last_referenced=date(2025, 3, 9)),
            entry("PRI01", title="Small steps", body="", superseded_by="PRI02"),
        ]
    )
    assert text == (
        "# Memory\n\n" + HEADER_COMMENT + "\n\n## Principles\n\n"
        "- **Small steps**\n"
        "  <!-- key=PRI01 type=principle state=active state_since=2025-03-01 created=2025-03-01"
        " last_referenced=- ref_count=0 evergreen=no superseded_by=PRI02 -->\n"
        "\n## Corrections\n\n## Decisions\n\n## Guidelines\n\n"
        "- **Run the tests**\n  Before every commit.\n"
        "  <!-- key=GDL02 type=guideline state=active state_since=2025-03-01 created=2025-03-01"
        " last_referenced=2025-03-09 ref_count=3 evergreen=yes superseded_by=- -->\n"
        "\n## Pitfalls\n\n"
        "- Never rebase main.\n  Ask first.\n"
        "  <!-- key=PIT01 type=pitfall state=active state_since=2025-03-01 created=2025-03-01"
        " last_referenced=- ref_count=0 evergreen=no superseded_by=- -->\n"
        "\n## Processes\n\n## Models\n"
    )


def test_entries_are_in_type_then_key_order() -> None:
    keys = ["MOD01", "GDL10", "GDL02", "PRI03", "GDL100", "COR01"]
    back = entries_back(export_memory_md([entry(k) for k in keys]))
    assert [e.key for e in back] == ["PRI03", "COR01", "GDL02", "GDL10", "GDL100", "MOD01"]


_any_text = st.text(st.characters(codec="utf-8"), max_size=60)
_tricky = st.sampled_from(
    [
        "",
        "\n",
        "-->",
        "<!--",
        "  <!-- key=GDL01 -->",
        "\\",
        "**",
        "*",
        "- x",
        "## h",
        "# t",
        "\\n",
        " ",
        "\t",
        "a\n\nb",
        "**bold**",
        "\r",
        "\u2028",
        "\\**",
    ]
)
_texts = st.lists(st.one_of(_any_text, _tricky), min_size=1, max_size=4).map("\n".join)
_dates = st.one_of(st.none(), st.dates(date(1990, 1, 1), date(2100, 1, 1)))


@st.composite
def memory_entries(draw: st.DrawFn) -> list[MemoryEntry]:
    count = draw(st.integers(0, 6))
    numbers = draw(st.lists(st.integers(1, 150), min_size=count, max_size=count, unique=True))
    out = []
    for number in numbers:
        memory_type = draw(st.sampled_from(MEMORY_TYPES))
        out.append(
            MemoryEntry(
                key=format_key(memory_type, number),
                type=memory_type,
                title=draw(st.one_of(st.none(), _texts)),
                body=draw(_texts),
                state=draw(st.sampled_from(MEMORY_STATES)),
                created=draw(_dates),
                last_referenced=draw(_dates),
                state_since=draw(_dates),
                ref_count=draw(st.integers(0, 10_000)),
                evergreen=draw(st.booleans()),
                superseded_by=draw(st.one_of(st.none(), st.just("PIT07"))),
            )
        )
    return out


@given(memory_entries())
def test_export_parse_export_is_identical(entries: list[MemoryEntry]) -> None:
    text = export_memory_md(entries)
    back = entries_back(text)
    assert sorted(back, key=lambda e: e.key) == sorted(entries, key=lambda e: e.key)
    assert export_memory_md(back) == text


@given(memory_entries(), st.data())
def test_editing_one_field_changes_exactly_that_field(
    entries: list[MemoryEntry], data: st.DataObject
) -> None:
    if not entries:
        return
    target = data.draw(st.sampled_from(entries))
    field = data.draw(st.sampled_from(["title", "body", "state", "evergreen"]))
    if field == "title":
        edited = replace(target, title=data.draw(st.one_of(st.none(), _texts)))
    elif field == "body":
        edited = replace(target, body=data.draw(_texts))
    elif field == "state":
        edited = replace(target, state=data.draw(st.sampled_from(MEMORY_STATES)))
    else:
        edited = replace(target, evergreen=not target.evergreen)
    text = export_memory_md([edited if e.key == target.key else e for e in entries])
    back = {e.key: e for e in entries_back(text)}
    for original in entries:
        assert back[original.key] == (edited if original.key == target.key else original)


def test_person_edits_are_read() -> None:
    text = export_memory_md([entry("GDL01"), entry("PIT01", title=None, body="old")])
    text = text.replace("- **Run the tests**", "- **Run all the tests**")
    text = text.replace("- old\n", "- new body\n  second line\n")
    text = text.replace("type=pitfall state=active", "type=pitfall state=archived")
    back = {e.key: e for e in entries_back(text)}
    assert back["GDL01"] == entry("GDL01", title="Run all the tests")
    assert back["PIT01"] == entry(
        "PIT01", title=None, body="new body\nsecond line", state="archived"
    )


def test_new_bullets_unknown_lines_and_lenient_indentation() -> None:
    text = export_memory_md([entry("GDL01")])
    text = text.replace(
        "## Pitfalls\n",
        "## Pitfalls\n\n- **Mind the cache**\n  Clear it after a schema change.\n\n"
        "- Plain new lesson\ncontinued at the margin\n\nstray text\n",
    )
    parsed = parse_memory_md(text)
    assert parsed.errors == ()
    new = [e for e in parsed.entries if e.metadata is None]
    line = text.split("\n").index("- **Mind the cache**") + 1
    assert new == [
        ParsedEntry(line, "pitfall", "Mind the cache", "Clear it after a schema change.", None),
        ParsedEntry(line + 3, "pitfall", None, "Plain new lesson\ncontinued at the margin", None),
    ]
    assert parsed.unknown == (FileProblem(line + 6, "stray text", "not part of an entry"),)


def test_problems_carry_line_numbers() -> None:
    good = export_memory_md([entry("GDL01"), entry("GDL02")])
    lines = good.split("\n")
    comment = next(i for i, line in enumerate(lines) if "key=GDL02" in line)
    lines[comment] = lines[comment].replace("ref_count=0", "ref_count=lots")
    lines.insert(4, "## Gossip")
    lines.insert(5, "- orphan bullet")
    parsed = parse_memory_md("\n".join(lines))
    assert [(p.line, p.reason.split(":")[0]) for p in parsed.errors] == [
        (6, "a new bullet outside a type section (## Principles …)"),
        (comment + 3, "malformed metadata comment"),
    ]
    assert [p.line for p in parsed.unknown] == [5]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda c: c.replace("state=active", "state=sleepy"), "unknown memory state"),
        (lambda c: c.replace("key=GDL01", "key=PIT01"), "key PIT01 is a pitfall"),
        (lambda c: c.replace("key=GDL01", "key=GDL1"), "not a memory key"),
        (lambda c: c.replace(" evergreen=no", ""), "missing field(s) evergreen"),
        (lambda c: c.replace("created=2025-03-01", "created=yesterday"), "not a date"),
        (lambda c: c.replace("ref_count=0", "ref_count=0 ref_count=1"), "field ref_count given"),
        (lambda c: c.replace("ref_count=0", "colour=blue"), "unknown field 'colour=blue'"),
        (lambda c: c.replace(" -->", ""), "a metadata comment is one line"),
        (lambda c: c.replace("evergreen=no", "evergreen=maybe"), "evergreen is yes or no"),
    ],
)
def test_malformed_comments(edit: object, reason: str) -> None:
    comment = "  " + metadata_comment(entry())
    text = export_memory_md([entry()]).replace(comment, edit(comment))  # type: ignore[operator]
    (problem,) = parse_memory_md(text).errors
    assert reason in problem.reason
    assert text.split("\n")[problem.line - 1] == edit(comment)  # type: ignore[operator]


def test_duplicate_keys_and_orphan_comments_are_errors() -> None:
    text = export_memory_md([entry()])
    comment = "  " + metadata_comment(entry())
    doubled = text.replace(comment, comment + "\n\n- again\n" + comment)
    assert [p.reason for p in parse_memory_md(doubled).errors] == ["key GDL01 appears twice"]
    orphan = text + "\n" + comment + "\n"
    assert [p.reason for p in parse_memory_md(orphan).errors] == [
        "a metadata comment with no bullet"
    ]


def test_entry_markdown_is_the_bullet_without_its_comment() -> None:
    assert entry_markdown(entry()) == "- **Run the tests**\n  Before every commit."
    assert entry_markdown(entry(title=None, body="**x**\n<!--")) == "- \\**x**\n  \\<!--"
