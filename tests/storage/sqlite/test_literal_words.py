"""The word index's streams (``literal_words.py``): every text holding a literal matches its
phrase, whatever the case, the separators, the scripts and the word lengths."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import apsw
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.storage.sqlite.literal_words import (
    ASCII_FOLDS,
    WORD_MAX_CHARS,
    fold,
    word_phrase,
    word_stream,
    word_tokens,
)

ASCII_WORD = re.compile("[a-z0-9]", re.IGNORECASE)


def test_fold_maps_what_case_insensitive_matching_equates_to_one_character() -> None:
    for code in range(0x80, sys.maxunicode + 1):
        char = chr(code)
        folded = fold(char)
        assert len(folded) == 1
        if ASCII_WORD.fullmatch(char):  # equal to an ASCII letter under re.IGNORECASE
            assert re.fullmatch(re.escape(folded), char, re.IGNORECASE), hex(code)
            assert char in ASCII_FOLDS
        else:
            assert folded == "\x80" or char in ASCII_FOLDS
    for char, ascii_char in ASCII_FOLDS.items():
        assert re.fullmatch(re.escape(char), ascii_char, re.IGNORECASE)
    assert fold("Ärger ſecret İSTANBUL ıi") == "\x80rger secret istanbul ii"


def test_tokens_of_a_literal() -> None:
    assert word_tokens("zibo warning votu") == (
        ["bibo\u0120war", "wwarning", "bing\u0120vot", "wvotu"],
        True,
    )
    assert word_tokens("nugoki") == ([], False)  # one word, open on both sides: trigrams
    assert word_tokens(" error ") == (["werror"], False)
    assert word_tokens("req-0001f608") == (["breq\u012d000", "w0001f608"], True)
    assert word_tokens("to be") == ([], False)  # "to" may be the tail of a longer word
    assert word_tokens("a to be c") == (["wto", "bto\u0120be", "wbe"], False)
    long = "x" * (WORD_MAX_CHARS + 5)
    assert word_tokens(f"({long})") == (["w" + "x" * WORD_MAX_CHARS + "\u00b7"], False)
    assert word_phrase("kimi sopai") == '"bimi\u0120sop wsopai" *'
    assert word_phrase("召回") is None


TEXT_CHARS = st.sampled_from(
    [*"abcAB xyz01-_./:\n\t\"'", "é", "召", "回", "\u212a", "K", "\u0130", "\u0131", "\u017f"]
)
TEXT = st.text(TEXT_CHARS, max_size=60) | st.builds(
    lambda a, n, b: a + "q" * n + b,
    st.text(TEXT_CHARS, max_size=8),
    st.integers(20, 40),
    st.text(TEXT_CHARS, max_size=8),
)


def _same_under_ignorecase(char: str, draw: st.DrawFn) -> str:
    options = [char, char.upper(), char.lower()]
    options += [c for c, a in ASCII_FOLDS.items() if a == char.lower()]
    options = [o for o in options if len(o) == 1 and re.fullmatch(re.escape(o), char, re.I)]
    return draw(st.sampled_from(options))


@st.composite
def text_and_literal(draw: st.DrawFn) -> tuple[str, str]:
    text = draw(TEXT.filter(bool))
    start = draw(st.integers(0, len(text) - 1))
    end = draw(st.integers(start + 1, len(text)))
    literal = "".join(_same_under_ignorecase(c, draw) for c in text[start:end])
    return text, literal


@pytest.fixture(scope="module")
def fts() -> apsw.Connection:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(c, tokenize='ascii', detail='full')")
    return conn


@settings(max_examples=600)
@given(text_and_literal())
def test_every_text_holding_a_literal_matches_its_phrase(
    fts: apsw.Connection, pair: tuple[str, str]
) -> None:
    text, literal = pair
    assert re.search(re.escape(literal), text, re.IGNORECASE)
    phrase = word_phrase(literal)
    if phrase is None:
        return
    fts.execute("DELETE FROM t")
    fts.execute("INSERT INTO t (rowid, c) VALUES (1, ?)", (word_stream(text),))
    assert fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (phrase,)).fetchall() == [(1,)]


@pytest.mark.parametrize("erase", ["purge", "redact"])
def test_an_erased_word_leaves_no_byte_in_the_word_index(tmp_path: Path, erase: str) -> None:
    db = tmp_path / "w.db"
    secret = "zqxhuntertwozq"  # one lowercase word: the word index would keep it whole
    with recallbox.open(db) as box:
        kept = box.append("ops", "user", "the bystander line stays").id
        gone = box.append("ops", "user", f"the password is {secret} today").id
        box.store.indexer.drain()
        assert secret.encode() in db.read_bytes() + Path(f"{db}-wal").read_bytes()
        if erase == "purge":
            box.purge(gone)
        else:
            box.redact(gone, secret)
        box.store.indexer.drain()
        box.store.secure_delete()
        assert box.read_message(kept)
    files = [p for p in db.parent.iterdir() if p.name.startswith(db.name)]
    assert not any(secret.encode() in p.read_bytes() for p in files)
