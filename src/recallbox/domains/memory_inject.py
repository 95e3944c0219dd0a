"""Session-start memory injection, assembled from entries (DESIGN §4.3, §7; pure).

``memory_injection(query=None, budget_tokens=FULL_INJECTION_TOKENS)``:

* the memory it draws from is the **active**, non-superseded entries the privacy gate allows
  (the caller passes the gated entries; dormant, archived and superseded ones are dropped
  here too);
* when all of it fits ``budget_tokens`` (``recallbox.estimate_tokens``), all of it is
  injected, with no manifest;
* otherwise entries are taken in priority order — evergreen first, then relevance to the
  query (the keyword score the caller computed; none without a query), then ``ref_count``,
  then MEMORY.md order — while they fit, skipping any that would not, with room kept for the
  manifest; the text ends with one manifest line naming how many entries of which types were
  not loaded (and the first of their keys) and ``recall_context`` as the tool that fetches
  them.

The loaded entries are written in MEMORY.md order, under their type headings, each as its
MEMORY.md bullet without the metadata comment (``memory_md.entry_markdown``). The text is
plain content: the evidence header and the escapes of DESIGN §3.5 are the renderer's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from recallbox.domains.memory_md import TYPE_LABELS, entry_markdown, export_order
from recallbox.domains.memory_model import MEMORY_TYPES, key_sort_key
from recallbox.errors import InvalidArgument
from recallbox.ranking.decay import STATE_ACTIVE
from recallbox.text.cjk import cjk_count
from recallbox.text.tokens import estimate_tokens
from recallbox.types import MemoryEntry

#: Default budget of the injection, in tokens: below it the whole active memory is injected.
FULL_INJECTION_TOKENS = 30_000
#: Smallest budget accepted (room for the manifest line and a few entries).
MIN_INJECTION_TOKENS = 200
#: Keys the manifest names, at most (the count says how many were left out).
MANIFEST_MAX_KEYS = 10
#: The tool named by the manifest.
MANIFEST_TOOL = 'recall_context(query, source="MEMORY.md")'

_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class MemoryInjection:
    """The injection ``text`` and the keys it ``loaded`` and ``left_out`` (MEMORY.md order)."""

    text: str
    loaded: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()


def injectable(entries: Sequence[MemoryEntry]) -> list[MemoryEntry]:
    """The active, non-superseded ``entries``, in MEMORY.md order."""
    return export_order([e for e in entries if e.state == STATE_ACTIVE and not e.superseded])


def manifest_line(left_out: Sequence[MemoryEntry]) -> str:
    """The manifest of what was not loaded, e.g. ``Not loaded: 3 more memory entries (2
    guideline, 1 pitfall: GDL07, GDL09, PIT01). Fetch them with recall_context(…).``"""
    ordered = export_order(left_out)
    counts = [f"{n} {t}" for t in MEMORY_TYPES if (n := sum(1 for e in ordered if e.type == t))]
    keys = [e.key for e in ordered[:MANIFEST_MAX_KEYS]]
    more = len(ordered) - len(keys)
    named = ", ".join(keys) + (f" and {more} more" if more else "")
    noun = "entry" if len(ordered) == 1 else "entries"
    return (
        f"Not loaded: {len(ordered)} more memory {noun} ({', '.join(counts)}: {named}). "
        f"Fetch them with {MANIFEST_TOOL}."
    )


def render_entries(entries: Sequence[MemoryEntry]) -> str:
    """``entries`` under their type headings, in MEMORY.md order."""
    ordered = export_order(entries)
    blocks = []
    for memory_type in MEMORY_TYPES:
        mine = [entry_markdown(e) for e in ordered if e.type == memory_type]
        if mine:
            blocks.append("\n".join(["## " + TYPE_LABELS[memory_type], *mine]))
    return "\n\n".join(blocks)


def _cost(text: str) -> tuple[int, int]:
    cjk = cjk_count(text)
    return len(text) - cjk, cjk


class _Room:
    """An upper bound of the rendered size: each entry with its newline, each type heading
    with its blank line, counted once."""

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self.plain = 0
        self.cjk = 0
        self.types: set[str] = set()

    def _with(self, entry: MemoryEntry) -> tuple[int, int]:
        plain, cjk = _cost(entry_markdown(entry) + "\n")
        if entry.type not in self.types:
            plain += len("## " + TYPE_LABELS[entry.type] + "\n\n")
        return self.plain + plain, self.cjk + cjk

    def add(self, entry: MemoryEntry) -> bool:
        plain, cjk = self._with(entry)
        if math.ceil(plain / _CHARS_PER_TOKEN) + cjk > self.max_tokens:
            return False
        self.plain, self.cjk = plain, cjk
        self.types.add(entry.type)
        return True


_PriorityKey = tuple[bool, float, int, tuple[int, int, str]]


def _priority(relevance: Mapping[str, float]) -> Callable[[MemoryEntry], _PriorityKey]:
    """Evergreen first, then relevance, then ``ref_count``, then MEMORY.md order."""

    def key(entry: MemoryEntry) -> _PriorityKey:
        return (
            not entry.evergreen,
            -relevance.get(entry.key, 0.0),
            -entry.ref_count,
            key_sort_key(entry.key),
        )

    return key


def check_budget(budget_tokens: object) -> int:
    """``budget_tokens`` when it is an integer of at least :data:`MIN_INJECTION_TOKENS`.

    Raises:
        InvalidArgument: anything else.
    """
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        raise InvalidArgument(f"budget_tokens must be an integer, not {budget_tokens!r}")
    if budget_tokens < MIN_INJECTION_TOKENS:
        raise InvalidArgument(
            f"budget_tokens must be at least {MIN_INJECTION_TOKENS}, not {budget_tokens}"
        )
    return budget_tokens


def assemble_memory_injection(
    entries: Sequence[MemoryEntry],
    *,
    budget_tokens: int = FULL_INJECTION_TOKENS,
    relevance: Mapping[str, float] | None = None,
    reserved_tokens: int = 0,
) -> MemoryInjection:
    """The session-start injection of ``entries`` within ``budget_tokens``.

    ``relevance`` maps keys to the query's keyword score (missing: 0); ``reserved_tokens``
    of the budget are kept for what the caller puts around the text (its header).

    Raises:
        InvalidArgument: ``budget_tokens`` below :data:`MIN_INJECTION_TOKENS`.
    """
    check_budget(budget_tokens)
    budget_tokens -= max(0, reserved_tokens)
    memory = injectable(entries)
    whole = render_entries(memory)
    if estimate_tokens(whole) <= budget_tokens:
        return MemoryInjection(whole, tuple(e.key for e in memory))
    ranked = sorted(memory, key=_priority(relevance or {}))
    reserve = estimate_tokens("\n\n" + manifest_line(memory))
    room = _Room(budget_tokens - reserve)
    loaded = [entry for entry in ranked if room.add(entry)]
    while True:
        chosen = {e.key for e in loaded}
        left_out = [e for e in memory if e.key not in chosen]
        body = render_entries(loaded)
        text = (body + "\n\n" if body else "") + manifest_line(left_out)
        if estimate_tokens(text) <= budget_tokens or not loaded:
            break
        loaded.pop()  # the manifest came out longer than reserved: give back the last entry
    return MemoryInjection(
        text, tuple(e.key for e in export_order(loaded)), tuple(e.key for e in left_out)
    )
