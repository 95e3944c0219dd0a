"""The rules of memory entries that need no database (DESIGN §4.3).

* Seven mutually exclusive types, each with a key prefix, in the order MEMORY.md lists them:
  ``principle`` PRI, ``correction`` COR, ``decision`` DEC, ``guideline`` GDL, ``pitfall``
  PIT, ``process`` PRC, ``model`` MOD.
* A key is the prefix and at least two digits (``PIT03``, ``GDL117``), numbered per type from
  01 and never reused: the next key comes from the highest number *ever issued* for the type
  (which storage keeps even when entries are purged), not from the entries that exist.
* ``principle`` and ``correction`` are evergreen by default; ``remember(evergreen=...)``
  overrides the default either way.
* Remembering a text identical to an existing non-superseded entry returns that entry.
  "Identical" compares :func:`identity_text`: the normalised text with surrounding whitespace
  dropped and each run of inner whitespace read as one space (case and punctuation count).
* Ranking weight by state: active 1.0, dormant 0.5, archived 0.25; a superseded entry's weight
  is further multiplied by 0.1. State weights only reorder; they never drop a hit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from recallbox.errors import InvalidArgument
from recallbox.ranking.decay import STATE_ACTIVE, STATE_ARCHIVED, STATE_DORMANT
from recallbox.text.markdown import content_hash
from recallbox.text.normalize import normalize_text
from recallbox.types import MemoryEntry

#: The seven memory types with their key prefixes, in MEMORY.md order.
TYPE_PREFIXES: dict[str, str] = {
    "principle": "PRI",
    "correction": "COR",
    "decision": "DEC",
    "guideline": "GDL",
    "pitfall": "PIT",
    "process": "PRC",
    "model": "MOD",
}
MEMORY_TYPES: tuple[str, ...] = tuple(TYPE_PREFIXES)
PREFIX_TYPES: dict[str, str] = {prefix: name for name, prefix in TYPE_PREFIXES.items()}
#: The type ``remember`` uses when none is given.
DEFAULT_MEMORY_TYPE = "guideline"
#: Types whose entries are evergreen (never decay) unless told otherwise.
EVERGREEN_TYPES: frozenset[str] = frozenset({"principle", "correction"})
#: Digits of a key's number, at least (``PIT03``).
KEY_MIN_DIGITS = 2

MEMORY_STATES: tuple[str, ...] = (STATE_ACTIVE, STATE_DORMANT, STATE_ARCHIVED)

#: Ranking weight of an entry by state (DESIGN §4.3).
STATE_WEIGHT_ACTIVE = 1.0
STATE_WEIGHT_DORMANT = 0.5
STATE_WEIGHT_ARCHIVED = 0.25
STATE_WEIGHTS: dict[str, float] = {
    STATE_ACTIVE: STATE_WEIGHT_ACTIVE,
    STATE_DORMANT: STATE_WEIGHT_DORMANT,
    STATE_ARCHIVED: STATE_WEIGHT_ARCHIVED,
}
#: Extra factor on the weight of a superseded entry.
SUPERSEDED_WEIGHT_FACTOR = 0.1

#: The source name of the memory entries (privacy and ``recall_context``).
MEMORY_SOURCE = "MEMORY.md"

_KEY_RE = re.compile(r"([A-Z]{3})(\d{2,})")
_TYPE_ORDER = {name: index for index, name in enumerate(MEMORY_TYPES)}


def _choices(values: Iterable[str]) -> str:
    return ", ".join(values)


def validate_type(memory_type: object) -> str:
    """Return ``memory_type`` when it is one of the seven types.

    Raises:
        InvalidArgument: for anything else; the message names the seven.
    """
    if isinstance(memory_type, str) and memory_type in TYPE_PREFIXES:
        return memory_type
    raise InvalidArgument(
        f"unknown memory type {memory_type!r}: use one of {_choices(MEMORY_TYPES)}"
    )


def validate_state(state: object) -> str:
    """Return ``state`` when it is ``active``, ``dormant`` or ``archived``.

    Raises:
        InvalidArgument: for anything else; the message names the three.
    """
    if isinstance(state, str) and state in MEMORY_STATES:
        return state
    raise InvalidArgument(f"unknown memory state {state!r}: use one of {_choices(MEMORY_STATES)}")


def default_evergreen(memory_type: str, evergreen: bool | None = None) -> bool:
    """``evergreen`` when given, else True for the evergreen types."""
    if evergreen is not None:
        return bool(evergreen)
    return validate_type(memory_type) in EVERGREEN_TYPES


def format_key(memory_type: str, number: int) -> str:
    """``format_key("pitfall", 3) == "PIT03"``.

    Raises:
        InvalidArgument: an unknown type, or a number below 1.
    """
    prefix = TYPE_PREFIXES[validate_type(memory_type)]
    if number < 1:
        raise InvalidArgument(f"a memory key number starts at 1, not {number}")
    return f"{prefix}{number:0{KEY_MIN_DIGITS}d}"


def next_key(memory_type: str, highest_issued: int) -> str:
    """The key after the highest number ever issued for the type (0: none yet → ``…01``)."""
    return format_key(memory_type, max(0, highest_issued) + 1)


def parse_key(key: str) -> tuple[str, int]:
    """``parse_key("PIT03") == ("pitfall", 3)``.

    Raises:
        InvalidArgument: ``key`` is not a known prefix followed by two or more digits.
    """
    match = _KEY_RE.fullmatch(key) if isinstance(key, str) else None
    if match is None or match.group(1) not in PREFIX_TYPES:
        raise InvalidArgument(
            f"not a memory key: {key!r} (a prefix of {_choices(PREFIX_TYPES)} and two digits)"
        )
    memory_type, number = PREFIX_TYPES[match.group(1)], int(match.group(2))
    if number < 1 or format_key(memory_type, number) != key:
        raise InvalidArgument(f"not a memory key: {key!r} (numbers start at 01, no extra zeros)")
    return memory_type, number


def key_sort_key(key: str) -> tuple[int, int, str]:
    """Order of keys in MEMORY.md: type order, then number (``GDL9`` never exists); anything
    that is not a key sorts last."""
    match = _KEY_RE.fullmatch(key)
    memory_type = PREFIX_TYPES.get(match.group(1)) if match else None
    if match is None or memory_type is None:
        return (len(MEMORY_TYPES), 0, key)
    return (_TYPE_ORDER[memory_type], int(match.group(2)), key)


def identity_text(text: str) -> str:
    """The form two texts are compared in by the identical-text rule of ``remember``."""
    return " ".join(normalize_text(text).split())


def identity_hash(text: str) -> str:
    """SHA-256 of :func:`identity_text`: what storage indexes to find an identical entry."""
    return content_hash(identity_text(text))


def find_identical(text: str, entries: Iterable[MemoryEntry]) -> MemoryEntry | None:
    """The non-superseded entry (any state) whose text is identical to ``text``, if any.

    Several identical entries can only come from an import; the lowest key wins.
    """
    wanted = identity_text(text)
    matches = [e for e in entries if not e.superseded and identity_text(e.body) == wanted]
    return min(matches, key=lambda e: key_sort_key(e.key)) if matches else None


def state_weight(state: str, *, superseded: bool = False) -> float:
    """Ranking weight of an entry in ``state`` (×0.1 when superseded)."""
    weight = STATE_WEIGHTS[validate_state(state)]
    return weight * SUPERSEDED_WEIGHT_FACTOR if superseded else weight


def entry_weight(entry: MemoryEntry) -> float:
    """:func:`state_weight` of ``entry``."""
    return state_weight(entry.state, superseded=entry.superseded)
