"""``box.message_page`` (DESIGN §3.3): the structured page ``read_message`` is formatted from."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox import THREAD_SEARCH_MAX_CHARS, InvalidArgument, NotFound, Page
from recallbox.domains.message_view import MESSAGE_HEADER, clip, format_page
from recallbox.text.normalize import escape_for_audit
from recallbox.text.render import ESCAPED_PREFIXES, LINE_BREAKS, escape_stored


def pages(box: recallbox.Box, message_id: str, view: str = "audit") -> list[Page]:
    out = [box.message_page(message_id, view=view)]
    while out[-1].next_offset is not None:
        out.append(box.message_page(message_id, view=view, offset=out[-1].next_offset))
    return out


def bodies(found: list[Page]) -> list[str]:
    """Each page without MESSAGE_HEADER and the escape of a mid-line start (not counted)."""
    out: list[str] = []
    for page in found:
        assert page.text.startswith(MESSAGE_HEADER + "\n")
        body = page.text[len(MESSAGE_HEADER) + 1 :]
        if out and out[-1] and out[-1][-1] not in LINE_BREAKS and body.startswith("\\"):
            assert body[1:].startswith(ESCAPED_PREFIXES)
            body = body[1:]
        out.append(body)
    return out


@settings(max_examples=25)
@given(st.text(max_size=40_000), st.sampled_from(["audit", "model"]))
def test_pages_tile_the_full_text_and_format_as_read_message(
    db_location: DbLocation, text: str, view: str
) -> None:
    with recallbox.open(db_location("pages")) as box:
        message = box.append("t", "tool", text)
        found = pages(box, message.id, view)
        total = found[0].total_chars
        parts = bodies(found)
        full = "".join(parts)
        assert len(full) == total
        stored = escape_stored(text if view == "audit" else recallbox.normalize_text(text))
        tail = escape_for_audit(stored) if view == "audit" else stored
        assert full.endswith(tail)
        for (before, after), body in zip(itertools.pairwise(found), parts, strict=False):
            assert before.next_offset == after.offset == before.offset + len(body)
        for page in found:
            formatted = format_page(page, message.id)
            assert formatted == box.read_message(message.id, view=view, offset=page.offset)
            assert len(formatted) <= THREAD_SEARCH_MAX_CHARS
        assert found[-1].next_offset is None and {p.total_chars for p in found} == {total}


def test_a_long_message_in_three_pages(box: recallbox.Box) -> None:
    message = box.append("ops", "tool", "y" * 30_000)
    first, second, third = pages(box, message.id)
    assert first.offset == 0 and first.next_offset == len(bodies([first])[0]) == second.offset
    assert format_page(first, message.id).endswith(
        f"\nContinue with read_message({message.id}, offset={first.next_offset})."
    )
    assert third.next_offset is None and format_page(third, message.id) == third.text


def test_errors_are_read_message_s(box: recallbox.Box) -> None:
    message = box.append("secret", "user", "swordfish")
    with pytest.raises(InvalidArgument, match="view must be one of audit, model; got 'raw'"):
        box.message_page(message.id, view="raw")
    with pytest.raises(InvalidArgument, match="non-negative integer, got -1"):
        box.message_page(message.id, offset=-1)
    with pytest.raises(InvalidArgument, match="past the end"):
        box.message_page(message.id, offset=10_000)
    box.quarantine("secret")
    with pytest.raises(NotFound) as hidden:
        box.message_page(message.id)
    with pytest.raises(NotFound) as unknown:
        box.message_page("m_0000000000000000")
    assert str(hidden.value) == str(unknown.value)


def test_echoed_values_are_cut() -> None:
    assert clip("x" * 10_000) == "'" + "x" * 78 + "…"
    assert clip(10**5000) == "<int too long to print>"
    with pytest.raises(InvalidArgument) as caught, recallbox.open(":memory:") as box:
        box.message_page("m_0000000000000000", view="v" * 100_000)
    assert len(str(caught.value)) < 200
