"""The Python FTS5 tokenizer against SQLite's own, token for token (DESIGN §4.1, issue #16).

SQLite is reached through apsw: its FTS5 tokenizer API calls the built-in tokenizers directly,
and ``fts5vocab`` shows the terms and positions the index holds. Compared: every Unicode scalar
value (as a token start and inside a token), the words of the installed packages' sources and
docs, generated mixed-script and CJK-segmented text, and the index's own view of a corpus.
"""

from __future__ import annotations

import sysconfig
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from fts5_tables import (
    derive,
    reference_tokenizer,
    reference_tokens,
    render,
    scalar_values,
)
from hypothesis import given
from hypothesis import strategies as st

from recallbox.text import fts_tokenize_data
from recallbox.text.cjk import segment
from recallbox.text.fts_tokenize import (
    BOUNDED_TERM_MARK,
    FTS5_MAX_TOKEN_BYTES,
    FTS5_TOKENIZE,
    PORTER_MAX_TOKEN_BYTES,
    bounded_term,
    fts_tokens,
    index_term,
    porter_stem,
    token_bytes,
    unicode61_tokens,
)

DATA_MODULE = Path(fts_tokenize_data.__file__)
#: Distinct words taken from the installed packages (sources and docs, in path order).
WORD_LIST_SIZE = 300_000
WORD_FILE_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt")
PG_LEXEME_MAX_BYTES = 2047


@pytest.fixture(scope="module")
def conn() -> Iterator[apsw.Connection]:
    connection = apsw.Connection(":memory:")
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def porter(conn: apsw.Connection) -> apsw.FTS5Tokenizer:
    return reference_tokenizer(conn, *FTS5_TOKENIZE.split())


@pytest.fixture(scope="module")
def unicode61(conn: apsw.Connection) -> apsw.FTS5Tokenizer:
    return reference_tokenizer(conn, *FTS5_TOKENIZE.split()[1:])


def as_apsw_text(tokens: list[str]) -> list[str]:
    """Our tokens as apsw shows FTS5's: bytes decoded with replacement characters."""
    return [token_bytes(t).decode("utf-8", "replace") for t in tokens]


def first_difference(words: list[str], tok: apsw.FTS5Tokenizer) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    for word in words:
        ref = reference_tokens(tok, word)
        mine = as_apsw_text(fts_tokens(word))
        if ref != mine:
            out.append((word, (ref, mine)))
            if len(out) >= 10:
                break
    return out


# -- tables and every code point ------------------------------------------------------------


def test_committed_tables_equal_tables_derived_from_this_sqlite(conn: apsw.Connection) -> None:
    tables = derive(conn)
    assert render(tables) == DATA_MODULE.read_text(encoding="utf-8")
    assert tables.sqlite_version == apsw.sqlite_lib_version()


def test_every_code_point_starts_and_continues_tokens_like_fts5(
    unicode61: apsw.FTS5Tokenizer,
) -> None:
    # Each code point alone, and between two token characters, separated by spaces (porter's
    # byte rules are held to SQLite by the word, generated-text and index tests below).
    text = " ".join(f"{chr(c)} a{chr(c)}a" for c in scalar_values())
    assert unicode61_tokens(text) == reference_tokens(unicode61, text)


# -- real words ------------------------------------------------------------------------------


def installed_words(limit: int) -> list[str]:
    """Up to ``limit`` distinct whitespace-separated words of the installed packages' files."""
    root = Path(sysconfig.get_paths()["purelib"])
    words: dict[str, None] = {}
    for path in sorted(root.rglob("*")):
        if path.suffix not in WORD_FILE_SUFFIXES or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        words.update(dict.fromkeys(text.split()))
        if len(words) >= limit:
            break
    return list(words)[:limit]


def test_words_of_the_installed_packages_stem_like_fts5(porter: apsw.FTS5Tokenizer) -> None:
    words = installed_words(WORD_LIST_SIZE)
    assert len(words) == WORD_LIST_SIZE
    text = "\n".join(words)
    ref = reference_tokens(porter, text)
    mine = as_apsw_text(fts_tokens(text))
    assert len(ref) > WORD_LIST_SIZE
    assert mine == ref, first_difference(words, porter)


# -- generated text --------------------------------------------------------------------------

# Characters where tokenizers tend to differ: case pairs, diacritics, combining marks, CJK,
# kana, Hangul, digits of other scripts, emoji old and new, private use, separators.
INTERESTING = (
    "aAzZ09_-./'ÀÉÎÕÜßẞÆæŒœØøĲĳǅǈΣσςΐİıŉſǰ"
    "\u0300\u0301\u0308\u0327\u0338\u0345\u036f\u20dd"
    "召回率搜索记忆的中文かなカナ한국어٣৩๓ｶﾞＡ"
    "\U0001f680\U0001f97a\U0001d400\U00010400\U0002a6d6\U000e0001\ue000\U00100000"
    "\u00a0\u2028\u200b\u200d\ufeff\ufffd\uffff\u00ad"
)
words = st.text(alphabet=st.sampled_from(INTERESTING), min_size=1, max_size=8)
english = st.sampled_from(
    ["running", "caresses", "ponies", "agreed", "hopping", "generalization", "feed", "sky",
     "conditional", "relational", "happiness", "electricity", "adjustment", "Ärger", "naïve",
     "search_memory", "pg-replica-1", "v1.2.3", "über", "résumé", "aed", "a丸ed", "y", "yes"]
)  # fmt: skip
mixed = st.lists(st.one_of(words, english, st.text(max_size=6)), max_size=12).map(" ".join)


@given(mixed)
def test_generated_mixed_script_text_tokenizes_like_fts5(text: str) -> None:
    with apsw.Connection(":memory:") as connection:
        tok = reference_tokenizer(connection, *FTS5_TOKENIZE.split())
        for variant in (text, segment(text)):
            clean = variant.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates
            assert as_apsw_text(fts_tokens(clean)) == reference_tokens(tok, clean)


@given(st.text())
def test_any_text_never_raises_and_surrogates_separate(text: str) -> None:
    tokens = fts_tokens(text)
    assert all(tokens)
    clean = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)
    assert unicode61_tokens(text) == unicode61_tokens(clean)


# -- the index's own view: terms, documents, positions --------------------------------------


def test_fts5vocab_holds_exactly_our_terms_at_our_positions(
    conn: apsw.Connection, porter: apsw.FTS5Tokenizer
) -> None:
    docs = [
        "Deploy the billing service; the deploys failed twice.",
        segment("召回率 recall 回率 the 记忆"),
        "a丸ed " * 3 + "naïve Naive NAÏVE",  # a stem that cuts a character: invalid UTF-8
        "x" * (FTS5_MAX_TOKEN_BYTES + 10) + " " + "x" * (FTS5_MAX_TOKEN_BYTES + 20),
        "é" * 40 + " " + "ab" * 40,  # longer than porter's limit: unstemmed
        " ".join(installed_words(2_000)),
    ]
    conn.execute(f"CREATE VIRTUAL TABLE corpus USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
    conn.execute("CREATE VIRTUAL TABLE corpus_i USING fts5vocab(corpus, 'instance')")
    conn.executemany("INSERT INTO corpus (rowid, body) VALUES (?, ?)", list(enumerate(docs)))
    found: dict[int, list[tuple[int, bytes]]] = {}
    for term, doc, offset in conn.execute('SELECT CAST(term AS BLOB), doc, "offset" FROM corpus_i'):
        found.setdefault(int(doc), []).append((int(offset), bytes(term)))
    for rowid, doc in enumerate(docs):
        expected = [(i, index_term(t)) for i, t in enumerate(fts_tokens(doc))]
        assert sorted(found.get(rowid, [])) == expected
    conn.execute("DROP TABLE corpus_i")
    conn.execute("DROP TABLE corpus")


# -- porter and term helpers -----------------------------------------------------------------


def test_porter_leaves_short_and_long_tokens_alone() -> None:
    assert porter_stem("is") == "is"
    assert porter_stem("ies") == "ie"
    long_token = "generalizations" * 5
    assert len(long_token) > PORTER_MAX_TOKEN_BYTES
    assert porter_stem(long_token) == long_token
    assert porter_stem("é" * 33) == "é" * 33  # 66 bytes


def test_a_stem_that_cuts_a_character_keeps_fts5s_bytes() -> None:
    stem = porter_stem("a丸ed")
    assert token_bytes(stem) == b"a\xe4\xb8"
    assert bounded_term(stem, PG_LEXEME_MAX_BYTES).startswith(BOUNDED_TERM_MARK)


@given(st.text(min_size=1, max_size=50), st.integers(min_value=1, max_value=40))
def test_bounded_terms_are_equal_exactly_when_index_terms_are(text: str, limit: int) -> None:
    tokens = unicode61_tokens(text)
    for token in tokens:
        bounded = bounded_term(token, limit)
        assert (bounded == token) == (len(token.encode("utf-8")) <= limit)
        assert bounded_term(token + "x", limit) != bounded or len(token.encode()) > limit
    assert unicode61_tokens(BOUNDED_TERM_MARK) == []


def test_index_terms_are_cut_like_fts5s_index() -> None:
    long_token = "é" * FTS5_MAX_TOKEN_BYTES
    assert index_term(long_token) == ("é" * (FTS5_MAX_TOKEN_BYTES // 2)).encode()
    assert bounded_term(long_token, PG_LEXEME_MAX_BYTES) == bounded_term(
        long_token + "abc", PG_LEXEME_MAX_BYTES
    )
