"""``/search``: the ``search_memory`` result beside ranked hits with each leg's score.

Both come from agent-facing verbs, so the privacy gate has already applied: a denied thread or
source contributes nothing, exactly as for an agent. The ``search_memory`` text is shown as the
verb returns it, cut into its hit blocks only to link each block to its message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from anyio import create_task_group, to_thread
from starlette.requests import Request
from starlette.responses import Response

from recallbox import Hit, InvalidArgument
from recallbox.web.adapters import HitScores, hit_scores
from recallbox.web.params import text_param
from recallbox.web.render import inspector

#: The ``recall`` budget of the page (its buckets are shown hit by hit, each with its legs).
RECALL_BUDGET_CHARS = 12_000
#: A hit block's metadata line in a ``search_memory`` result (DESIGN §3.2).
BLOCK_HEADER_RE = re.compile(r"^\[message_id=(?P<id>[^\s\]]+)(?P<meta>[^\n]*)\]$")
#: Lines of the verb's own that end a hit block (stored text starting so is escaped, §3.5).
OWN_LINE_PREFIXES: tuple[str, ...] = (
    "The following is",
    "--- ",
    "Expand any hit",
    "Continue with ",
)
NOTICE_RE = re.compile(r"^(At least )?\d+\+? more hits not shown; narrow the query to see them\.$")
FOOTER = "Expand any hit with read_message(message_id)."


@dataclass(slots=True)
class Part:
    """A piece of the ``search_memory`` text: a hit block (``message_id`` set) or a line of
    the verb's own (header, notice, footer, separator)."""

    text: str
    message_id: str | None = None
    meta: str = ""
    lines: list[str] = field(default_factory=list)


def parse_search_memory(result: str) -> list[Part]:
    """``result`` cut into its parts, in order; joined back they give the same lines."""
    lines = result.split("\n")
    notices = _notice_lines(lines)
    parts: list[Part] = []
    block: Part | None = None
    for number, line in enumerate(lines):
        header = BLOCK_HEADER_RE.match(line)
        if header is not None:
            block = Part(line, header.group("id"), header.group("meta").strip())
            parts.append(block)
        elif block is not None and number not in notices and not line.startswith(OWN_LINE_PREFIXES):
            block.lines.append(line)
        else:
            block = None
            if line:
                parts.append(Part(line))
    for part in parts:
        while part.lines and not part.lines[-1]:
            part.lines.pop()
    return parts


def _notice_lines(lines: list[str]) -> set[int]:
    """The line numbers of "N more hits not shown" notices: the last non-empty line before a
    footer (a stored line reading like a notice elsewhere stays in its window)."""
    found = set()
    for number, line in enumerate(lines):
        if line != FOOTER:
            continue
        before = number - 1
        while before >= 0 and not lines[before]:
            before -= 1
        if before >= 0 and NOTICE_RE.match(lines[before]):
            found.add(before)
    return found


@dataclass(frozen=True, slots=True)
class RankedHit:
    """One ranked hit with its legs and the message it opens (``None``: none to open)."""

    hit: Hit
    scores: HitScores
    message_id: str | None


@dataclass(frozen=True, slots=True)
class RankedSection:
    """One ``recall`` bucket: its domain, the layer that answered, its hits (or its error)."""

    domain: str
    hits: list[RankedHit]
    error: str | None = None
    layer: str = ""


def ranked_sections(request: Request, query: str, channel: str | None) -> list[RankedSection]:
    """``box.recall`` over every domain (keyword legs plus stored vectors, no embedding
    call), one section per bucket in the verb's order; ``channel`` narrows the sessions bucket's
    hits to that thread (recall itself has no channel filter)."""
    box = inspector(request).box
    try:
        result = box.recall(query, budget_chars=RECALL_BUDGET_CHARS, allow_embed=False)
    except InvalidArgument as exc:
        return [RankedSection("recall", [], str(exc))]
    sections = []
    for bucket in result.buckets.values():
        hits = [h for h in bucket.hits if channel is None or h.channel in (None, channel)]
        ranked = [RankedHit(h, hit_scores(h), h.best_message_id) for h in hits]
        sections.append(RankedSection(bucket.domain, ranked, bucket.error, bucket.layer))
    return sections


async def search(request: Request) -> Response:
    """The search page: the form, and for a query both results side by side (the two verbs
    run at once, each in a worker thread: the page takes the slower one, not the sum)."""
    app = inspector(request)
    query = text_param(request, "q")
    channel = text_param(request, "channel").strip() or None
    parts: list[Part] | None = None
    sections: list[RankedSection] | None = None
    if query.strip():
        literal: list[str] = []
        ranked: list[list[RankedSection]] = []

        async def run_literal() -> None:
            literal.append(await to_thread.run_sync(app.box.search_memory, query, channel))

        async def run_ranked() -> None:
            ranked.append(await to_thread.run_sync(ranked_sections, request, query, channel))

        try:
            async with create_task_group() as group:
                group.start_soon(run_literal)
                group.start_soon(run_ranked)
        except BaseExceptionGroup as failed:  # answer as the failing verb alone would
            raise failed.exceptions[0] from None
        parts, sections = parse_search_memory(literal[0]), ranked[0]
    return app.page(
        "search.html",
        query=query,
        channel=channel or "",
        parts=parts,
        sections=sections,
        nav="search",
    )
