"""SQLite FTS5's ``porter unicode61 remove_diacritics 2`` tokenizer, token for token, in Python.

The ranked keyword indexes tokenise the CJK-segmented ``*_seg`` text with FTS5's
``tokenize='porter unicode61 remove_diacritics 2'`` (DESIGN §4.1). A backend without FTS5 (the
PostgreSQL one: a ``simple`` ``tsvector`` fed with these tokens) needs the very same tokens, or
its BM25 statistics and matches differ. This module reproduces them exactly; a differential test
compares it with SQLite through apsw for every code point and a large real word list.

**unicode61** (``porter`` wraps it: unicode61 splits and folds, porter stems each token):

* A token is a maximal run of token characters. Which characters those are comes from FTS5's
  own, fixed category table (default categories ``L* N* Co``), derived for every code point into
  :mod:`recallbox.text.fts_tokenize_data`: 7 997 separators, all else token characters —
  unassigned code points included, and emoji newer than the table too.
* :data:`~recallbox.text.fts_tokenize_data.CONTINUE_ONLY` combining marks extend a token but
  never start one (at the start of a run they are separators), and fold to nothing.
* Each character is folded on its own: ASCII and FTS5's case table to lower case, then
  ``remove_diacritics 2`` maps letters with diacritics (code points below U+2000) to their base
  letter. A fold is at most one character.
* Lone surrogates cannot reach SQLite (they are not UTF-8; stored text is normalised to U+FFFD,
  a separator); here they are separators too.

**porter** is SQLite's own Porter stemmer (``fts5_tokenize.c``), which differs from other ports
(NLTK's among them): it works on the token's **UTF-8 bytes** (every non-ASCII byte is a
consonant), leaves tokens under 3 or over :data:`PORTER_MAX_TOKEN_BYTES` bytes unchanged, and
chooses a rule by the second-to-last byte and then the first matching suffix, whose condition
alone decides (no fallback to a shorter suffix).

**Index terms.** FTS5's index stores at most :data:`FTS5_MAX_TOKEN_BYTES` bytes of a token
(query tokens are cut the same way); :func:`index_term` gives that key, and
:func:`bounded_term` a stand-in for stores with a smaller term limit (PostgreSQL's lexemes hold
at most 2 047 bytes).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from functools import cache, lru_cache

from recallbox.text.fts_tokenize_data import CONTINUE_ONLY, FOLD_RUNS, SEPARATOR_RANGES

#: The tokenizer these functions reproduce (the ranked FTS5 indexes' ``tokenize=`` option).
FTS5_TOKENIZE = "porter unicode61 remove_diacritics 2"
#: porter leaves longer tokens (in UTF-8 bytes) unchanged (``FTS5_PORTER_MAX_TOKEN``).
PORTER_MAX_TOKEN_BYTES = 64
#: porter leaves shorter tokens unchanged.
PORTER_MIN_TOKEN_BYTES = 3
#: FTS5's index keeps this many bytes of a token (``FTS5_MAX_TOKEN_SIZE``).
FTS5_MAX_TOKEN_BYTES = 32_768
#: Distinct stems remembered by :func:`porter_stem` (real text repeats a small vocabulary).
STEM_CACHE_SIZE = 1 << 16
#: Starts the stand-in of an over-long term; never a token character, so no token looks alike.
BOUNDED_TERM_MARK = "#"

_SURROGATES = (0xD800, 0xDFFF)


def _class_ranges(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(
        re.escape(chr(first))
        if first == last
        else f"{re.escape(chr(first))}-{re.escape(chr(last))}"
        for first, last in ranges
    )


_ASTRAL = (0x10000, 0x10FFFF)
# ASCII token characters are exactly the letters and digits (the derived tables say so too).
_ASCII_TOKEN_RE = re.compile("[a-z0-9]+")


@cache
def _token_re(astral: bool) -> re.Pattern[str]:
    """A token: a start character, then any token characters.

    Without ``astral`` every astral character is a separator: the pattern is then much faster
    (Python tests a class's astral ranges one by one), and it is only used on text that has
    none.
    """
    ranges = [*SEPARATOR_RANGES, _SURROGATES]
    if not astral:
        ranges = [(first, min(last, 0xFFFF)) for first, last in ranges if first <= 0xFFFF]
        ranges.append(_ASTRAL)
    separators = _class_ranges(ranges)
    continue_only = "".join(re.escape(chr(c)) for c in CONTINUE_ONLY)
    return re.compile(f"[^{separators}{continue_only}][^{separators}]*")


@cache
def _fold_table() -> dict[int, int | None]:
    table: dict[int, int | None] = dict.fromkeys(CONTINUE_ONLY)
    for first, count, step, target, target_step in FOLD_RUNS:
        for i in range(count):
            table[first + i * step] = target + i * target_step
    return table


def unicode61_tokens(text: str) -> list[str]:
    """The tokens of FTS5's ``unicode61 remove_diacritics 2`` for ``text``, in order."""
    if text.isascii():
        return _ASCII_TOKEN_RE.findall(text.lower())
    table = _fold_table()
    runs = _token_re(max(text) > "\uffff").findall(text)
    return [run.lower() if run.isascii() else run.translate(table) for run in runs]


# -- SQLite's Porter stemmer, on UTF-8 bytes -------------------------------------------------

_VOWELS = frozenset(b"aeiou")
_Y = ord("y")


def _is_vowel(byte: int, y_is_vowel: bool) -> bool:
    return byte in _VOWELS or (y_is_vowel and byte == _Y)


def _gobble_vc(word: bytearray, start: int, end: int, prev_consonant: bool) -> int:
    """Past the first vowel-then-consonant of ``word[start:end]``: its end index, or 0."""
    consonant = prev_consonant
    i = start
    while i < end:
        consonant = not _is_vowel(word[i], consonant)
        if not consonant:
            break
        i += 1
    i += 1
    while i < end:
        consonant = not _is_vowel(word[i], consonant)
        if consonant:
            return i + 1
        i += 1
    return 0


def _m_gt0(word: bytearray, n: int) -> bool:
    return _gobble_vc(word, 0, n, False) != 0


def _m_gt1(word: bytearray, n: int) -> bool:
    at = _gobble_vc(word, 0, n, False)
    return at != 0 and _gobble_vc(word, at, n, True) != 0


def _m_eq1(word: bytearray, n: int) -> bool:
    at = _gobble_vc(word, 0, n, False)
    return at != 0 and _gobble_vc(word, at, n, True) == 0


def _o_star(word: bytearray, n: int) -> bool:
    """``*o``: the stem ends consonant-vowel-consonant, the last not ``w``, ``x`` or ``y``."""
    if word[n - 1] in b"wxy":
        return False
    mask = 0
    consonant = False
    for i in range(n):
        consonant = not _is_vowel(word[i], consonant)
        mask = (mask << 1) + consonant
    return (mask & 0x7) == 0x5


def _m_gt1_s_or_t(word: bytearray, n: int) -> bool:
    return word[n - 1] in b"st" and _m_gt1(word, n)


def _has_vowel(word: bytearray, n: int) -> bool:
    """``*v*`` as SQLite tests it: ``y`` counts as a vowel anywhere but first."""
    return any(_is_vowel(word[i], i > 0) for i in range(n))


_Condition = Callable[[bytearray, int], bool]
_Rule = tuple[bytes, _Condition | None, bytes]

_STEP_1B: tuple[_Rule, ...] = (
    (b"eed", _m_gt0, b"ee"),
    (b"ed", _has_vowel, b""),
    (b"ing", _has_vowel, b""),
)
_STEP_1B2: tuple[_Rule, ...] = ((b"at", None, b"ate"), (b"bl", None, b"ble"), (b"iz", None, b"ize"))
_STEP_2: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt0, out)
    for suffix, out in (
        (b"ational", b"ate"), (b"tional", b"tion"), (b"enci", b"ence"), (b"anci", b"ance"),
        (b"izer", b"ize"), (b"logi", b"log"), (b"bli", b"ble"), (b"alli", b"al"),
        (b"entli", b"ent"), (b"eli", b"e"), (b"ousli", b"ous"), (b"ization", b"ize"),
        (b"ation", b"ate"), (b"ator", b"ate"), (b"alism", b"al"), (b"iveness", b"ive"),
        (b"fulness", b"ful"), (b"ousness", b"ous"), (b"aliti", b"al"), (b"iviti", b"ive"),
        (b"biliti", b"ble"),
    )
)  # fmt: skip
_STEP_3: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt0, out)
    for suffix, out in (
        (b"ical", b"ic"), (b"ness", b""), (b"icate", b"ic"), (b"iciti", b"ic"), (b"ful", b""),
        (b"ative", b""), (b"alize", b"al"),
    )
)  # fmt: skip
_STEP_4: tuple[_Rule, ...] = tuple(
    (suffix, _m_gt1_s_or_t if suffix == b"ion" else _m_gt1, b"")
    for suffix in (
        b"al", b"ance", b"ence", b"er", b"ic", b"able", b"ible", b"ant", b"ement", b"ment",
        b"ent", b"ion", b"ou", b"ism", b"ate", b"iti", b"ous", b"ive", b"ize",
    )
)  # fmt: skip


def _apply(word: bytearray, rules: tuple[_Rule, ...]) -> bytes | None:
    """One of SQLite's generated steps: among the rules whose suffix has the word's
    second-to-last byte there, the first suffix that ends the word (and is shorter than it)
    decides. Returns that suffix when its rule applied."""
    n = len(word)
    if n < 2:
        # SQLite reads the byte before its buffer here; no rule can match a 1-byte word.
        return None
    key = word[n - 2]
    for suffix, condition, out in rules:
        width = len(suffix)
        if suffix[-2] != key or n <= width or not word.endswith(suffix):
            continue
        if condition is None or condition(word, n - width):
            word[n - width :] = out
            return suffix
        return None
    return None


def _step_1a(word: bytearray) -> None:
    n = len(word)
    if word[n - 1] != ord("s"):
        return
    if word[n - 2] == ord("e"):
        sses = n > 4 and word[n - 4] == ord("s") and word[n - 3] == ord("s")
        ies = n > 3 and word[n - 3] == ord("i")
        del word[n - (2 if sses or ies else 1) :]
    elif word[n - 2] != ord("s"):
        del word[n - 1 :]


def _porter(word: bytearray) -> bytes:
    """SQLite's ``fts5PorterCb`` on a token of 3–64 bytes."""
    _step_1a(word)
    step_1b_removed = _apply(word, _STEP_1B) in (b"ed", b"ing")
    if step_1b_removed and _apply(word, _STEP_1B2) is None:
        last = word[-1]
        if len(word) > 1 and not _is_vowel(last, False) and last not in b"lsz" and last == word[-2]:
            del word[-1]
        elif _m_eq1(word, len(word)) and _o_star(word, len(word)):
            word.append(ord("e"))
    if word[-1] == _Y and _has_vowel(word, len(word) - 1):
        word[-1] = ord("i")
    _apply(word, _STEP_2)
    _apply(word, _STEP_3)
    _apply(word, _STEP_4)
    n = len(word)
    if word[n - 1] == ord("e") and (
        _m_gt1(word, n - 1) or (_m_eq1(word, n - 1) and not _o_star(word, n - 1))
    ):
        del word[n - 1]
    n = len(word)
    if n > 1 and word[n - 1] == ord("l") and word[n - 2] == ord("l") and _m_gt1(word, n - 1):
        del word[n - 1]
    return bytes(word)


@lru_cache(maxsize=STEM_CACHE_SIZE)
def porter_stem(token: str) -> str:
    """SQLite FTS5's Porter stem of one (already folded) token."""
    raw = token.encode("utf-8")
    if not PORTER_MIN_TOKEN_BYTES <= len(raw) <= PORTER_MAX_TOKEN_BYTES:
        return token
    # Trigger: the double-consonant rule compares bytes and may cut the last character of a
    # token like "a丸ed" in half (FTS5 then indexes invalid UTF-8).
    # Why: the stem must name the very bytes FTS5 indexes.
    # Outcome: undecodable bytes become lone surrogates (``surrogateescape``), reversibly.
    return _porter(bytearray(raw)).decode("utf-8", "surrogateescape")


def fts_tokens(text: str) -> list[str]:
    """The tokens of FTS5's ``porter unicode61 remove_diacritics 2`` for ``text``, in order.

    Feed it what the index is fed: the CJK-segmented ``*_seg`` text on the indexed side, the
    text of one quoted phrase on the query side (FTS5 tokenises both the same way).
    """
    return [porter_stem(token) for token in unicode61_tokens(text)]


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def token_bytes(token: str) -> bytes:
    """The bytes FTS5 emits for ``token`` (lone surrogates are the bytes of a cut stem)."""
    return token.encode("utf-8", "surrogateescape")


def index_term(token: str) -> bytes:
    """The key FTS5's index stores for ``token``: at most :data:`FTS5_MAX_TOKEN_BYTES` of its
    bytes (the cut may fall inside a character)."""
    return token_bytes(token)[:FTS5_MAX_TOKEN_BYTES]


def bounded_term(token: str, max_bytes: int) -> str:
    """``token`` when it is valid UTF-8 of at most ``max_bytes`` bytes, else a stand-in.

    The stand-in is :data:`BOUNDED_TERM_MARK` and the hex BLAKE2b digest of the FTS5 index key,
    so two tokens get the same stand-in exactly when FTS5 stores them as the same term (and a
    stand-in is never a token: it starts with a separator).
    """
    key = index_term(token)
    if len(key) <= max_bytes and key == token_bytes(token) and _is_utf8(key):
        return token
    return BOUNDED_TERM_MARK + hashlib.blake2b(key, digest_size=20).hexdigest()
