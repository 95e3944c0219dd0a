"""Markdown sections and entries (DESIGN §2, §4.4; #10 item 1)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.text.markdown import (
    content_hash,
    heading_of,
    split_entries,
    split_markdown,
    split_plain_text,
)


def shape(text: str) -> list[tuple[str | None, int, int]]:
    return [(s.heading, s.start_line, s.end_line) for s in split_markdown(text)]


def test_split_points_are_level_two_and_three() -> None:
    doc = "# Title\n\n## A\na\n### B\nb\n#### C\nc\n# Another title\n## D\n"
    assert shape(doc) == [("A", 1, 4), ("B", 5, 9), ("D", 10, 10)]


def test_text_before_the_first_heading() -> None:
    assert shape("intro\n## A\n") == [(None, 1, 1), ("A", 2, 2)]
    assert shape("# Title\n\n   \n## A\nx") == [("A", 1, 5)]  # title and blanks only
    assert shape("# T\n#### sub\n## A\n") == [("A", 1, 3)]  # heading lines are not text


def test_no_headings_is_one_section_and_empty_is_none() -> None:
    assert shape("just text\nmore\n") == [(None, 1, 2)]
    assert shape("\n\n") == [(None, 1, 2)]
    assert split_markdown("") == []
    assert [(s.heading, s.lines) for s in split_plain_text("## not split\nx")] == [(None, (1, 2))]


@pytest.mark.parametrize(
    "fence",
    ["```", "````", "~~~", "~~~~~", "``` python", "```{.py title=x}", "~~~ `ok` here", "   ```"],
)
def test_headings_inside_fences_are_not_split_points(fence: str) -> None:
    marker = fence.strip()[0]
    closing = marker * (len(fence.strip()) - len(fence.strip().lstrip(marker)))
    doc = f"## A\n{fence}\n## inside\n{closing}\n## B\n"
    assert shape(doc) == [("A", 1, 4), ("B", 5, 5)]


def test_fence_rules() -> None:
    # a shorter run does not close a longer fence; an unclosed fence runs to the end
    assert shape("## A\n````\n```\n## in\n````\n## B\n") == [("A", 1, 5), ("B", 6, 6)]
    assert shape("## A\n```\n## in\n") == [("A", 1, 3)]
    # backticks inside a backtick info string: not a fence
    assert shape("## A\n``` a`b\n## B\n") == [("A", 1, 2), ("B", 3, 3)]
    # a tilde fence is not closed by backticks
    assert shape("## A\n~~~\n```\n## in\n~~~\n## B\n") == [("A", 1, 5), ("B", 6, 6)]
    # four spaces of indentation: neither a heading nor a fence
    assert shape("## A\n    ## code\n    ```\n## B\n") == [("A", 1, 3), ("B", 4, 4)]


def test_heading_text() -> None:
    assert heading_of("## Deploy ##") == (2, "Deploy")
    assert heading_of("###   Spaced   ") == (3, "Spaced")
    assert heading_of("##") == (2, "")
    assert heading_of("##no-space") is None
    assert heading_of("   ## three spaces") == (2, "three spaces")
    assert heading_of("## C# tips") == (2, "C# tips")


def test_hashes_separate_the_heading_line_from_the_body() -> None:
    a, b = split_markdown("## Old\nsame body\n## Other\nx\n")
    (renamed, _) = split_markdown("## New\nsame body\n## Other\nx\n")
    assert renamed.body_hash == a.body_hash and renamed.content_hash != a.content_hash
    assert a.content == "## Old\nsame body\n" and a.body == "same body\n"
    assert a.content_hash == content_hash(a.content) and a.heading_line == 1
    assert b.heading_line == 3


_line = st.one_of(
    st.sampled_from(
        [
            "## A",
            "### B",
            "# T",
            "#### d",
            "```",
            "~~~",
            "````x",
            "",
            "  ",
            "text",
            "- item",
            "  nested",
            "1. one",
            "    ## code",
            "##",
            "## A ##",
            "\r",
            "\u2028",
        ]
    ),
    st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=12),
)
_docs = st.lists(_line, max_size=30).flatmap(
    lambda lines: st.sampled_from(["", "\n"]).map(lambda end: "\n".join(lines) + end)
)


@given(_docs)
def test_sections_rejoin_partition_and_are_deterministic(doc: str) -> None:
    sections = split_markdown(doc)
    assert "".join(s.content for s in sections) == doc
    expected_lines = doc.count("\n") + (0 if doc.endswith("\n") or not doc else 1)
    covered = [n for s in sections for n in range(s.start_line, s.end_line + 1)]
    assert covered == list(range(1, expected_lines + 1))
    assert split_markdown(doc) == sections
    for s in sections:
        lines = s.content.split("\n")
        if s.heading_line is not None:
            assert heading_of(lines[s.heading_line - s.start_line])[0] in (2, 3)  # type: ignore[index]


@given(_docs)
def test_entries_are_verbatim_disjoint_and_cover_every_non_blank_line(doc: str) -> None:
    for section in split_markdown(doc):
        entries = split_entries(section.content, section.start_line, skip_line=section.heading_line)
        doc_lines = doc.split("\n")
        seen: list[int] = []
        for e in entries:
            assert e.text == "\n".join(doc_lines[e.start_line - 1 : e.end_line])
            seen.extend(range(e.start_line, e.end_line + 1))
        assert seen == sorted(set(seen))
        for number in range(section.start_line, section.end_line + 1):
            if number != section.heading_line and doc_lines[number - 1].strip():
                assert number in seen


def test_entries_of_a_section() -> None:
    doc = (
        "## Deploy\n"
        "Intro paragraph\nstill intro.\n\n"
        "- step one\n  continued\n- step two\n\n  nested para\n  - sub\n- step three\n"
        "```bash\n## not a heading\n\n```\n"
        "#### Notes\n"
        "1. numbered\n2) also\n\n"
        "last para\n"
    )
    (section,) = split_markdown(doc)
    got = [
        (e.start_line, e.end_line, e.is_item, e.is_heading)
        for e in split_entries(section.content, 1, skip_line=section.heading_line)
    ]
    assert got == [
        (2, 3, False, False),
        (5, 6, True, False),
        (7, 10, True, False),
        (11, 11, True, False),
        (12, 15, False, False),
        (16, 16, False, True),
        (17, 17, True, False),
        (18, 18, True, False),
        (20, 20, False, False),
    ]
