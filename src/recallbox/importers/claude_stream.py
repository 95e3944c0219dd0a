"""The streaming reader of Claude Code session files (the incremental face of
:mod:`recallbox.importers.claude_code`; the mapping rules are listed there).

Differences from reading a whole file, all forced by not holding the file in memory:

* Records are mapped as they arrive, all as live. Branches are resolved afterwards from the
  :class:`~recallbox.importers.stream.NodeIndex`: a tree whose newest conversational record
  does not continue the tree's previous line is reported by :meth:`dirty_trees`, and the caller
  recomputes which records of that tree are superseded.
* A compaction opens its generation when it is read. A later rewind past it supersedes the
  compaction summary and the messages after it, but the rewound branch continues in the new
  generation (generations are never closed again).
* The session thread is ``claude-code:<sessionId>`` of the file's first record naming one
  (the file stem when none does); later other ids are remembered in the state and reported.
* Record keys: a message takes the uuid of its record (``<uuid>/<n>`` for the n-th further
  message of one record, e.g. tool results); an assistant message takes ``msg:<message id>`` so
  its records merge even across two syncs; records without uuid take the hash of their line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallbox.importers._branches import BranchForest
from recallbox.importers._claude_items import Record, ThreadBuilder
from recallbox.importers._common import (
    FileReport,
    JsonObject,
    note_other_id,
    str_or_none,
    type_name,
)
from recallbox.importers.claude_code import (
    AGENT_FILE_PREFIX,
    EVENT_TYPES,
    MESSAGE_TYPES,
    SUBAGENTS_DIR,
    TITLE_TYPES,
    _channel,
    _drop_tool_use_result,
    _is_conversational,
    _parent_of,
    _sidechain_suffix,
    _unknown_key,
)
from recallbox.importers.records import FORMAT_CLAUDE_CODE, ThreadItem
from recallbox.importers.stream import NodeIndex, Output, SourceLine
from recallbox.storage.base import ImportNode

DRAIN_ITEMS = 64
"""A thread's builder is drained once it holds this many items (bounds memory per thread)."""
MERGE_KEY_PREFIX = "msg:"
ANCESTOR_WALK_LIMIT = 10_000
"""How far up a chain of non-conversational records the branch check looks."""


class _NeverSuperseded(BranchForest):
    """Records are mapped as live; branch status is resolved later from the node index."""

    def superseded(self, uuid: str | None) -> bool:
        return False


@dataclass(slots=True)
class _Thread:
    channel: str
    parent_channel: str | None
    builder: ThreadBuilder
    keys: dict[int, str] = field(default_factory=dict)  # line -> key of that line's record
    nodes: dict[int, str] = field(default_factory=dict)  # line -> uuid of that line's record


class ClaudeCodeReader:
    """Reads one Claude Code file (a session, or a sub-agent file) incrementally."""

    def __init__(
        self,
        path: Path,
        *,
        nodes: NodeIndex,
        state: dict[str, Any] | None = None,
        parent_session: str | None = None,
    ) -> None:
        self.path = path
        self.report = FileReport()
        self._nodes = nodes
        self._state: dict[str, Any] = dict(state or {})
        self._agent_file = path.name.startswith(AGENT_FILE_PREFIX)
        if parent_session is not None:
            self._state.setdefault("parent_session", parent_session)
        self._threads: dict[str, _Thread] = {}
        self._last_conv: dict[tuple[str, bool], str | None] = {}
        self._dirty: set[tuple[str, bool]] = set()
        self._trees: set[tuple[str, bool]] = set()
        self._hold: int | None = None

    # -- identity ------------------------------------------------------------------------
    def _session_id(self) -> str | None:
        if not self._agent_file:
            # DESIGN §2: a transcript's session id is a thread key; a copy of the file under
            # another name is the same session. The file stem only when no record names one.
            return self._state.get("session_id") or self.path.stem
        found: str | None = (
            self._state.get("parent_session")
            or self._state.get("session_id")
            or (self.path.parent.parent.name if self.path.parent.name == SUBAGENTS_DIR else None)
        )
        return found

    def _main_channel(self) -> tuple[str, str | None]:
        session_id = self._session_id()
        if not self._agent_file:
            return f"{FORMAT_CLAUDE_CODE}:{session_id}", None
        agent_id = self._state.get("agent_id") or self.path.stem.removeprefix(AGENT_FILE_PREFIX)
        if session_id:
            parent = f"{FORMAT_CLAUDE_CODE}:{session_id}"
            return f"{parent}/agent-{agent_id}", parent
        return f"{FORMAT_CLAUDE_CODE}:{self.path.stem}", None

    def _thread(self, channel: str, parent: str | None, extra: JsonObject) -> _Thread:
        thread = self._threads.get(channel)
        if thread is None:
            builder = ThreadBuilder(str(self.path), _NeverSuperseded(), self.report, extra=extra)
            thread = _Thread(channel=channel, parent_channel=parent, builder=builder)
            self._threads[channel] = thread
        return thread

    def _route(self, data: JsonObject, side: bool, root: str | None) -> _Thread:
        session_id = self._session_id()
        extra = {"parent_session_id": session_id} if session_id and self._agent_file else {}
        if not side:
            channel, parent = self._state.get("channel"), self._state.get("parent_channel")
            if channel is None:
                channel, parent = self._main_channel()
                self._state["channel"], self._state["parent_channel"] = channel, parent
            return self._thread(channel, parent, extra)
        suffix = _sidechain_suffix(str_or_none(data.get("agentId")), root)
        main = str(session_id)  # as the channel has always spelled it, ``None`` included
        return self._thread(
            _channel(main, suffix), _channel(main), {"parent_session_id": session_id}
        )

    # -- records -------------------------------------------------------------------------
    def feed(self, line: SourceLine, data: dict[str, Any]) -> None:
        kind = type_name(data)
        session_id = str_or_none(data.get("sessionId"))
        if self._state.get("session_id") is None:
            self._state["session_id"] = session_id
        elif not self._agent_file:
            note_other_id(self._state, self._state.get("session_id"), session_id)
        if self._state.get("agent_id") is None:
            self._state["agent_id"] = str_or_none(data.get("agentId"))
        if kind in TITLE_TYPES:
            self._take_title(data)
            return
        uuid = str_or_none(data.get("uuid"))
        side = bool(data.get("isSidechain")) and not self._agent_file
        root: str | None = None
        if uuid is not None:
            known = self._nodes.get(uuid)
            if known is not None and known.line != line.number:
                self.report.skip(line.number, f"duplicate uuid {uuid} (first on line {known.line})")
                return
            root = known.root if known is not None else self._add_node(uuid, data, side, line)
        if kind in MESSAGE_TYPES or kind in EVENT_TYPES:
            _drop_tool_use_result(data)
            thread = self._route(data, side, root)
            message = data.get("message")
            message_id = (
                str_or_none(message.get("id"))
                if kind == "assistant" and isinstance(message, dict)
                else None
            )
            if message_id is not None:
                thread.keys[line.number] = MERGE_KEY_PREFIX + message_id
            else:
                thread.keys[line.number] = uuid if uuid is not None else line.key()
            if uuid is not None:
                thread.nodes[line.number] = uuid
            thread.builder.add(Record(line.number, data))
        if (key := _unknown_key(data)) is not None:
            self.report.count(key)

    def _add_node(self, uuid: str, data: JsonObject, side: bool, line: SourceLine) -> str:
        """Add a node to the index; note its tree when the live branch may have moved."""
        parent = _parent_of(data)
        conversational = _is_conversational(data)
        parent_node = self._nodes.get(parent) if parent is not None else None
        if parent_node is not None and parent_node.side != side:
            parent_node = None
        root = parent_node.root if parent_node is not None else uuid
        tree = (root, side)
        self._trees.add(tree)
        if conversational:
            if tree not in self._last_conv:
                self._last_conv[tree] = self._nodes.last_conversational(root, side)
            previous = self._last_conv[tree]
            if previous is not None and self._conversational_ancestor(parent_node) != previous:
                self._dirty.add(tree)
            self._last_conv[tree] = uuid
        elif parent_node is not None and parent_node.superseded:
            self._dirty.add(tree)  # a note hanging off an abandoned branch is abandoned too
        self._nodes.add(
            ImportNode(
                uuid=uuid,
                parent=parent,
                root=root,
                side=side,
                conversational=conversational,
                line=line.number,
            )
        )
        return root

    def _conversational_ancestor(self, node: ImportNode | None) -> str | None:
        steps = 0
        while node is not None and not node.conversational and steps < ANCESTOR_WALK_LIMIT:
            steps += 1
            parent = self._nodes.get(node.parent) if node.parent is not None else None
            node = parent if parent is not None and parent.side == node.side else None
        return node.uuid if node is not None else None

    # -- output --------------------------------------------------------------------------
    def drain(self, *, final: bool) -> list[Output]:
        waiting = [
            line
            for thread in self._threads.values()
            if (line := thread.builder.waiting_compaction_line()) is not None
        ]
        before = min(waiting) if waiting else None
        out: list[Output] = []
        for thread in self._threads.values():
            if not final and thread.builder.held_items < DRAIN_ITEMS:
                continue
            parts: dict[str, int] = {}
            drained = thread.builder.drain(final=final, before_line=before)
            out.extend(self._output(thread, item, parts) for item in drained)
            keep_from = thread.builder.first_held_line()
            if keep_from is None:
                thread.keys.clear()
                thread.nodes.clear()
            else:
                thread.keys = {n: k for n, k in thread.keys.items() if n >= keep_from}
                thread.nodes = {n: u for n, u in thread.nodes.items() if n >= keep_from}
        if final:
            self._hold = before
            self._threads = {}
        return out

    def _output(self, thread: _Thread, item: ThreadItem, parts: dict[str, int]) -> Output:
        line = item.line_start
        key = thread.keys.get(line) or f"line@{line}"
        merge = key.startswith(MERGE_KEY_PREFIX)
        if not merge:
            count = parts.get(key, 0)
            parts[key] = count + 1
            if count:
                key = f"{key}/{count}"
        return Output(
            channel=thread.channel,
            item=item,
            key=key,
            parent_channel=thread.parent_channel,
            node=thread.nodes.get(line),
            merge=merge,
        )

    def hold_line(self) -> int | None:
        return self._hold

    def dirty_trees(self, *, full: bool = False) -> set[tuple[str, bool]]:
        return set(self._trees if full else self._dirty)

    # -- titles --------------------------------------------------------------------------
    def _take_title(self, data: JsonObject) -> None:
        titles = self._state.setdefault("titles", {})
        kind = type_name(data)
        if kind == "custom-title":
            titles["custom"] = str_or_none(data.get("customTitle")) or titles.get("custom")
        elif kind == "ai-title":
            titles["ai"] = str_or_none(data.get("aiTitle")) or titles.get("ai")
        elif (text := str_or_none(data.get("summary"))) is not None:
            titles.setdefault("summaries", []).append([str_or_none(data.get("leafUuid")), text])

    def titles(self, is_live: Any) -> dict[str, str | None]:
        """The main thread's title by the precedence of :mod:`.claude_code` (custom, AI, the
        summary of a live leaf, the last summary); ``{}`` when the file names none."""
        titles = self._state.get("titles") or {}
        channel = self._state.get("channel") or self._main_channel()[0]
        if titles.get("custom") or titles.get("ai"):
            return {channel: titles.get("custom") or titles.get("ai")}
        summaries = titles.get("summaries") or []
        live = [text for leaf, text in summaries if leaf is not None and is_live(leaf)]
        if live:
            return {channel: live[-1]}
        return {channel: summaries[-1][1]} if summaries else {}

    def state(self) -> dict[str, Any]:
        return dict(self._state)
