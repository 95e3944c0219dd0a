"""Normalisation, CJK segmentation, token estimates."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from recallbox import estimate_tokens
from recallbox.text.cjk import bigrams, segment
from recallbox.text.normalize import escape_for_audit, normalize_text


def test_normalise_rules() -> None:
    assert normalize_text("a\x00b\x1fc\td\ne\rf") == "a b c\td\ne f"
    assert normalize_text("x\ud800y\udfffz") == "x\ufffdy\ufffdz"
    assert normalize_text("召回 ✓ é") == "召回 ✓ é"
    assert escape_for_audit("a\x00b\ud800") == "a\\x00b\\ud800"


@given(st.text())
def test_normalised_text_is_utf8_and_stable(text: str) -> None:
    out = normalize_text(text)
    out.encode("utf-8")
    assert normalize_text(out) == out
    assert len(out) == len(text)


def test_segment_cjk_bigrams() -> None:
    assert bigrams("召回机制") == ["召回", "回机", "机制"]
    assert bigrams("压") == ["压"]
    assert segment("召回机制") == "召回 回机 机制"
    assert segment("abc召回x") == "abc 召回 x"
    assert segment("hello world_1 /a/b") == "hello world_1 /a/b"


@given(st.text(alphabet=st.sampled_from(list("召回机制压缩摘要ab _.,\n"))))
def test_segment_idempotent(text: str) -> None:
    assert segment(segment(text)) == segment(text)


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("召回") == 2
    assert estimate_tokens("召回abcd") == 3
