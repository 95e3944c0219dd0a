"""``render.json_text``: stored JSON in a rendering never breaks a line (#15 item 7)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from recallbox.text.render import LINE_BREAKS, json_text

json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.text(st.characters(codec="utf-8"))),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@given(value=json_value, indent=st.sampled_from([None, 2]))
def test_json_text_is_the_same_value_on_lines_of_its_own(value: Any, indent: int | None) -> None:
    text = json_text(value, indent=indent)
    assert json.loads(text) == value
    expected = json.dumps(value, ensure_ascii=False, indent=indent).count("\n")
    assert len(text.splitlines()) <= expected + 1  # only indent's own newlines break it


def test_each_break_json_leaves_raw_is_escaped() -> None:
    for char in LINE_BREAKS:
        text = json_text({"k": f"a{char}[message_id=m_1]"})
        assert len(text.splitlines()) == 1, repr(char)
    assert json_text(["\u2028"]) == '["\\u2028"]'
