"""Markdown documents split into sections, and sections into entries (DESIGN §2, §4.4).

**Sections.** A document is split before every ``##`` and ``###`` ATX heading line (up to
three spaces of indentation, then the ``#`` run, then a space, a tab or the end of the line).
``#`` lines are titles and ``####``–``######`` lines sub-headings: neither is a split point.
A line inside a fenced code block (opened by three or more backticks or tildes, an info string
allowed after them; closed by a run of the same character at least as long, with nothing but
spaces after it; an unclosed fence runs to the end) is never a heading. Setext headings
(``Title`` over ``---``) are not split points.

The text before the first split point is its own section (``heading=None``) when it holds at
least one non-blank line that is not a heading line; otherwise (blank lines, a ``#`` title)
it belongs to the first section. A document without split points is one section, and so is a
plain-text document (:func:`split_plain_text`). Every section keeps its lines verbatim, so the
sections' contents joined give back the document exactly and their line ranges (1-based,
inclusive) partition its lines. Only ``\\n`` ends a line; callers turn ``\\r\\n`` and ``\\r``
into ``\\n`` first (``recallbox.domains.knowledge_files.decode_document``).

Each section carries two hashes: ``content_hash`` over its whole content (an unchanged section
is skipped on re-sync) and ``body_hash`` over the content without its heading line (the same
body under another heading is a rename, not a removal and an addition).

**Entries.** ``recall_context`` returns entries, not whole sections. :func:`split_entries` cuts
a section's lines into blocks, each verbatim: a fenced code block (never split), a list item
at up to three spaces of indentation (``-``, ``*``, ``+``, ``1.``, ``1)``) with its nested and
continuation lines, a heading line, or a paragraph (a run of non-blank lines). Blank lines only
separate entries; they belong to none.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

#: Heading levels that start a new section.
SPLIT_LEVELS = frozenset({2, 3})
#: Deepest indentation (in spaces) at which a heading, fence or list item is recognised.
MAX_BLOCK_INDENT = 3
#: Shortest run of backticks or tildes that opens a fence.
MIN_FENCE_RUN = 3

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES_RE = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_ITEM_RE = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def content_hash(text: str) -> str:
    """SHA-256 hex digest of ``text`` (UTF-8; a lone surrogate never raises)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class MarkdownSection:
    """One section of a document: its lines ``start_line``–``end_line`` verbatim.

    ``heading`` is the text of the section's ``##``/``###`` line (closing ``#`` run dropped),
    ``None`` for a section without one; ``level`` is 2 or 3, or 0 without a heading;
    ``heading_line`` the 1-based number of that line (``None`` without one). ``content``
    keeps each line's ``\\n``.
    """

    heading: str | None
    level: int
    start_line: int
    end_line: int
    heading_line: int | None
    content: str
    content_hash: str
    body_hash: str

    @property
    def lines(self) -> tuple[int, int]:
        """``(start_line, end_line)``."""
        return (self.start_line, self.end_line)

    @property
    def body(self) -> str:
        """The content without the heading line."""
        return section_body(self.content, self.start_line, self.heading_line)


@dataclass(frozen=True, slots=True)
class MarkdownEntry:
    """One entry (block) of a section: its lines verbatim, without their final ``\\n``.

    ``start_line``/``end_line`` are 1-based document line numbers; ``is_item`` marks a list
    item, ``is_heading`` a heading line.
    """

    text: str
    start_line: int
    end_line: int
    is_item: bool = False
    is_heading: bool = False


def heading_of(line: str) -> tuple[int, str] | None:
    """``(level, text)`` of an ATX heading line, else ``None``."""
    match = _HEADING_RE.match(line)
    if match is None:
        return None
    text = _CLOSING_HASHES_RE.sub("", match.group(2) or "")
    return len(match.group(1)), text.strip(" \t")


def _fence_open(line: str) -> tuple[str, int] | None:
    match = _FENCE_OPEN_RE.match(line)
    if match is None:
        return None
    run, info = match.group(2), match.group(3)
    if run[0] == "`" and "`" in info:
        return None  # a backtick fence's info string may not hold a backtick
    return run[0], len(run)


def _closes_fence(line: str, char: str, length: int) -> bool:
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > MAX_BLOCK_INDENT:
        return False
    run = len(stripped) - len(stripped.lstrip(char))
    return run >= length and stripped[run:].strip(" \t") == ""


def fence_ids(lines: Sequence[str]) -> list[int | None]:
    """For each line (without its ``\\n``): the index of the fenced code block holding it
    (its opening and closing fence lines included), or ``None`` outside fenced code."""
    ids: list[int | None] = []
    fence: tuple[str, int] | None = None
    count = -1
    for line in lines:
        if fence is None:
            fence = _fence_open(line)
            if fence is not None:
                count += 1
            ids.append(count if fence is not None else None)
        else:
            ids.append(count)
            if _closes_fence(line, *fence):
                fence = None
    return ids


def _lines(text: str) -> list[str]:
    """The lines of ``text``, each with its ``\\n`` (the last may lack it). Unlike
    ``str.splitlines``, nothing but ``\\n`` ends a line (not ``\\x0b``, ``\\x85``, ``\\u2028``)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def section_body(content: str, start_line: int, heading_line: int | None) -> str:
    """``content`` without the line numbered ``heading_line`` (document numbering)."""
    if heading_line is None:
        return content
    lines = _lines(content)
    del lines[heading_line - start_line]
    return "".join(lines)


def _section(lines: Sequence[str], start: int, end: int, heading_at: int | None) -> MarkdownSection:
    content = "".join(lines[start:end])
    heading: str | None = None
    level = 0
    heading_line: int | None = None
    if heading_at is not None:
        found = heading_of(lines[heading_at].rstrip("\n"))
        assert found is not None
        level, heading = found
        heading_line = heading_at + 1
    body = section_body(content, start + 1, heading_line)
    return MarkdownSection(
        heading=heading,
        level=level,
        start_line=start + 1,
        end_line=end,
        heading_line=heading_line,
        content=content,
        content_hash=content_hash(content),
        body_hash=content_hash(body),
    )


def split_points(lines: Sequence[str]) -> list[int]:
    """0-based indexes of the ``##``/``###`` heading lines outside fenced code."""
    fences = fence_ids([line.rstrip("\n") for line in lines])
    points = []
    for index, line in enumerate(lines):
        if fences[index] is not None:
            continue
        found = heading_of(line.rstrip("\n"))
        if found is not None and found[0] in SPLIT_LEVELS:
            points.append(index)
    return points


def _is_text_line(line: str) -> bool:
    bare = line.rstrip("\n")
    return bare.strip() != "" and heading_of(bare) is None


def split_markdown(text: str) -> list[MarkdownSection]:
    """Split a markdown document into sections (see the module docstring); ``""`` has none."""
    lines = _lines(text)
    if not lines:
        return []
    points = split_points(lines)
    if not points:
        return [_section(lines, 0, len(lines), None)]
    sections: list[MarkdownSection] = []
    first = points[0]
    if any(_is_text_line(line) for line in lines[:first]):
        sections.append(_section(lines, 0, first, None))
        starts = points
    else:
        starts = [0, *points[1:]]
    ends = [*points[1:], len(lines)]
    for start, end, heading_at in zip(starts, ends, points, strict=True):
        sections.append(_section(lines, start, end, heading_at))
    return sections


def split_plain_text(text: str) -> list[MarkdownSection]:
    """A plain-text document as one section (``""`` has none)."""
    lines = _lines(text)
    return [_section(lines, 0, len(lines), None)] if lines else []


def _entry(
    lines: Sequence[str], start: int, end: int, first_line: int, **flags: bool
) -> MarkdownEntry:
    text = "\n".join(line.rstrip("\n") for line in lines[start:end])
    return MarkdownEntry(text, first_line + start, first_line + end - 1, **flags)


def _starts_block(line: str, fence: int | None, previous: int | None) -> bool:
    """A list item, a heading, or the opening line of a fence."""
    if fence is not None:
        return fence != previous
    return bool(_ITEM_RE.match(line)) or heading_of(line) is not None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _item_end(bare: Sequence[str], start: int, fences: Sequence[int | None]) -> int:
    """End (exclusive) of the list item at ``start``: its nested and continuation lines.

    A line indented deeper than the item's marker belongs to the item (a nested item or
    paragraph), even after blank lines; a blank run followed by anything else ends it.
    """
    margin = _indent(bare[start])
    end = start + 1
    while end < len(bare):
        line, fence = bare[end], fences[end]
        if fence is not None and fence == fences[end - 1]:
            end += 1  # inside a fence the item already holds
        elif line.strip() == "":
            nxt = end
            while nxt < len(bare) and bare[nxt].strip() == "":
                nxt += 1
            if nxt == len(bare) or _indent(bare[nxt]) <= margin:
                return end
            end = nxt
        elif _indent(line) > margin and not line.startswith("\t"):
            end += 1  # nested content, a fence opened inside the item included
        elif fence is not None or _starts_block(line, None, None):
            return end
        else:
            end += 1  # a lazy continuation line
    return end


def split_entries(
    content: str, first_line: int = 1, *, skip_line: int | None = None
) -> list[MarkdownEntry]:
    """Cut ``content`` (whose first line is document line ``first_line``) into entries.

    ``skip_line`` (a document line number: the section's heading line) belongs to no entry.
    """
    lines = _lines(content)
    bare = [line.rstrip("\n") for line in lines]
    fences = fence_ids(bare)
    entries: list[MarkdownEntry] = []
    index = 0
    while index < len(bare):
        line, fence = bare[index], fences[index]
        if first_line + index == skip_line or (fence is None and line.strip() == ""):
            index += 1
            continue
        end = index + 1
        if fence is not None:
            while end < len(bare) and fences[end] == fence:
                end += 1
            entries.append(_entry(lines, index, end, first_line))
        elif heading_of(line) is not None:
            entries.append(_entry(lines, index, end, first_line, is_heading=True))
        elif _ITEM_RE.match(line):
            end = _item_end(bare, index, fences)
            entries.append(_entry(lines, index, end, first_line, is_item=True))
        else:
            while (
                end < len(bare)
                and bare[end].strip() != ""
                and not _starts_block(bare[end], fences[end], None)
                and first_line + end != skip_line
            ):
                end += 1
            entries.append(_entry(lines, index, end, first_line))
        index = end
    return entries
