"""Threads, one thread's generations and messages, one message: each route parses, calls the
Box, renders.

These are person-facing renderings (DESIGN §5): they use the audit verbs (``threads``,
``generations``, ``messages``, ``message``) for metadata, and show a message's text only when
the thread is not denied; a denied thread shows its metadata and "quarantined — N messages
hidden" (or "excluded source"), never its text. A message's full text comes only from the
gated read, ``box.message_page`` (the one agents page with).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from recallbox import Generation, GenerationSpan, NotFound, ThreadTimeline
from recallbox.web.adapters import EXCLUDED, QUARANTINED, thread_denial, threads_by_activity
from recallbox.web.params import Pager, int_param, paginate
from recallbox.web.render import inspector, json_tree

#: Threads per page of the index.
THREADS_PAGE_SIZE = 50
#: Messages per page of one generation.
MESSAGES_PAGE_SIZE = 50
#: How much of a compaction summary the timeline shows (its message has the rest).
SUMMARY_MAX_CHARS = 4_000
#: The heading the engine gives the resource directory it appends to a compaction summary
#: (then the one releases before #17 wrote, still in their databases).
DIRECTORY_HEADINGS = ("## Resources used in generation ", "## 10. Resources used in generation ")


def healthz(request: Request) -> Response:
    """``ok`` (liveness; behind the same Host and token checks as every page)."""
    return PlainTextResponse("ok")


def index(request: Request) -> Response:
    """Threads by last activity, with the excluded sources."""
    app = inspector(request)
    pager = paginate(
        threads_by_activity(app.box.threads()),
        int_param(request, "page", 1, 1),
        THREADS_PAGE_SIZE,
    )
    return app.page("index.html", pager=pager, policy=app.box.policy(), nav="threads")


@dataclass(frozen=True, slots=True)
class GenerationRow:
    """One generation on the timeline; ``summary``/``directory`` are ``None`` when denied."""

    generation: Generation
    count: int
    first_at: datetime | None
    last_at: datetime | None
    summary_id: str | None
    summary: str | None
    directory: str | None
    summary_clipped: bool


def split_summary(text: str) -> tuple[str, str | None]:
    """A compaction summary's own text and the resource directory the engine appended."""
    for heading in DIRECTORY_HEADINGS:
        at = text.rfind("\n" + heading)
        if at >= 0:
            return text[:at].rstrip(), text[at + 1 :]
        if text.startswith(heading):
            return "", text
    return text, None


def _generation_row(span: GenerationSpan, shown: bool) -> GenerationRow:
    summary = directory = None
    clipped = False
    if span.summary_id is not None and span.summary_head is not None and shown:
        clipped = span.summary_chars > SUMMARY_MAX_CHARS
        summary, directory = split_summary(span.summary_head[:SUMMARY_MAX_CHARS])
    return GenerationRow(
        generation=span.generation,
        count=span.message_count,
        first_at=span.first_at,
        last_at=span.last_at,
        summary_id=span.summary_id,
        summary=summary,
        directory=directory,
        summary_clipped=clipped,
    )


def _probe(timeline: ThreadTimeline) -> str | None:
    """A message id of the thread for the denial check: one on the page, or a summary."""
    if timeline.messages:
        return timeline.messages[0].id
    return next((s.summary_id for s in timeline.spans if s.summary_id is not None), None)


def thread(request: Request) -> Response:
    """One thread: a window of its generations as a timeline, one generation's messages paged
    (``box.thread_timeline``: counts and spans from the store, only this page's messages)."""
    app = inspector(request)
    timeline = app.box.thread_timeline(
        request.path_params["channel"],
        int_param(request, "generation", 0, 1) or None,
        int_param(request, "page", 1, 1),
        page_size=MESSAGES_PAGE_SIZE,
        head_chars=SUMMARY_MAX_CHARS + 1,
    )
    denial = thread_denial(app.box, timeline.thread, _probe(timeline))
    rows = [_generation_row(span, denial is None) for span in timeline.spans]
    count = timeline.selected_span.message_count
    pager = Pager(timeline.messages, timeline.page, timeline.pages, count, timeline.page_size)
    return app.page(
        "thread.html",
        thread=timeline.thread,
        timeline=timeline,
        rows=rows,
        selected=timeline.selected,
        pager=pager,
        denial=denial,
        nav="threads",
    )


def message(request: Request) -> Response:
    """One message: its metadata, tool-call arguments as trees, its audit text paged."""
    app = inspector(request)
    message_id = request.path_params["message_id"]
    offset = int_param(request, "offset", 0, 0)
    found = app.box.message(message_id)
    owner = app.box.thread(found.channel)
    try:
        if owner.quarantined:
            raise NotFound(QUARANTINED)
        text = app.box.message_page(message_id, offset=offset)
    except NotFound:  # the gated read refuses what the audit verb found: a denied thread
        denial = QUARANTINED if owner.quarantined else EXCLUDED
        return app.page("message.html", message=found, thread=owner, denial=denial, nav="threads")
    previous = None
    if offset > 0:
        step = text.next_offset - offset if text.next_offset is not None else None
        if step is None:  # the last page: a full page's length is where page 2 starts
            step = app.box.message_page(message_id).next_offset or offset
        previous = max(0, offset - step)
    trees = [
        (call, json_tree(call.get("arguments"), "arguments")) for call in found.tool_calls or []
    ]
    return app.page(
        "message.html",
        message=found,
        thread=owner,
        denial=None,
        text=text,
        previous=previous,
        trees=trees,
        metadata=json_tree(found.metadata, "metadata") if found.metadata else None,
        nav="threads",
    )
