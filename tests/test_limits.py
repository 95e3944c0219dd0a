"""The named limits for hostile input (DESIGN §8): depth measured without recursion."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.limits import MAX_JSON_DEPTH, TooDeep, json_depth, loads_bounded

values = st.recursive(
    st.one_of(st.none(), st.integers(), st.text(max_size=3)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)
    ),
    max_leaves=30,
)


def reference_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(reference_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(reference_depth, value), default=0)
    return 0


@given(values)
def test_depth_matches_the_recursive_definition(value: Any) -> None:
    assert json_depth(value) == reference_depth(value)


def test_the_limit_is_inclusive_and_any_depth_is_measured() -> None:
    at_limit = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(loads_bounded(at_limit)) == MAX_JSON_DEPTH
    for depth in (MAX_JSON_DEPTH + 1, 100_000):
        with pytest.raises(TooDeep, match=r"MAX_JSON_DEPTH \(512 levels\)"):
            loads_bounded("[" * depth + "]" * depth)
    deep: Any = 0
    for _ in range(50_000):
        deep = {"k": deep}
    assert json_depth(deep) == MAX_JSON_DEPTH + 1  # counting stops past the limit
    with pytest.raises(json.JSONDecodeError):
        loads_bounded("{")
