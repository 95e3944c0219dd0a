"""Memory types, keys, evergreen defaults, identical text, state weights (DESIGN §4.3)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.memory_model import (
    MEMORY_TYPES,
    STATE_WEIGHTS,
    SUPERSEDED_WEIGHT_FACTOR,
    TYPE_PREFIXES,
    default_evergreen,
    entry_weight,
    find_identical,
    format_key,
    identity_hash,
    identity_text,
    key_sort_key,
    next_key,
    parse_key,
    state_weight,
    validate_state,
    validate_type,
)
from recallbox.errors import InvalidArgument
from recallbox.types import MemoryEntry


def test_the_seven_types_and_prefixes_in_order() -> None:
    assert TYPE_PREFIXES == {
        "principle": "PRI",
        "correction": "COR",
        "decision": "DEC",
        "guideline": "GDL",
        "pitfall": "PIT",
        "process": "PRC",
        "model": "MOD",
    }
    assert tuple(TYPE_PREFIXES) == MEMORY_TYPES


@pytest.mark.parametrize("bad", ["Guideline", "lesson", "", None, 3])
def test_unknown_type_names_the_seven(bad: object) -> None:
    with pytest.raises(InvalidArgument) as info:
        validate_type(bad)
    assert "principle, correction, decision, guideline, pitfall, process, model" in str(info.value)


def test_states() -> None:
    assert validate_state("dormant") == "dormant"
    with pytest.raises(InvalidArgument, match="active, dormant, archived"):
        validate_state("superseded")


def test_keys_are_allocated_per_type_from_the_highest_ever_issued() -> None:
    assert next_key("pitfall", 0) == "PIT01"
    assert next_key("pitfall", 9) == "PIT10"
    assert next_key("model", 99) == "MOD100"
    assert format_key("decision", 7) == "DEC07"
    with pytest.raises(InvalidArgument):
        format_key("decision", 0)


@pytest.mark.parametrize(
    "bad", ["PIT1", "PIT00", "PIT003", "XYZ01", "pit01", "PIT01 ", "", "GDL-1"]
)
def test_bad_keys(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        parse_key(bad)


@given(st.sampled_from(MEMORY_TYPES), st.integers(1, 10**6))
def test_keys_round_trip_and_sort_by_number(memory_type: str, number: int) -> None:
    key = format_key(memory_type, number)
    assert parse_key(key) == (memory_type, number)
    assert key_sort_key(key) < key_sort_key(format_key(memory_type, number + 1))


def test_evergreen_defaults() -> None:
    assert [t for t in MEMORY_TYPES if default_evergreen(t)] == ["principle", "correction"]
    assert default_evergreen("principle", False) is False
    assert default_evergreen("model", True) is True


def _entry(
    key: str, body: str, superseded_by: str | None = None, state: str = "active"
) -> MemoryEntry:
    return MemoryEntry(
        key,
        parse_key(key)[0],
        None,
        body,
        state,
        date(2025, 1, 1),
        None,
        date(2025, 1, 1),
        superseded_by=superseded_by,
    )


def test_identical_text_rule() -> None:
    assert identity_text("  Run the\n tests\t ") == "Run the tests"
    assert identity_hash("a  b") == identity_hash("a b") != identity_hash("A b")
    entries = [
        _entry("GDL01", "Run the tests", superseded_by="GDL02"),
        _entry("GDL03", "run the tests"),
        _entry("PIT04", " Run  the tests ", state="archived"),
        _entry("GDL02", "Run the tests\n"),
    ]
    found = find_identical("Run the tests", entries)
    assert found is not None and found.key == "GDL02"  # lowest key among non-superseded, any state
    assert find_identical("nothing like it", entries) is None


def test_state_weights() -> None:
    assert STATE_WEIGHTS == {"active": 1.0, "dormant": 0.5, "archived": 0.25}
    assert state_weight("dormant", superseded=True) == 0.5 * SUPERSEDED_WEIGHT_FACTOR == 0.05
    assert entry_weight(_entry("GDL01", "x", superseded_by="GDL02", state="archived")) == 0.025
