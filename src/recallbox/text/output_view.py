"""The shape of a tool-output view, shared by the line view and the JSON view (DESIGN §6)."""

from __future__ import annotations

from dataclasses import dataclass

VIEW_PREFIX = "[tool output view"
KINDS: tuple[str, ...] = ("passthrough", "rendered", "lines", "json")


@dataclass(frozen=True, slots=True)
class Elision:
    """One elided part of an original.

    Text views: ``start``/``end`` are character offsets of the original and ``lines`` the
    1-based first and last line touched; ``path`` is ``None``. JSON views: ``path`` is the JSON
    path (``$.items[19:4999]``), ``count`` how many items, keys or characters (``what``), and
    ``chars`` the characters left out (of a string, or of the compact JSON of items and keys);
    ``start``/``end`` are ``-1``.
    """

    chars: int
    start: int = -1
    end: int = -1
    lines: tuple[int, int] | None = None
    path: str | None = None
    what: str = "characters"
    count: int = 0


@dataclass(frozen=True, slots=True)
class OutputView:
    """What an agent sees of a tool output, and what was left out.

    ``kind``: ``passthrough`` (the whole output, untouched), ``rendered`` (already a recallbox
    rendering, untouched), ``lines`` (a text view) or ``json`` (a JSON view).
    ``uses_handle`` is true when ``text`` names the handle (then the original must be stored).
    """

    text: str
    kind: str
    total_chars: int
    elided_chars: int
    elisions: tuple[Elision, ...]
    uses_handle: bool


def expand_call(handle: str, offset: int) -> str:
    """The call that shows the original from ``offset`` on."""
    return f"expand({handle}, offset={offset})"


def no_expand_line(elided: int) -> str:
    """The closing line of a view that has no handle (DESIGN §6)."""
    return f"[{elided} characters elided; no expand tool available]"
