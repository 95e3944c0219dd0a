"""Rendering the sessions bucket of ``recall()`` (DESIGN §4.5, §5).

``box.search(domain="sessions")`` returns a flat list of message hits, best first; this module
turns them into the bucket text:

* hits are grouped by thread, the thread of the best hit first (a thread's place is its best
  hit's rank, so the order is stable when the hit list is cut by a row limit);
* each group shows its hits with up to :data:`SESSIONS_WINDOW_RADIUS` searchable messages
  before and after each, within the hit's episode (a window stops at a ``created_at`` gap over
  ``EPISODE_GAP``: the messages of another sitting are not the hit's context; #21; windows of
  one thread merge; a window never crosses into another thread and never shows a pending or
  excluded message: the store serves only searchable, allowed messages);
* every item starts with a line of its own (DESIGN §5 "Render format"): a hit's
  ``[message_id=… channel="…" date=… role=… rank=N follow-up=read_message(…)]``, a
  neighbour's ``[message_id=… date=… role=… context]``; then its excerpt, stored text escaped
  (DESIGN §3.5) so no stored line passes for one of ours;
* every excerpt is at most :data:`EXCERPT_CHARS` characters, ``…`` included (escapes aside): a
  hit shows the text around its match, a neighbour its beginning, and every cut ends (or
  starts) with ``…``, at a sentence end when one is near;
* the whole text stays within ``budget_chars``: all hits first (best first), then neighbours,
  nearest first, thread by thread in order; hits that did not fit are counted in a last line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from recallbox.domains.buckets import more_hits_notice
from recallbox.ranking.episodes import EPISODE_GAP
from recallbox.storage.base import EVERYTHING, SearchFilter
from recallbox.text.render import escape_stored, one_line
from recallbox.text.windows import ELLIPSIS, WINDOW_CHARS
from recallbox.types import Message, Thread

SESSIONS_WINDOW_RADIUS = 10
EXCERPT_CHARS = WINDOW_CHARS
"""Longest excerpt of one item, the ``…`` markers included (DESIGN §5)."""
CONTEXT_EXCERPT_CHARS = 240
"""Longest excerpt of a neighbour of a hit (the hit itself gets :data:`EXCERPT_CHARS`)."""
SENTENCE_ENDS = (". ", "! ", "? ", ".\n", "!\n", "?\n", "\n", "。", "！", "？")
MIN_CUT_FRACTION = 0.5
"""A cut moves back to a sentence end (or a space) only as far as this fraction of the limit."""
CHANNEL_MAX_CHARS = 120
"""A channel or title echoed in a line of ours is cut to this many characters."""


class SessionWindowStore(Protocol):
    """The reads behind the sessions bucket (``recallbox.storage.base.ThreadStore``'s)."""

    def session_window(
        self, message_id: str, radius: int, *, where: SearchFilter
    ) -> list[Message]: ...

    def get_thread(self, channel: str) -> Thread | None: ...


class RankedHit(Protocol):
    """What the renderer reads of a ``recallbox.types.Hit``."""

    @property
    def id(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def channel(self) -> str | None: ...


def cut_excerpt(text: str, limit: int) -> str:
    """``text`` when it fits in ``limit`` characters, else its beginning, cut at a sentence
    end (or a space) near the limit, followed by ``…``; the result is at most ``limit`` long."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(ELLIPSIS))
    return text[: _cut_point(text, room)].rstrip() + ELLIPSIS


def _cut_point(text: str, room: int) -> int:
    floor = int(room * MIN_CUT_FRACTION)
    best = max((text.rfind(mark, floor, room) + len(mark) for mark in SENTENCE_ENDS), default=-1)
    if best > floor:
        return best
    space = text.rfind(" ", floor, room)
    return space if space > floor else room


def hit_excerpt(content: str, around: str, limit: int = EXCERPT_CHARS) -> str:
    """The part of ``content`` that ``around`` (the hit's text near its match) shows, with
    ``…`` on each cut side, within ``limit``; the beginning of ``content`` when ``around`` is
    not a verbatim part of it."""
    core = around.strip().strip(ELLIPSIS).strip()
    start = content.find(core) if core else -1
    if start < 0:
        return cut_excerpt(content, limit)
    end = start + len(core)
    prefix = ELLIPSIS if start > 0 else ""
    room = limit - len(prefix) - (len(ELLIPSIS) if end < len(content) else 0)
    if end - start > room:
        end = start + _cut_point(content[start:], room)
    suffix = ELLIPSIS if end < len(content) else ""
    return prefix + content[start:end].rstrip() + suffix


def _item_text(message: Message) -> str:
    """A message's text as an item shows it: its content, then its tool calls."""
    parts = [message.content] if message.content else []
    parts.extend(
        f"→ {call.get('name')} {json.dumps(call.get('arguments'), ensure_ascii=False)}"
        for call in message.tool_calls or ()
    )
    return "\n".join(parts)


@dataclass(slots=True)
class _Item:
    message: Message
    text: str
    is_hit: bool
    rank: int  # hit rank, or distance to the nearest hit for a neighbour
    line: str = ""


@dataclass(slots=True)
class _Group:
    channel: str
    title: str | None
    items: dict[str, _Item] = field(default_factory=dict)
    chosen: set[str] = field(default_factory=set)

    def header(self) -> str:
        title = f" — {one_line(self.title, CHANNEL_MAX_CHARS)}" if self.title else ""
        return f"thread {_quoted(self.channel)}{title}"


def _groups(
    store: SessionWindowStore, hits: Sequence[RankedHit], radius: int, where: SearchFilter
) -> list[_Group]:
    groups: dict[str, _Group] = {}
    for rank, hit in enumerate(hits):
        window = store.session_window(hit.id, radius, where=where)
        if not window:
            continue  # not searchable (or denied): nothing of it is shown
        channel = window[0].channel
        group = groups.get(channel)
        if group is None:
            thread = store.get_thread(channel)
            group = groups[channel] = _Group(channel, thread.title if thread else None)
        position = next(i for i, m in enumerate(window) if m.id == hit.id)
        window, position = _within_episode(window, position)
        for index, message in enumerate(window):
            distance = abs(index - position)
            existing = group.items.get(message.id)
            if message.id == hit.id:
                text = hit_excerpt(_item_text(message), hit.text)
                group.items[message.id] = _Item(message, text, True, rank)
            elif existing is None or (not existing.is_hit and distance < existing.rank):
                text = cut_excerpt(_item_text(message), CONTEXT_EXCERPT_CHARS)
                group.items[message.id] = _Item(message, text, False, distance)
    return list(groups.values())


def _close(a: Message, b: Message) -> bool:
    try:
        return abs(a.created_at - b.created_at) <= EPISODE_GAP
    except TypeError:  # naive vs aware: not known to be close
        return False


def _within_episode(window: list[Message], position: int) -> tuple[list[Message], int]:
    """The part of ``window`` (in ``seq`` order, the hit at ``position``) in the hit's episode:
    it stops at the first gap over ``EPISODE_GAP`` on each side."""
    first = position
    while first > 0 and _close(window[first - 1], window[first]):
        first -= 1
    last = position
    while last + 1 < len(window) and _close(window[last], window[last + 1]):
        last += 1
    return window[first : last + 1], position - first


def _quoted(channel: str) -> str:
    return json.dumps(one_line(channel, CHANNEL_MAX_CHARS), ensure_ascii=False)


def _line(item: _Item) -> str:
    """An item: its head line, then its excerpt (escaped)."""
    m = item.message
    date = m.created_at.date().isoformat()
    if item.is_hit:
        head = (
            f"[message_id={m.id} channel={_quoted(m.channel)} date={date} role={m.role} "
            f"rank={item.rank + 1} follow-up=read_message({m.id})]"
        )
    else:
        head = f"[message_id={m.id} date={date} role={m.role} context]"
    return f"{head}\n{escape_stored(item.text)}" if item.text else head


def render_sessions_bucket(
    store: SessionWindowStore,
    hits: Sequence[RankedHit],
    budget_chars: int,
    *,
    radius: int = SESSIONS_WINDOW_RADIUS,
    where: SearchFilter = EVERYTHING,
) -> str:
    """The sessions bucket text for ``hits`` (best first), at most ``budget_chars`` long.

    ``""`` when nothing can be shown (no hits, or none visible). ``where`` narrows the windows
    as it narrowed the search.
    """
    groups = _groups(store, hits, radius, where)
    used = 0

    def take(group: _Group, item: _Item) -> bool:
        nonlocal used
        cost = len(_line(item)) + 1 + (0 if group.chosen else len(group.header()) + 2)
        if used + cost > budget_chars:
            return False
        used += cost
        group.chosen.add(item.message.id)
        return True

    hit_items = sorted(
        ((g, i) for g in groups for i in g.items.values() if i.is_hit), key=lambda p: p[1].rank
    )
    reserve = len(more_hits_notice(len(hit_items))) + 1  # room for the notice, should a hit not fit
    used += reserve
    left_out = sum(not take(group, item) for group, item in hit_items)
    if not left_out:
        used -= reserve
    for group in groups:
        if not group.chosen:
            continue
        neighbours = sorted(
            (i for i in group.items.values() if not i.is_hit),
            key=lambda i: (i.rank, i.message.seq),
        )
        for item in neighbours:
            take(group, item)
    blocks = []
    for group in groups:
        if group.chosen:
            chosen = [i for i in group.items.values() if i.message.id in group.chosen]
            chosen.sort(key=lambda i: i.message.seq)
            blocks.append("\n".join([group.header(), *(_line(i) for i in chosen)]))
    text = "\n\n".join(blocks)
    if left_out:
        text = (text + "\n" if text else "") + more_hits_notice(left_out)
    return text
