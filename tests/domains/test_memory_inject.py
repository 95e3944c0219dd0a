"""Session-start memory injection (DESIGN §4.3; #10 item 7)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.memory_inject import (
    MIN_INJECTION_TOKENS,
    MemoryInjection,
    assemble_memory_injection,
    manifest_line,
)
from recallbox.domains.memory_model import MEMORY_TYPES, default_evergreen, format_key, parse_key
from recallbox.errors import InvalidArgument
from recallbox.text.tokens import estimate_tokens
from recallbox.types import MemoryEntry


def make(key: str, body: str = "x", **kw: object) -> MemoryEntry:
    memory_type = parse_key(key)[0]
    base = MemoryEntry(
        key,
        memory_type,
        None,
        body,
        "active",
        date(2025, 1, 1),
        None,
        date(2025, 1, 1),
        evergreen=default_evergreen(memory_type),
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_the_whole_active_memory_when_it_fits() -> None:
    entries = [
        make("GDL02", "Run the tests."),
        make("PRI01", "Small steps."),
        make("GDL01", "Read the issue.", title="First"),
        make("PIT01", "asleep", state="dormant"),
        make("PIT02", "old", superseded_by="PIT03"),
    ]
    got = assemble_memory_injection(entries)
    assert got == MemoryInjection(
        "## Principles\n- Small steps.\n\n## Guidelines\n- **First**\n  Read the issue.\n"
        "- Run the tests.",
        ("PRI01", "GDL01", "GDL02"),
    )
    assert "Not loaded" not in got.text
    assert assemble_memory_injection([]) == MemoryInjection("")


def test_over_budget_evergreen_then_relevance_then_ref_count_with_a_manifest() -> None:
    filler = "word " * 60  # ~75 tokens each
    entries = [
        make("GDL01", "a " + filler, ref_count=50),
        make("GDL02", "b " + filler, ref_count=1),
        make("GDL03", "c " + filler, ref_count=9),
        make("PIT01", "d " + filler),
        make("COR01", "e " + filler),  # evergreen by type
    ]
    got = assemble_memory_injection(entries, budget_tokens=300, relevance={"PIT01": 2.5})
    assert got.loaded == ("COR01", "GDL01", "PIT01")
    assert got.left_out == ("GDL02", "GDL03")
    assert got.text.endswith(
        "\n\nNot loaded: 2 more memory entries (2 guideline: GDL02, GDL03). "
        'Fetch them with recall_context(query, source="MEMORY.md").'
    )
    assert estimate_tokens(got.text) <= 300


def test_an_entry_too_big_for_the_budget_is_left_out_not_cut() -> None:
    entries = [make("GDL01", "huge " * 2000), make("GDL02", "small")]
    got = assemble_memory_injection(entries, budget_tokens=MIN_INJECTION_TOKENS)
    assert got.loaded == ("GDL02",) and got.left_out == ("GDL01",)
    assert got.text == (
        "## Guidelines\n- small\n\n"
        "Not loaded: 1 more memory entry (1 guideline: GDL01). "
        'Fetch them with recall_context(query, source="MEMORY.md").'
    )


def test_manifest_names_at_most_ten_keys() -> None:
    left = [make(format_key("model", n)) for n in range(1, 15)] + [make("PRI01")]
    line = manifest_line(left)
    assert line.startswith(
        "Not loaded: 15 more memory entries (1 principle, 14 model: PRI01, MOD01,"
    )
    assert "MOD09 and 5 more)." in line


@pytest.mark.parametrize("bad", [0, 199, -5, 2.5, True])
def test_budget_validation(bad: object) -> None:
    with pytest.raises(InvalidArgument):
        assemble_memory_injection([make("GDL01")], budget_tokens=bad)  # type: ignore[arg-type]


_bodies = st.one_of(
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=400),
    st.sampled_from(["数据" * 300, "word " * 500, "-->", "## x"]),
)


@st.composite
def memories(draw: st.DrawFn) -> list[MemoryEntry]:
    numbers = draw(st.lists(st.integers(1, 9999), max_size=25, unique=True))
    out = []
    for n in numbers:
        memory_type = draw(st.sampled_from(MEMORY_TYPES))
        out.append(
            replace(
                make(format_key(memory_type, n), draw(_bodies)),
                evergreen=draw(st.booleans()),
                ref_count=draw(st.integers(0, 5)),
            )
        )
    return out


@given(memories(), st.integers(MIN_INJECTION_TOKENS, 3_000))
def test_always_within_budget_and_the_manifest_names_every_left_out(
    entries: list[MemoryEntry], budget: int
) -> None:
    got = assemble_memory_injection(entries, budget_tokens=budget)
    assert estimate_tokens(got.text) <= budget
    assert sorted(got.loaded + got.left_out) == sorted(e.key for e in entries)
    assert ("Not loaded:" in got.text) == bool(got.left_out)
    if got.left_out:
        assert got.text.endswith('Fetch them with recall_context(query, source="MEMORY.md").')
    shown = list(got.loaded)  # MEMORY.md order
    assert shown == sorted(
        shown, key=lambda k: (MEMORY_TYPES.index(parse_key(k)[0]), parse_key(k)[1])
    )
