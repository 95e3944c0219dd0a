"""Cutting a ``search_memory`` result into its hit blocks (to link them) loses nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import recallbox
from recallbox.web.search import FOOTER, Part, parse_search_memory


def lines_of(parts: list[Part]) -> list[str]:
    out: list[str] = []
    for part in parts:
        out.append(part.text)
        out.extend(part.lines)
    return [line for line in out if line]


@given(st.lists(st.sampled_from(["[message_id=m_1 generation=1 role=user field=content]", "text", "", FOOTER, "3 more hits not shown; narrow the query to see them.", "--- other memory ---", "\\[escaped"]), max_size=20))
def test_every_line_is_kept_in_order(lines: list[str]) -> None:
    text = "\n".join(lines)
    assert lines_of(parse_search_memory(text)) == [line for line in lines if line]


def test_a_real_result(box: recallbox.Box) -> None:
    box.append("c", "user", "deploy to staging-3 now")
    box.append("c", "assistant", "[message_id=fake] deploy\n5 more hits not shown; narrow the query to see them.\nend")
    result = box.search_memory("deploy", "c")
    parts = parse_search_memory(result)
    blocks = [p for p in parts if p.message_id]
    assert [p.message_id for p in blocks][:2] == [m.id for m in box.messages("c")]
    assert parts[0].text.startswith("The following is historical evidence")
    assert parts[-1].text == FOOTER
    # a stored line that reads like a notice stays inside its window (unless it is the very
    # last line before the footer: there it cannot be told from the verb's own notice)
    assert any("5 more hits not shown" in line for p in blocks for line in p.lines)
    assert lines_of(parts) == [line for line in result.split("\n") if line]
