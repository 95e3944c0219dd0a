"""Extraction never raises on arbitrary bytes; what it returns is well-formed."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recallbox.code.extract import extract_file
from recallbox.code.languages import LANGUAGE_NAMES
from recallbox.code.types import EDGE_KINDS, FileIndex

# Source-like fragments make deeper, more interesting trees than uniform random bytes.
FRAGMENTS = st.sampled_from([
    b"def ", b"class ", b"fn ", b"func ", b"impl ", b"function ", b"interface ", b"import ",
    b"from ", b"use ", b"(", b")", b"{", b"}", b"[", b"]", b":", b";", b".", b"::", b"=>", b"@",
    b"self.", b"this.", b"\n", b"    ", b"\"", b"'", b"/*", b"*/", b"#", b"//", b"x", b"Foo",
    b"\x00", b"\xff\xfe", "é中".encode(), b"\\",
])
SOURCES = st.one_of(st.binary(max_size=400), st.lists(FRAGMENTS, max_size=80).map(b"".join))


def check(index: FileIndex, source: bytes) -> None:
    ids = [symbol.id for symbol in index.symbols]
    assert len(ids) == len(set(ids))
    lines = source.count(b"\n") + 1
    for symbol in index.symbols:
        assert 1 <= symbol.start_line <= symbol.end_line <= lines
        assert symbol.id.startswith("f")
    for edge in index.edges:
        assert edge.kind in EDGE_KINDS
        assert edge.source_id in ids
        assert edge.target_name
    assert index.error is None or isinstance(index.error, str)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=SOURCES, language=st.sampled_from(LANGUAGE_NAMES))
def test_extraction_never_raises_on_arbitrary_bytes(source: bytes, language: str) -> None:
    check(extract_file("f.src", source, language), source)


def test_a_syntax_error_is_reported_and_the_rest_extracted() -> None:
    source = b"def good():\n    return 1\n\ndef broken(:\n    pass\n"
    index = extract_file("m.py", source, "python")
    assert index.error is not None and index.error.startswith("syntax error at line 4")
    assert "m.py::good" in [symbol.id for symbol in index.symbols]


def test_deeply_nested_input_does_not_hit_the_recursion_limit() -> None:
    source = b"x = " + b"(" * 5_000 + b"1" + b")" * 5_000 + b"\n"
    index = extract_file("deep.py", source, "python")
    assert [symbol.id for symbol in index.symbols] == ["deep.py"]
