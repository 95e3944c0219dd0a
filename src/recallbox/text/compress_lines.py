"""The line view of a tool output: head, tail and important lines, every gap named (§6).

How a view is chosen, within ``max_chars`` (escapes and markers counted):

1. the **head** and the **tail** get :data:`HEAD_SHARE` and :data:`TAIL_SHARE` of the room
   left by the header and closing lines, cut at a line end when one is near
   (:func:`recallbox.text.spans.safe_end`), never inside an identifier;
2. in between, **important lines** are added while they fit, in priority order: error lines
   (first, last, second, second-to-last, … — both ends of a log matter), then warning lines,
   then lines with identifiers; identical lines once; a long line as
   :data:`IMPORTANT_LINE_MAX_CHARS` around its match;
3. the room still left **grows the head and the tail**;
4. every gap becomes one marker line — ``[… N characters elided (lines a-b); expand(h,
   offset=s) …]`` — unless the gap is shorter than its marker (then it is shown); a closing
   line counts the error and warning lines inside gaps.

Costs are counted as upper bounds while choosing (each marker priced at its longest), so the
rendered view never exceeds the cap.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from recallbox.text.output_view import (
    VIEW_PREFIX,
    Elision,
    OutputView,
    expand_call,
    no_expand_line,
)
from recallbox.text.render import escape_stored, escaped_length
from recallbox.text.spans import (
    ERROR_HINT_RE,
    ERROR_RE,
    IDENTIFIER_RE,
    WARNING_HINT_RE,
    WARNING_RE,
    safe_end,
    safe_start,
)

#: Share of the content budget the head and the tail each get before the important lines.
HEAD_SHARE = 0.25
TAIL_SHARE = 0.25
#: A longer error/warning line is shown as this many characters around its match.
IMPORTANT_LINE_MAX_CHARS = 500
IMPORTANT_LEAD_CHARS = 120
#: Candidate lines considered per class (errors, warnings, identifiers) — the rest are counted.
MAX_CANDIDATE_LINES = 1_000
#: How much of the middle is scanned for identifier lines (the lowest-priority class).
IDENTIFIER_SCAN_CHARS = 200_000
#: Tries at growing the head and tail into the room the important lines left.
GROW_ATTEMPTS = 8


def build_line_view(
    text: str, *, handle: str | None, tool: str | None, max_chars: int
) -> OutputView:
    """The line view of ``text`` (longer than ``max_chars``) within ``max_chars``."""
    return _LineView(text, handle, tool, max_chars).build()


def line_count(text: str) -> int:
    """Lines of ``text`` (a final newline does not open another line)."""
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


def _line_span(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, (len(text) if end < 0 else end + 1)


def _matching_lines(
    text: str, pattern: re.Pattern[str], lo: int, hi: int, hint: re.Pattern[str] | None = None
) -> list[int]:
    """Start offsets of the lines with a match of ``pattern`` in ``[lo, hi)``, ascending.

    ``hint`` (plain literals every match contains) finds candidate lines fast; ``pattern``
    then checks each of them. Each line is looked at once, however many matches it holds, so
    a 5 MB one-line output with thousands of matches stays linear.
    """
    starts: list[int] = []
    line_end = -1
    for found in (hint or pattern).finditer(text, lo, hi):
        if found.start() < line_end:
            continue
        start, line_end = _line_span(text, found.start())
        if hint is None or pattern.search(text, max(start, lo), min(line_end, hi)):
            starts.append(start)
    return starts


def _interleave(items: list[int]) -> list[int]:
    """First, last, second, second-to-last, …: both ends of a log matter."""
    out = []
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        out.append(items[lo])
        if hi != lo:
            out.append(items[hi])
        lo, hi = lo + 1, hi - 1
    return out


class _LineView:
    """One text view being built: head, tail, important lines, markers, all within the cap."""

    def __init__(self, text: str, handle: str | None, tool: str | None, max_chars: int) -> None:
        self.text = text
        self.handle = handle
        self.max_chars = max_chars
        n = len(text)
        tool_part = f"tool={tool}, " if tool else ""
        lines = line_count(text)
        self.header = f"{VIEW_PREFIX}: {tool_part}{n} characters in {lines} "
        self.header += "line; " if lines == 1 else "lines; "
        self.header += "elided ranges are marked"
        if handle is not None:
            self.header += f"; page the original with {expand_call(handle, 0)}]"
        else:
            self.header += "]"
        # Upper bounds: every number in a marker or footer is at most len(text).
        self.marker_cost = len(self._marker(0, n, (n + 1, n + 2), offset=n)) + 1
        self.footer_cost = len(self._important_footer(n, n)) + 1
        self.footer_cost += len(no_expand_line(n)) + 1 if handle is None else 0
        self.content = max_chars - len(self.header) - self.footer_cost

    # -- text of our own lines
    def _marker(
        self, start: int, end: int, lines: tuple[int, int], *, offset: int | None = None
    ) -> str:
        where = f"line {lines[0]}" if lines[0] == lines[1] else f"lines {lines[0]}-{lines[1]}"
        at = start if offset is None else offset
        tail = f"; {expand_call(self.handle, at)}" if self.handle is not None else ""
        return f"[… {end - start} characters elided ({where}){tail} …]"

    @staticmethod
    def _important_footer(errors: int, warnings: int) -> str:
        return (
            f"[… {errors} more lines with errors and {warnings} more with warnings "
            "are inside the elided ranges]"
        )

    # -- choosing what to keep
    def _head_end(self, budget: int) -> int:
        end = min(len(self.text), max(0, budget))
        while end > 0 and escaped_length(self.text[:end]) > budget:
            end -= max(1, escaped_length(self.text[:end]) - budget)
        return safe_end(self.text, end, 0)

    def _tail_start(self, budget: int, floor: int) -> int:
        n = len(self.text)
        start = max(floor, n - max(0, budget))
        while start < n and escaped_length(self.text[start:]) > budget:
            start += max(1, escaped_length(self.text[start:]) - budget)
        return safe_start(self.text, min(start, n), n)

    def _candidates(self, lo: int, hi: int) -> tuple[list[tuple[int, int]], set[int], set[int]]:
        """Important line ranges in ``[lo, hi)``, by priority; and the error/warning line starts."""
        text = self.text
        errors = _matching_lines(text, ERROR_RE, lo, hi, ERROR_HINT_RE)
        error_set = set(errors)
        warnings = [
            s
            for s in _matching_lines(text, WARNING_RE, lo, hi, WARNING_HINT_RE)
            if s not in error_set
        ]
        seen = error_set | set(warnings)
        idents = [
            s
            for s in _matching_lines(text, IDENTIFIER_RE, lo, min(hi, lo + IDENTIFIER_SCAN_CHARS))
            if s not in seen
        ][:MAX_CANDIDATE_LINES]
        ordered = (
            _interleave(errors)[:MAX_CANDIDATE_LINES]
            + _interleave(warnings)[:MAX_CANDIDATE_LINES]
            + idents
        )
        ranges = []
        shown_texts: set[str] = set()
        for line_start in ordered:
            span = self._clip_line(line_start, lo, hi)
            if span is None:
                continue
            body = text[span[0] : span[1]].rstrip("\n")
            if body in shown_texts:
                continue  # an identical line is already a candidate: its copies stay elided
            shown_texts.add(body)
            ranges.append(span)
        return ranges, error_set, set(warnings)

    def _clip_line(self, line_start: int, lo: int, hi: int) -> tuple[int, int] | None:
        text = self.text
        start, end = _line_span(text, line_start)
        start, end = max(start, lo), min(end, hi)
        if end - start > IMPORTANT_LINE_MAX_CHARS:
            found = ERROR_RE.search(text, start, end) or WARNING_RE.search(text, start, end)
            anchor = found.start() if found else start
            start = safe_start(text, max(start, anchor - IMPORTANT_LEAD_CHARS), anchor)
            end = safe_end(text, start + IMPORTANT_LINE_MAX_CHARS, start + 1)
        return (start, end) if end > start else None

    def _piece_cost(self, start: int, end: int) -> int:
        """What ``text[start:end]`` costs in the view: escaped, its final newline replaced by
        the one that joins it to the next line."""
        piece = self.text[start:end]
        return escaped_length(piece) - (1 if piece.endswith("\n") else 0) + 1

    def _gap_count(self, kept: list[tuple[int, int]]) -> int:
        return len(_gaps(kept, len(self.text)))

    def _choose(
        self, head_end: int, tail_start: int, candidates: list[tuple[int, int]]
    ) -> list[tuple[int, int]]:
        """Head, tail and as many important lines as fit, as sorted disjoint ranges.

        Costs are upper bounds (every marker priced at its longest), so the rendered view is
        never longer than the sum.
        """
        n = len(self.text)
        kept = [r for r in ((0, head_end), (tail_start, n)) if r[1] > r[0]]
        used = sum(self._piece_cost(s, e) for s, e in kept)
        used += self._gap_count(kept) * self.marker_cost
        for start, end in candidates:
            at = bisect_left(kept, (start, end))
            before = kept[at - 1] if at > 0 else None
            after = kept[at] if at < len(kept) else None
            if (before and before[1] > start) or (after and after[0] < end):
                continue  # overlaps a kept range
            touches = (before[1] == start if before else start == 0) + (
                after[0] == end if after else end == n
            )
            cost = self._piece_cost(start, end) + (1 - touches) * self.marker_cost
            if used + cost > self.content:
                continue
            used += cost
            kept.insert(at, (start, end))
        return _merge(kept)

    def _hidden(self, line_starts: set[int], kept: list[tuple[int, int]]) -> int:
        """How many of these lines are not wholly inside a kept range."""
        starts = [s for s, _ in kept]
        hidden = 0
        for line_start in line_starts:
            at = bisect_left(starts, line_start + 1) - 1
            line_end = _line_span(self.text, line_start)[1]
            if at < 0 or not (kept[at][0] <= line_start and line_end <= kept[at][1]):
                hidden += 1
        return hidden

    def _render(
        self, kept: list[tuple[int, int]], errors: set[int], warnings: set[int]
    ) -> OutputView:
        text, n = self.text, len(self.text)
        gaps = _gaps(kept, n)
        lines = _line_numbers(text, [p for s, e in gaps for p in (s, e - 1)])
        # A gap shorter than its own marker is shown instead: the view only gets shorter.
        small = [
            (s, e)
            for s, e in gaps
            if e - s < self.marker_cost
            and escaped_length(text[s:e]) <= len(self._marker(s, e, (lines[s], lines[e - 1])))
        ]
        if small:
            kept = _merge(kept + small)
            gaps = [g for g in gaps if g not in small]
        elisions = tuple(
            Elision(chars=e - s, start=s, end=e, lines=(lines[s], lines[e - 1])) for s, e in gaps
        )
        parts = [self.header]
        for start, end, is_kept in sorted(
            [(s, e, True) for s, e in kept] + [(s, e, False) for s, e in gaps]
        ):
            if is_kept:
                piece = escape_stored(text[start:end])
                parts.append(piece[:-1] if piece.endswith("\n") else piece)
            else:
                parts.append(self._marker(start, end, (lines[start], lines[end - 1])))
        hidden_errors, hidden_warnings = self._hidden(errors, kept), self._hidden(warnings, kept)
        if hidden_errors or hidden_warnings:
            parts.append(self._important_footer(hidden_errors, hidden_warnings))
        elided = sum(e.chars for e in elisions)
        if self.handle is None:
            parts.append(no_expand_line(elided))
        return OutputView("\n".join(parts), "lines", n, elided, elisions, self.handle is not None)

    def build(self) -> OutputView:
        """Choose within the budget, render, then grow the head and tail into what is left."""
        content = max(0, self.content)
        head_end = self._head_end(int(content * HEAD_SHARE) - 1)
        tail_start = self._tail_start(int(content * TAIL_SHARE) - 1, head_end)
        candidates, errors, warnings = self._candidates(head_end, tail_start)
        kept = self._choose(head_end, tail_start, candidates)
        view = self._render(kept, errors, warnings)
        extra = self.max_chars - len(view.text)
        for _ in range(GROW_ATTEMPTS):
            if extra <= 1:
                break
            grown = self._render(self._grow(kept, extra // 2), errors, warnings)
            if len(grown.text) <= self.max_chars:
                return grown
            extra = extra * 3 // 4
        return view

    def _grow(self, kept: list[tuple[int, int]], extra: int) -> list[tuple[int, int]]:
        """``kept`` with the head and the tail each grown by at most ``extra`` characters."""
        n = len(self.text)
        grown = list(kept)
        if grown and grown[0][0] == 0:
            grown[0] = (0, safe_end(self.text, grown[0][1] + extra, grown[0][1]))
        if grown and grown[-1][1] == n:
            start = grown[-1][0]
            grown[-1] = (min(start, safe_start(self.text, max(0, start - extra), start)), n)
        return _merge(grown)


def _gaps(kept: list[tuple[int, int]], n: int) -> list[tuple[int, int]]:
    """The elided ranges between sorted disjoint kept ranges of a text of length ``n``."""
    gaps = []
    pos = 0
    for start, end in kept:
        if start > pos:
            gaps.append((pos, start))
        pos = end
    if pos < n:
        gaps.append((pos, n))
    return gaps


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _line_numbers(text: str, positions: list[int]) -> dict[int, int]:
    """1-based line number of each position, counting newlines once over the text."""
    numbers: dict[int, int] = {}
    line, at = 1, 0
    for pos in sorted(set(positions)):
        line += text.count("\n", at, pos)
        at = pos
        numbers[pos] = line
    return numbers
