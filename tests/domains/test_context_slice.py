"""recall_context's slice (DESIGN §4.4; #10 item 6): scoped, bounded, verbatim, on-disk order."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from recallbox.domains.context_slice import (
    ENTRY_TRUNCATED_MARKER,
    RECALL_CONTEXT_MAX_TOKENS,
    ContextEntry,
    ContextSection,
    cut_to_tokens,
    index_tokens,
    knowledge_section,
    memory_sections,
    slice_context,
)
from recallbox.domains.memory_model import parse_key
from recallbox.text.fts_query import build_fts_query
from recallbox.text.markdown import split_markdown
from recallbox.text.tokens import estimate_tokens
from recallbox.types import MemoryEntry


def terms(query: str) -> tuple[str, ...]:
    return build_fts_query(query).terms


def sections_of(doc: str, scores: dict[str | None, float] | None = None) -> list[ContextSection]:
    return [
        knowledge_section(
            f"sec{n}",
            s.content,
            start_line=s.start_line,
            heading_line=s.heading_line,
            score=(scores or {}).get(s.heading, 1.0),
        )
        for n, s in enumerate(split_markdown(doc))
    ]


def test_index_tokens() -> None:
    assert index_tokens("Déjà-vu search_memory v2.1 数据库") == [
        "deja",
        "vu",
        "search",
        "memory",
        "v2",
        "1",
        "数据",
        "据库",
    ]


def test_the_bottom_matching_entry_of_a_120_entry_section_surfaces() -> None:
    bullets = [
        f"- routine note number {n} about nothing in particular, kept for the record only"
        for n in range(119)
    ]
    doc = "## Notes\n" + "\n".join([*bullets, "- the flux capacitor needs 1.21 gigawatts"]) + "\n"
    assert estimate_tokens(doc) > RECALL_CONTEXT_MAX_TOKENS
    got = slice_context(terms("how many gigawatts"), sections_of(doc))
    assert got.content == "## Notes\n\n- the flux capacitor needs 1.21 gigawatts"
    assert (got.sections, got.entries, got.truncated) == (("sec0",), ("sec0:121",), False)


def test_zero_overlap_gives_empty_content() -> None:
    doc = "## Deploy\n- build the image\n- push it\n"
    assert slice_context(terms("kubernetes helm"), sections_of(doc)).content == ""
    assert slice_context((), sections_of(doc)).content == ""


def test_a_scoped_slice_in_on_disk_order_not_the_whole_file() -> None:
    doc = (
        "# Runbook\n\n## Deploy\n- build the image\n- tag the image with the release\n"
        "- push it\n\nDeploys happen on Tuesdays.\n\n## Rollback\nRevert the release tag.\n"
        "## Unrelated\nLunch is at noon.\n"
    )
    got = slice_context(
        terms("release image"), sections_of(doc, {"Deploy": 3.0, "Rollback": 2.0, "Unrelated": 0.1})
    )
    assert got.content == (
        "## Deploy\n\n- build the image\n- tag the image with the release\n\n"
        "## Rollback\n\nRevert the release tag."
    )
    assert got.sections == ("sec0", "sec1")


def test_heading_words_count_for_the_entries_under_it() -> None:
    doc = "## Rollback\nRevert the tag.\n\nThen tell the channel.\n## Other\nrollback is rare\n"
    got = slice_context(terms("rollback"), sections_of(doc))
    assert got.content == (
        "## Rollback\n\nRevert the tag.\n\nThen tell the channel.\n\n## Other\n\nrollback is rare"
    )


def test_at_most_three_sections_best_first() -> None:
    doc = "".join(f"## Part {n}\nwidget detail {n}\n" for n in range(6))
    scores = {f"Part {n}": float(n) for n in range(6)}
    got = slice_context(terms("widget"), sections_of(doc, scores))
    assert got.sections == ("sec3", "sec4", "sec5")


def test_sections_without_overlap_do_not_use_a_place() -> None:
    # the keyword index may pick a section through a stem the slice does not see
    doc = "## A\nwidgets galore\n## B\nwidget here\n## C\nwidget there\n## D\nwidget too\n"
    got = slice_context(terms("widget"), sections_of(doc, {"A": 9.0}))
    assert got.sections == ("sec1", "sec2", "sec3")


def test_the_best_entry_is_cut_only_when_it_alone_is_over_budget() -> None:
    long_entry = "gigawatt " + "word " * 3000
    doc = "## Power\n" + long_entry + "\n\n- an unrelated bullet\n"
    got = slice_context(terms("gigawatt"), sections_of(doc), max_tokens=200)
    assert got.truncated and got.content.endswith("\n" + ENTRY_TRUNCATED_MARKER)
    assert estimate_tokens(got.content) <= 200
    assert got.content.startswith("## Power\n\ngigawatt word word")
    fits = slice_context(terms("gigawatt"), sections_of(doc), max_tokens=4000)
    assert not fits.truncated and ENTRY_TRUNCATED_MARKER not in fits.content


def test_a_best_entry_that_fits_only_without_its_label_is_not_cut() -> None:
    section = ContextSection(
        "s", "## " + "L" * 400, (ContextEntry("s:2", "x" * 396 + " hit", 2),), 1.0, 1
    )
    got = slice_context(terms("hit"), [section], max_tokens=100)
    assert (got.content, got.truncated) == ("x" * 396 + " hit", False)


def _memory(key: str, body: str, state: str = "active") -> MemoryEntry:
    return MemoryEntry(key, parse_key(key)[0], None, body, state, date(2025, 1, 1), None, None)


def test_memory_slices_follow_memory_md_order_and_state_weights() -> None:
    candidates = [
        (_memory("PIT02", "cache keys collide after a flush"), 2.0),
        (_memory("GDL10", "warm the cache before a release"), 1.0),
        (_memory("GDL02", "cache misses are logged", state="archived"), 3.0),
        (_memory("PRI01", "the cache is a hint"), 0.5),
        (_memory("MOD01", "a release is a tag"), 0.1),
    ]
    sections = memory_sections(candidates)
    assert [(s.id, s.label, [e.id for e in s.entries]) for s in sections] == [
        ("principle", "## Principles", ["PRI01"]),
        ("guideline", "## Guidelines", ["GDL02", "GDL10"]),
        ("pitfall", "## Pitfalls", ["PIT02"]),
        ("model", "## Models", ["MOD01"]),
    ]
    assert [s.score for s in sections] == [0.5, 1.0, 2.0, 0.1]  # archived: 3.0 × 0.25
    got = slice_context(terms("cache"), sections)
    assert got.sections == ("principle", "guideline", "pitfall")  # the three best sections
    assert got.content == (
        "## Principles\n\n- the cache is a hint\n\n"
        "## Guidelines\n\n- cache misses are logged\n- warm the cache before a release\n\n"
        "## Pitfalls\n\n- cache keys collide after a flush"
    )
    # Under a tight budget the archived entry (weight 0.25) is the first one left out.
    tight = slice_context(terms("cache"), sections, max_tokens=40)
    assert "GDL02" not in tight.entries and len(tight.entries) == 3


def test_cut_to_tokens() -> None:
    assert cut_to_tokens("abcdefghij", 2) == "abcdefgh"
    assert cut_to_tokens("数据库abc", 2) == "数据"
    assert cut_to_tokens("abc", 0) == ""


_words = st.sampled_from(["alpha", "beta", "gamma", "数据", "- item", "## h", "```", "", "x" * 50])
_text = st.one_of(
    st.lists(_words, max_size=40).map(" ".join),
    st.text(st.characters(codec="utf-8"), max_size=300),
    st.just("alpha " * 3000),
    st.just("数据" * 3000),
)


@st.composite
def candidate_sections(draw: st.DrawFn) -> list[ContextSection]:
    out = []
    for n in range(draw(st.integers(0, 5))):
        entries = tuple(
            ContextEntry(
                f"s{n}:{m}",
                draw(_text),
                m,
                draw(st.sampled_from([1.0, 0.5, 0.025])),
                draw(st.booleans()),
            )
            for m in range(draw(st.integers(0, 6)))
        )
        label = draw(st.one_of(st.none(), _text.map(lambda t: "## " + t)))
        out.append(ContextSection(f"s{n}", label, entries, draw(st.floats(0, 10)), n, label or ""))
    return out


@given(candidate_sections(), st.lists(_words | st.text(max_size=8), max_size=4))
def test_any_slice_stays_within_the_budget(
    sections: list[ContextSection], words: list[str]
) -> None:
    got = slice_context(terms(" ".join(words)), sections)
    assert estimate_tokens(got.content) <= RECALL_CONTEXT_MAX_TOKENS
    if got.content.isascii():
        assert len(got.content) <= 4 * RECALL_CONTEXT_MAX_TOKENS
    assert len(got.sections) <= 3
    by_id = {e.id: e for s in sections for e in s.entries}
    for entry_id in got.entries:
        if not got.truncated:
            assert by_id[entry_id].text in got.content  # verbatim


@given(st.text(st.characters(codec="ascii"), max_size=20_000), st.text(max_size=20))
def test_ascii_documents_stay_within_8000_characters(doc: str, query: str) -> None:
    got = slice_context(terms(query + " a e"), sections_of(doc))
    assert len(got.content) <= 8_000


@given(st.integers(0, 119), st.booleans())
def test_the_matching_entry_surfaces_wherever_it_is(position: int, memory: bool) -> None:
    filler = "routine note about nothing in particular, kept for the record only"
    texts = [f"{filler} {n}" for n in range(120)]
    texts[position] = "the flux capacitor needs 1.21 gigawatts"
    if memory:
        entries = [_memory(f"GDL{n + 1:02d}", text) for n, text in enumerate(texts)]
        sections = memory_sections([(e, 1.0) for e in entries])
        expected = "## Guidelines\n\n- the flux capacitor needs 1.21 gigawatts"
    else:
        doc = "## Notes\n" + "".join(f"- {text}\n" for text in texts)
        sections = sections_of(doc)
        expected = "## Notes\n\n- the flux capacitor needs 1.21 gigawatts"
    assert slice_context(terms("gigawatts capacitor"), sections).content == expected
