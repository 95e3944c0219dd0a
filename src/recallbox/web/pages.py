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

from recallbox import Generation, Message, NotFound
from recallbox.web.adapters import EXCLUDED, QUARANTINED, thread_denial, threads_by_activity
from recallbox.web.params import int_param, paginate
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


def _generation_row(generation: Generation, messages: list[Message], shown: bool) -> GenerationRow:
    first = messages[0] if messages else None
    summary_message = first if first is not None and first.kind == "compaction_summary" else None
    summary = directory = None
    clipped = False
    if summary_message is not None and shown:
        text = summary_message.content
        clipped = len(text) > SUMMARY_MAX_CHARS
        summary, directory = split_summary(text[:SUMMARY_MAX_CHARS])
    return GenerationRow(
        generation=generation,
        count=len(messages),
        first_at=min((m.created_at for m in messages), default=None),
        last_at=max((m.created_at for m in messages), default=None),
        summary_id=summary_message.id if summary_message is not None else None,
        summary=summary,
        directory=directory,
        summary_clipped=clipped,
    )


def thread(request: Request) -> Response:
    """One thread: its generations as a timeline, one generation's messages paged."""
    app = inspector(request)
    channel = request.path_params["channel"]
    found = app.box.thread(channel)
    generations = app.box.generations(channel)
    # The audit verb returns the whole thread: the timeline needs every generation's count and
    # span, which no bounded verb gives yet (see the README's inspector notes).
    messages = app.box.messages(channel)
    by_number: dict[int, list[Message]] = {g.number: [] for g in generations}
    for message in messages:
        by_number.setdefault(message.generation, []).append(message)
    denial = thread_denial(app.box, found, messages[0] if messages else None)
    rows = [_generation_row(g, by_number[g.number], denial is None) for g in generations]
    selected = int_param(request, "generation", generations[-1].number, 1)
    if selected not in by_number:
        raise NotFound(f"thread {channel!r} has no generation {selected}")
    pager = paginate(by_number[selected], int_param(request, "page", 1, 1), MESSAGES_PAGE_SIZE)
    return app.page(
        "thread.html",
        thread=found,
        rows=rows,
        selected=selected,
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
