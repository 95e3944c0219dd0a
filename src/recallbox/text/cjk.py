"""CJK bigram segmentation, shared by the indexed side and the query side (DESIGN §4.1).

FTS5's unicode61 tokenizer keeps a run of CJK characters as one token, and trigram needs three
characters, so neither finds a two-character Chinese word. We segment in Python instead: each
CJK run becomes its overlapping bigrams separated by spaces (a single character stays itself),
and everything else passes through untouched. ``segment(segment(x)) == segment(x)``.
"""

from __future__ import annotations

import re

# Han (incl. extensions A and compatibility), kana, Hangul syllables, CJK symbols/fullwidth forms
# are not included: punctuation is not a word character.
CJK_RANGES = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf"  # CJK Unified Ideographs Extension A
    "\u4e00-\u9fff"  # CJK Unified Ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK Compatibility Ideographs
    "\U00020000-\U0002ebef"  # Extensions B-F
)
_CJK_RUN_RE = re.compile(f"[{CJK_RANGES}]+")
_CJK_CHAR_RE = re.compile(f"[{CJK_RANGES}]")
# A boundary between a CJK character and a non-space, non-CJK character: gets a space.
_GLUED_RE = re.compile(
    f"(?<=[{CJK_RANGES}])(?=[^\\s{CJK_RANGES}])|(?<=[^\\s{CJK_RANGES}])(?=[{CJK_RANGES}])"
)


def is_cjk_char(char: str) -> bool:
    """True for one CJK character (Han, kana, Hangul)."""
    return bool(_CJK_CHAR_RE.fullmatch(char))


def has_cjk(text: str) -> bool:
    """True when ``text`` holds at least one CJK character."""
    if text.isascii():  # the usual case, answered without the regex
        return False
    return _CJK_CHAR_RE.search(text) is not None


def cjk_count(text: str) -> int:
    """Number of CJK characters in ``text``."""
    return len(_CJK_CHAR_RE.findall(text))


def bigrams(run: str) -> list[str]:
    """Overlapping bigrams of a CJK run; a single character stays itself."""
    if len(run) <= 1:
        return [run] if run else []
    return [run[i : i + 2] for i in range(len(run) - 1)]


def segment(text: str) -> str:
    """Rewrite every CJK run of ``text`` as space-separated bigrams, split from adjacent words."""
    if not has_cjk(text):
        return text
    text = _CJK_RUN_RE.sub(lambda m: " ".join(bigrams(m.group(0))), text)
    return _GLUED_RE.sub(" ", text)


def cjk_runs(text: str) -> list[str]:
    """The CJK runs of ``text``, in order."""
    return _CJK_RUN_RE.findall(text)
