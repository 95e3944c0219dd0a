"""Who wrote a message, and which participant a query names first (#21).

A message's *participant* is the ``Name:`` a chat transcript writes at the start of its content
(``"Caroline: Hey Mel!"`` → ``Caroline``) when there is one, else its role (``user``,
``assistant``, …). Only stored fields are read: the content and the role, never ``metadata``.

A ``Name:`` prefix is one to :data:`MAX_NAME_WORDS` capitalised words (letters, ``'``, ``-``, ``.``
inside) followed by ``:`` and a space, within the first :data:`MAX_PREFIX_CHARS` characters;
label words that usually start a line of text (``Note:``, ``Error:``, …, :data:`LABEL_WORDS`)
are not names.

:func:`query_participant` returns the participant a query mentions first (a whole-word,
case-insensitive match of a participant's full name or of its first word; a possessive
``Caroline's`` counts). No input string raises.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

#: A ``Name:`` prefix has at most this many words.
MAX_NAME_WORDS = 3
#: The prefix must end within this many characters of the start.
MAX_PREFIX_CHARS = 40
#: Capitalised words that label a line rather than name its author.
LABEL_WORDS = frozenset(
    {
        "answer", "assistant", "bug", "caution", "context", "question", "done", "edit",
        "error", "example", "exception", "fix", "fixme", "hint", "important", "info", "issue",
        "note", "output", "plan", "q", "a", "reason", "result", "step", "summary", "system",
        "tip", "todo", "tool", "update", "usage", "user", "warning", "why", "how", "what",
        "when", "where", "who", "subject", "re", "fwd", "status", "input", "response",
    }
)  # fmt: skip
#: At most this many participants named by one query are used.
MAX_QUERY_PARTICIPANTS = 4
#: At most this many known participants are looked for in a query.
MAX_PARTICIPANT_NAMES = 256
#: Queries are read up to this many characters.
MAX_PARTICIPANT_QUERY_CHARS = 2_000

_WORD = r"[A-Z][A-Za-z'\-.]{0,30}"
_PREFIX_RE = re.compile(rf"^\s*(?P<name>{_WORD}(?: {_WORD}){{0,{MAX_NAME_WORDS - 1}}}):\s")


_AFTER_COLON = (" ", "\t", "\n")


def name_prefix(content: str) -> str | None:
    """The ``Name:`` a chat transcript wrote at the start of ``content``, else ``None``."""
    if not isinstance(content, str):
        return None
    colon = content.find(":", 0, MAX_PREFIX_CHARS + 1)
    if colon < 1 or content[colon + 1 : colon + 2] not in _AFTER_COLON:
        return None
    return _name(content[: colon + 2])


@functools.lru_cache(maxsize=1024)
def _name(head: str) -> str | None:
    """The name of a ``"Name: "`` head (cached: a transcript repeats a few heads)."""
    match = _PREFIX_RE.match(head)
    if match is None or match.end("name") > MAX_PREFIX_CHARS:
        return None
    name = match["name"].rstrip(".'-")
    if not name or name.split()[0].casefold() in LABEL_WORDS:
        return None
    return name


def participant_of(role: str, content: str) -> str:
    """The participant of a message: its ``Name:`` prefix, else its role."""
    return name_prefix(content) or (role if isinstance(role, str) else "")


def participants_of(messages: Iterable[tuple[str, str]]) -> list[str]:
    """:func:`participant_of` of many ``(role, content)`` pairs (one search's candidates), the
    per-message work inlined."""
    out: list[str] = []
    limit = MAX_PREFIX_CHARS + 1
    for role, content in messages:
        name = None
        colon = content.find(":", 0, limit)
        if colon >= 1 and content[colon + 1 : colon + 2] in _AFTER_COLON:
            name = _name(content[: colon + 2])
        out.append(name or role)
    return out


def _pattern(name: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in name.split()]
    alternatives = [r"\s+".join(words)]
    if len(words) > 1:
        alternatives.append(words[0])
    return re.compile(r"(?<![\w])(?:" + "|".join(alternatives) + r")(?![\w])", re.IGNORECASE)


def query_participants(query: str, participants: Iterable[str]) -> tuple[str, ...]:
    """The participants of ``participants`` that ``query`` mentions, first mentioned first.

    At the same position the longer name wins (``Mary Ann`` before ``Mary``); at most
    :data:`MAX_QUERY_PARTICIPANTS` are returned.
    """
    if not isinstance(query, str) or not query:
        return ()
    text = query[:MAX_PARTICIPANT_QUERY_CHARS]
    found: list[tuple[int, int, str]] = []
    names = dict.fromkeys(p.strip() for p in participants if isinstance(p, str) and p.strip())
    for name in list(names)[:MAX_PARTICIPANT_NAMES]:
        match = _pattern(name).search(text)
        if match is not None:
            found.append((match.start(), -len(name), name))
    found.sort()
    out: list[str] = []
    for _, _, name in found:
        if not any(same_participant(name, seen) for seen in out):
            out.append(name)
    return tuple(out[:MAX_QUERY_PARTICIPANTS])


def query_participant(query: str, participants: Iterable[str]) -> str | None:
    """The participant of ``participants`` that ``query`` mentions first (``None``: none)."""
    named = query_participants(query, participants)
    return named[0] if named else None


def same_participant(a: str | None, b: str | None) -> bool:
    """True when ``a`` and ``b`` name the same participant (case-insensitive)."""
    return bool(a) and bool(b) and str(a).casefold() == str(b).casefold()
