"""Keywords of a first user message, for the first-message recall (DESIGN §7.2).

No model: three kinds of keyword are read off the text, in this priority order, each kind in
the order it appears, duplicates (case-insensitive) dropped, at most
:data:`FIRST_MESSAGE_MAX_KEYWORDS` in all:

1. **identifiers**, kept whole: run ids and SHAs and UUIDs (:mod:`recallbox.text.spans`),
   dotted, dashed or underscored names (``search_memory``, ``box.recall``, ``pg-primary-9``)
   and camelCase names (``recallBox``);
2. **CJK runs**, split at common particles and pronouns (``的``, ``了``, ``我``, …); a piece
   longer than :data:`CJK_PIECE_MAX_CHARS` becomes its bigrams, as the index segments it;
3. **English words** of at least :data:`KEYWORD_MIN_CHARS` letters that are neither stop words
   (:data:`recallbox.text.stopwords.STOPWORDS_EN`) nor conversational filler
   (:data:`FILLER_WORDS`: "please", "help", "thanks", …).

Paths and URLs are stripped first: they are long, rarely repeated verbatim, and a recall on
them matches every message that mentions the same directory.
"""

from __future__ import annotations

import re

from recallbox.text.cjk import CJK_RANGES, bigrams
from recallbox.text.normalize import normalize_text
from recallbox.text.spans import IDENTIFIER_RE
from recallbox.text.stopwords import is_stopword

FIRST_MESSAGE_MAX_KEYWORDS = 12
KEYWORD_MIN_CHARS = 3
KEYWORD_MAX_CHARS = 80  # a longer token is a blob, not a keyword
CJK_PIECE_MAX_CHARS = 4
SCAN_MAX_CHARS = 20_000  # a first message longer than this is read from its start only
_FILLER = """
    please pls plz thanks thank thx hey hello hiya okay ok yes yeah yep sure hmm
    help want wanted need needs like just also maybe really actually basically kind sort
    something anything everything thing things stuff way lot lots bit
    can could would should will shall may might must let lets get got make made take
    know think see look tell show give use using try trying going doing done
    now then today here there well still even again
"""
#: Words a person says to an agent that carry no topic.
FILLER_WORDS = frozenset(_FILLER.split())
#: Particles and pronouns a CJK run is split at (single characters).
CJK_SPLIT_CHARS = "的了是在和与及或我你他她它们这那吗呢吧啊呀请把被就都也还要会能很太"
_STRIPPED_KINDS = frozenset({"url", "winpath", "path"})
_KEPT_KINDS = frozenset({"runid", "sha", "uuid"})
_NAME_RE = re.compile(
    r"(?<![\w.-])[A-Za-z_][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)+(?![\w-])"  # dotted/dashed/snake
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b"  # camelCase
    r"|\b[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*\b"  # PascalCase with an inner capital
)
_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'\u2019]*[A-Za-z]")
_CJK_RUN_RE = re.compile(f"[{CJK_RANGES}]+")
_CJK_SPLIT_RE = re.compile(f"[{CJK_SPLIT_CHARS}]+")


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _identifiers(text: str) -> tuple[list[tuple[int, str]], str]:
    """Identifiers with their offsets, and the text with paths, URLs and identifiers blanked."""
    found: list[tuple[int, str]] = []
    blanked: list[tuple[int, int]] = []
    for match in IDENTIFIER_RE.finditer(text):
        blanked.append(match.span())
        if match.lastgroup in _KEPT_KINDS:  # a run id without a digit is a dashed name: kept
            found.append((match.start(), match.group(0)))
    rest = _blank(text, blanked)
    for match in _NAME_RE.finditer(rest):
        found.append((match.start(), match.group(0)))
        blanked.append(match.span())
    return sorted(found), _blank(text, blanked)


def _cjk_pieces(text: str) -> list[str]:
    pieces: list[str] = []
    for run in _CJK_RUN_RE.findall(text):
        for piece in _CJK_SPLIT_RE.split(run):
            if len(piece) < 2:
                continue
            pieces.extend([piece] if len(piece) <= CJK_PIECE_MAX_CHARS else bigrams(piece))
    return pieces


def _words(text: str) -> list[str]:
    return [
        word
        for word in _WORD_RE.findall(text)
        if len(word) >= KEYWORD_MIN_CHARS
        and not is_stopword(word)
        and word.casefold() not in FILLER_WORDS
    ]


def first_message_keywords(message: object) -> list[str]:
    """The keywords of a first user message: identifiers, CJK pieces, then English words.

    Args:
        message: the message text (anything else gives ``[]``).

    Returns:
        At most :data:`FIRST_MESSAGE_MAX_KEYWORDS` keywords, deterministic for a given text.
    """
    if not isinstance(message, str):
        return []
    text = normalize_text(message[:SCAN_MAX_CHARS])
    idents, rest = _identifiers(text)
    candidates = [token for _, token in idents] + _cjk_pieces(rest) + _words(rest)
    keywords: list[str] = []
    seen: set[str] = set()
    for token in candidates:
        token = token.strip("._-")
        key = token.casefold()
        if not token or len(token) > KEYWORD_MAX_CHARS or key in seen:
            continue
        seen.add(key)
        keywords.append(token)
        if len(keywords) == FIRST_MESSAGE_MAX_KEYWORDS:
            break
    return keywords
