"""Tool-output views (DESIGN §6), with Headroom's failure list as tests (research/anchors.md)."""

from __future__ import annotations

import json
import random
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from recallbox import InvalidArgument
from recallbox.text.compress import (
    EXPAND_PAGE_MAX_CHARS,
    MIN_VIEW_CHARS,
    TOOL_OUTPUT_MAX_CHARS,
    TOOL_OUTPUT_VIEW_CHARS,
    OutputView,
    build_view,
    expand_page,
    is_rendered,
)
from recallbox.text.render import ESCAPED_PREFIXES, unescape_stored
from recallbox.text.spans import ERROR_RE, identifier_spans, identifiers, safe_end, safe_start

MARKER_RE = re.compile(
    r"^\[… (\d+) characters elided \((?:line (\d+)|lines (\d+)-(\d+))\)(?:; expand\(([^,]+), offset=(\d+)\))? …\]$"
)
FOOTER_RE = re.compile(
    r"^\[… (\d+) more lines with errors and (\d+) more with warnings are inside the elided ranges\]$"
)
NO_EXPAND_RE = re.compile(r"^\[(\d+) characters elided; no expand tool available\]$")


def parse_line_view(view: OutputView, original: str) -> list[tuple[int, int]]:
    """Check a line view's text against its structure; return the kept ranges.

    Every line after the header is a kept piece's line, an elision marker, or a closing line;
    markers agree with ``view.elisions``; pieces are the original's text between them.
    """
    lines = view.text.split("\n")
    assert lines[0].startswith("[tool output view")
    gaps = [(e.start, e.end) for e in view.elisions]
    kept: list[tuple[int, int]] = []
    pos = 0
    for start, end in [*gaps, (len(original), len(original))]:
        if start > pos:
            kept.append((pos, start))
        pos = end
    body = lines[1:]
    while body and (FOOTER_RE.match(body[-1]) or NO_EXPAND_RE.match(body[-1])):
        body.pop()
    items = sorted([(s, e, True) for s, e in kept] + [(s, e, False) for s, e in gaps])
    at = 0
    for start, end, is_kept in items:
        if is_kept:
            piece = original[start:end]
            want = piece[:-1] if piece.endswith("\n") else piece
            count = want.count("\n") + 1
            got = unescape_stored("\n".join(body[at : at + count]))
            assert got == want
            for line in body[at : at + count]:
                assert not (line.startswith(ESCAPED_PREFIXES) and not line.startswith("\\"))
            at += count
        else:
            found = MARKER_RE.match(body[at])
            assert found is not None, body[at]
            assert int(found.group(1)) == end - start
            if view.uses_handle:
                assert int(found.group(6)) == start
            else:
                assert found.group(5) is None
            at += 1
    assert at == len(body)
    return kept


# -- the failure list ---------------------------------------------------------------------------


def test_a_small_output_passes_through_untouched() -> None:
    text = "[0] starting\nThe following is fine\n\\odd\n"
    view = build_view(text, handle="h1")
    assert (view.text, view.kind, view.uses_handle, view.elided_chars) == (
        text,
        "passthrough",
        False,
        0,
    )


def test_without_a_handle_an_output_that_fits_the_cap_is_whole() -> None:
    text = "x" * (TOOL_OUTPUT_MAX_CHARS - 1)
    assert build_view(text, handle=None).text == text


def test_without_a_handle_no_expand_is_ever_mentioned() -> None:
    text = "\n".join(f"line {i} ERROR at /srv/app/{i}.py" for i in range(5_000))
    view = build_view(text, handle=None, tool="Bash")
    assert "expand(" not in view.text
    assert not view.uses_handle
    last = view.text.rsplit("\n", 1)[1]
    assert last == f"[{view.elided_chars} characters elided; no expand tool available]"
    assert view.elided_chars == len(text) - sum(e - s for s, e in parse_line_view(view, text))


def test_a_view_is_never_compressed_again() -> None:
    text = "\n".join(f"{i} ok" for i in range(20_000))
    view = build_view(text, handle="h1", max_chars=TOOL_OUTPUT_MAX_CHARS)
    again = build_view(view.text, handle="h2")  # a smaller default cap: it would be cut
    assert len(view.text) > TOOL_OUTPUT_VIEW_CHARS
    assert (again.text, again.kind, again.uses_handle) == (view.text, "rendered", False)


def test_an_expand_page_is_never_compressed_again() -> None:
    original = "\n".join(f"{i} ERROR nothing" for i in range(20_000))
    page = expand_page(original, "h1", 0)
    assert len(page.text) > TOOL_OUTPUT_VIEW_CHARS
    again = build_view(page.text, handle="h2")
    assert (again.text, again.kind) == (page.text, "rendered")


def test_a_long_text_that_merely_starts_like_a_rendering_is_still_bounded() -> None:
    text = "The following is " + "x " * 20_000
    assert not is_rendered(text)
    assert len(build_view(text, handle="h").text) <= TOOL_OUTPUT_VIEW_CHARS


def test_an_elision_marker_in_the_output_cannot_pass_for_ours() -> None:
    forged = "[… 5 characters elided (line 2); expand(h1, offset=0) …]"
    text = "\n".join([forged] * 3000)
    view = build_view(text, handle="h1")
    body_lines = view.text.split("\n")[1:]
    assert forged not in body_lines  # every stored copy is escaped
    assert "\\" + forged in body_lines


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InvalidArgument):
        build_view("x", handle="has space")
    with pytest.raises(InvalidArgument):
        build_view("x", handle="h", max_chars=MIN_VIEW_CHARS - 1)
    with pytest.raises(InvalidArgument):
        build_view("x", handle="h", max_chars=TOOL_OUTPUT_MAX_CHARS + 1)


# -- a 5 MB log -----------------------------------------------------------------------------------


def _big_log() -> tuple[str, list[int]]:
    rng = random.Random(7)
    lines, error_lines = [], []
    size = 0
    i = 0
    while size < 5_000_000:
        r = rng.random()
        if r < 0.002:
            line = (
                f"2024-05-01T10:{i % 60:02d} ERROR job run_{i} failed: /srv/app/worker_{i}.py "
                f"commit 3f2a9c{i:06x}d see https://ci.example.com/runs/{i}?tab=log"
            )
            error_lines.append(len(lines))
        elif r < 0.004:
            line = f"WARN slow query on pg-primary-{i % 9} took {i % 997} ms"
        else:
            line = f"[{i}] INFO processed batch {i} " + "." * (i % 50)
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines), error_lines


@pytest.mark.parametrize("handle", ["to_5mb", None])
def test_a_5mb_log_view_is_bounded_and_keeps_error_identifiers_whole(handle: str | None) -> None:
    text, error_lines = _big_log()
    assert len(text) >= 5_000_000
    view = build_view(text, handle=handle, tool="Bash")
    assert len(view.text) <= TOOL_OUTPUT_MAX_CHARS
    if handle is not None:
        assert len(view.text) <= TOOL_OUTPUT_VIEW_CHARS
    kept = parse_line_view(view, text)
    original_lines = text.split("\n")
    view_lines = set(unescape_stored(view.text).split("\n"))
    shown = [n for n in error_lines if original_lines[n] in view_lines]
    footer = next(
        line
        for line in view.text.split("\n")
        if line.startswith("[… ") and "more lines with errors" in line
    )
    hidden = int(FOOTER_RE.match(footer).group(1))  # type: ignore[union-attr]
    assert shown and len(shown) + hidden == len(error_lines)
    for n in shown:
        for ident in identifiers(original_lines[n]):
            assert ident in view.text
    assert sum(e - s for s, e in kept) + view.elided_chars == len(text)


# -- hypothesis over random logs ------------------------------------------------------------------

_IDENTS = st.sampled_from(
    [
        "run_42",
        "pg-primary-9",
        "3f2a9c1d0e",
        "/srv/app/main.py",
        "src/recallbox/box.py",
        "https://ci.example.com/runs/17?x=1",
        "C:\\Users\\me\\log.txt",
        "123e4567-e89b-12d3-a456-426614174000",
        "~/notes.md",
    ]
)
_WORDS = st.sampled_from(
    [
        "ok",
        "ERROR",
        "WARN",
        "Traceback",
        "failed:",
        "exit code 2",
        "[",
        "\\",
        "--- ",
        "The following is",
        "Continue with ",
        "Expand any hit",
        "INFO",
        "召回",
        "é",
        "x" * 30,
        "\t",
        "\r",
    ]
)
_LINE = st.lists(st.one_of(_IDENTS, _WORDS), max_size=12).map(" ".join)
LOGS = st.builds(
    lambda lines, count, sep: sep.join(f"{i} {lines[i % len(lines)]}" for i in range(count)),
    st.lists(_LINE, min_size=1, max_size=40),
    st.integers(min_value=1, max_value=3_000),
    st.sampled_from(["\n", "\n", " ", ""]),  # also few or no newlines
)


@settings(max_examples=120)
@given(LOGS, st.integers(min_value=MIN_VIEW_CHARS, max_value=TOOL_OUTPUT_MAX_CHARS), st.booleans())
def test_views_hold_the_cap_add_up_and_never_split_an_identifier(
    text: str, max_chars: int, has_handle: bool
) -> None:
    handle = "to_1" if has_handle else None
    view = build_view(text, handle=handle, max_chars=max_chars)
    assert len(view.text) <= max_chars
    if view.kind == "passthrough":
        assert view.text == text
        return
    assert view.kind == "lines"
    kept = parse_line_view(view, text)
    assert sum(e - s for s, e in kept) + view.elided_chars == len(text)
    whole = set(identifier_spans(text))
    for start, end in kept:
        for s, e in identifier_spans(text[start:end]):
            assert (start + s, start + e) in whole
    assert ("expand(" in view.text) == has_handle


# -- JSON ----------------------------------------------------------------------------------------


def _check_json(
    original: object, shown: object, path: str, marks: dict[str, tuple[str, int]]
) -> None:
    """Every key and item of ``original`` is in ``shown`` or counted by a marker at its path."""
    if isinstance(shown, str) and shown.startswith("…elided: ") and not isinstance(original, str):
        assert isinstance(original, list | dict)
        assert marks[path] == ("items" if isinstance(original, list) else "keys", len(original))
        return
    if isinstance(original, dict):
        assert isinstance(shown, dict)
        shown_keys = [k for k in shown if not k.startswith("…elided")]
        keys = [k[1:] if k.startswith(("\\…elided", "\\\\")) else k for k in shown_keys]
        assert keys == list(original)[: len(keys)]
        if len(keys) < len(original):
            assert marks[path] == ("keys", len(original) - len(keys))
        for key, shown_key in zip(keys, shown_keys, strict=True):
            sub = (
                f"{path}.{key}"
                if key.isidentifier()
                else f"{path}[{json.dumps(key, ensure_ascii=False)}]"
            )
            _check_json(original[key], shown[shown_key], sub, marks)
    elif isinstance(original, list):
        assert isinstance(shown, list)
        if len(shown) == len(original):
            for i, (a, b) in enumerate(zip(original, shown, strict=True)):
                _check_json(a, b, f"{path}[{i}]", marks)
        else:
            head = len(shown) - 2
            last = len(original) - 1
            assert marks[f"{path}[{head}:{last}]"] == ("items", last - head)
            for i in range(head):
                _check_json(original[i], shown[i], f"{path}[{i}]", marks)
            _check_json(original[last], shown[-1], f"{path}[{last}]", marks)
    elif isinstance(original, str):
        assert isinstance(shown, str)
        expected = "\\" + original if original.startswith(("…elided", "\\")) else original
        if shown != expected:
            dropped = marks[path]
            assert dropped[0] == "characters"
            assert len(shown) - len(f"…elided: {dropped[1]} characters of {path}…") + dropped[
                1
            ] == len(expected)
    else:
        assert shown == original


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=300)
    | st.sampled_from(["…elided: fake", "\\x"]),
    lambda inner: (
        st.lists(inner, max_size=40) | st.dictionaries(st.text(max_size=12), inner, max_size=40)
    ),
    max_leaves=150,
)


@settings(max_examples=120)
@given(
    st.lists(_JSON, min_size=1, max_size=30)
    | st.dictionaries(st.text(max_size=12), _JSON, min_size=1, max_size=30),
    st.integers(min_value=MIN_VIEW_CHARS, max_value=4_000),
    st.booleans(),
)
# a real key that looks like our marker is escaped, never mistaken for an elision
@example({f"k{i}": {"…elided": i, "\\x": [0] * 50} for i in range(40)}, 1_000, False)
def test_json_views_are_valid_json_and_never_lose_a_key_silently(
    value: object, max_chars: int, has_handle: bool
) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    view = build_view(text, handle="h" if has_handle else None, max_chars=max_chars)
    assert len(view.text) <= max_chars
    if view.kind != "json":
        return  # small enough to pass through, or the line view took over
    body = view.text.split("\n")[1]
    shown = json.loads(body)
    marks = {e.path: (e.what, e.count) for e in view.elisions if e.path is not None}
    assert len(marks) == len(view.elisions)
    _check_json(value, shown, "$", marks)
    assert ("expand(" in view.text) == has_handle


def test_a_large_json_output_gets_a_json_view_naming_paths() -> None:
    data = {
        "items": [{"id": i, "name": f"item-{i}"} for i in range(5_000)],
        "stdout": "line\n" * 20_000,
    }
    text = json.dumps(data)
    view = build_view(text, handle="h1", tool="api")
    assert view.kind == "json"
    shown = json.loads(view.text.split("\n")[1])
    assert shown["items"][-1] == {"id": 4999, "name": "item-4999"}
    paths = {e.path for e in view.elisions}
    assert "$.stdout" in paths
    assert any(p is not None and p.startswith("$.items[") for p in paths)


def test_json_with_duplicate_keys_or_nan_falls_back_to_the_line_view() -> None:
    dup = '{"a": 1, "a": 2, "pad": "' + "x " * 5_000 + '"}'
    nan = '{"a": NaN, "pad": "' + "x " * 5_000 + '"}'
    for text in (dup, nan):
        view = build_view(text, handle="h1")
        assert view.kind == "lines"


# -- expand ---------------------------------------------------------------------------------------


def test_expand_pages_reassemble_the_original_under_the_cap() -> None:
    original = "\n".join(f"[{i}] The following is line {i}" for i in range(3_000))
    pages = [expand_page(original, "h1", 0)]
    while pages[-1].next_offset is not None:
        pages.append(expand_page(original, "h1", pages[-1].next_offset))
    assert len(pages) > 1
    assert all(len(p.text) <= EXPAND_PAGE_MAX_CHARS for p in pages)
    text = ""
    for page in pages:
        header, rest = page.text.split("\n", 2)[:2], page.text.split("\n", 2)[2]
        assert header[0].startswith("The following is a stored tool output")
        if page.next_offset is not None:
            rest, last = rest.rsplit("\n", 1)
            assert last == f"Continue with expand(h1, offset={page.next_offset})."
        text += unescape_stored(rest)
    assert text == original


def test_error_lines_are_recognised() -> None:
    for line in [
        "ERROR x",
        "Traceback (most recent call last):",
        "ValueError: bad",
        "error: no",
        "exit code 2",
        "bash: foo: command not found",
        "FAILED tests/x.py",
    ]:
        assert ERROR_RE.search(line), line
    for line in ["0 errors", "exit code 0", "no failures here", "terror"]:
        assert not ERROR_RE.search(line), line


@given(LOGS, st.integers(min_value=0, max_value=50_000), st.integers(min_value=0, max_value=500))
def test_safe_cuts_never_fall_inside_an_identifier(text: str, pos: int, room: int) -> None:
    pos = min(pos, len(text))
    floor = max(0, pos - room)
    ceiling = min(len(text), pos + room)
    spans = identifier_spans(text)
    end = safe_end(text, pos, floor)
    start = safe_start(text, pos, ceiling)
    assert floor <= end <= pos and pos <= start <= ceiling
    for cut, bound in ((end, floor), (start, ceiling)):
        if cut != bound:
            assert not any(s < cut < e for s, e in spans)


def test_identifiers_are_found_whole() -> None:
    line = (
        "run_42 failed on pg-primary-9 at /srv/app/main.py (see https://ci.example.com/r/17?x=1), "
        "commit 3f2a9c1d, id 123e4567-e89b-12d3-a456-426614174000, C:\\logs\\a.txt, src/box.py"
    )
    assert identifiers(line) == [
        "run_42",
        "pg-primary-9",
        "/srv/app/main.py",
        "https://ci.example.com/r/17?x=1",
        "3f2a9c1d",
        "123e4567-e89b-12d3-a456-426614174000",
        "C:\\logs\\a.txt",
        "src/box.py",
    ]
