"""Claude Code records -> thread items (the mapping half of :mod:`.claude_code`).

:class:`ThreadBuilder` receives the kept records of one thread in file order, with the branch
forest that says which are superseded, and produces messages and compactions: it merges the
records of one API message, splits tool results out of user records, pairs a compaction
boundary with its summary, and turns events into machine events. The rules are listed in the
docstring of :mod:`recallbox.importers.claude_code`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recallbox.importers._branches import BranchForest
from recallbox.importers._claude_blocks import (
    AssistantDraft,
    CompactionDraft,
    add_assistant_content,
    attachment_text,
    block_text,
    plain_text,
)
from recallbox.importers._common import (
    FileReport,
    JsonObject,
    as_object,
    compact_metadata,
    join_parts,
    parse_timestamp,
    str_or_none,
    type_name,
)
from recallbox.importers.records import (
    KIND_MACHINE_EVENT,
    KIND_MESSAGE,
    ROLE_SYSTEM,
    ROLE_TOOL,
    ROLE_USER,
    ImportedMessage,
    ThreadItem,
)

SYNTHETIC_MODEL = "<synthetic>"
COMPACT_BOUNDARY = "compact_boundary"
QUEUED_COMMAND = "queued_command"
DEFAULT_BOUNDARY_TEXT = "Conversation compacted"
SPAWNED_AGENT_KEY = "_spawned_agent_id"
"""Where the scan keeps the ``agentId`` of a finished sub-agent from ``toolUseResult``."""


@dataclass(slots=True)
class Record:
    """A kept record: its line and its parsed object (``toolUseResult`` dropped)."""

    line: int
    data: JsonObject

    @property
    def uuid(self) -> str | None:
        return str_or_none(self.data.get("uuid"))


def is_boundary(data: JsonObject) -> bool:
    """Whether a record is a ``compact_boundary`` system record."""
    return type_name(data) == "system" and data.get("subtype") == COMPACT_BOUNDARY


def queued_prompt(attachment: JsonObject) -> str | None:
    """The prompt of a ``queued_command`` attachment (a message typed while the agent ran)."""
    prompt = attachment.get("prompt")
    if type_name(attachment) == QUEUED_COMMAND and isinstance(prompt, str):
        return prompt
    return None


_Draft = ThreadItem | AssistantDraft | CompactionDraft


def _line_start(item: _Draft) -> int:
    return item.line_start


class ThreadBuilder:
    """Turns the kept records of one thread, in file order, into thread items."""

    def __init__(
        self, source_file: str, forest: BranchForest, report: FileReport, *, extra: JsonObject
    ) -> None:
        self._source_file = source_file
        self._forest = forest
        self._report = report
        self._extra = extra
        self._items: list[_Draft] = []
        self._generation = 1
        self._drafts: dict[tuple[str, int, bool], AssistantDraft] = {}
        self._pending: CompactionDraft | None = None

    def finish(self) -> list[ThreadItem]:
        return [
            item.finish() if isinstance(item, AssistantDraft | CompactionDraft) else item
            for item in self._items
        ]

    @property
    def held_items(self) -> int:
        """How many items (finished or still open) the builder holds."""
        return len(self._items)

    def first_held_line(self) -> int | None:
        """The first source line of the items still held, or ``None``."""
        return min((_line_start(item) for item in self._items), default=None)

    def waiting_compaction_line(self) -> int | None:
        """The line of a compaction boundary still waiting for its summary record, if any."""
        pending = self._pending
        if pending is not None and pending.summary is None:
            return pending.line_start
        return None

    def drain(self, *, final: bool, before_line: int | None = None) -> list[ThreadItem]:
        """Remove and return the items that are complete, in thread order (streaming imports).

        An item is complete unless more records may still change it: the newest assistant
        message (further records of its API message may follow; ``final`` releases it) and a
        compaction boundary waiting for its summary (never released: the caller reads its
        lines again later). With ``before_line``, only items starting before that line leave.
        An assistant message released early and continued later comes out again as a second
        message with the same ``message_id``; the caller merges the two.
        """
        cut = len(self._items)
        for index, item in enumerate(self._items):
            if (before_line is not None and _line_start(item) >= before_line) or (
                isinstance(item, CompactionDraft) and item is self._pending and item.summary is None
            ):
                cut = index
                break
        if not final:
            for index in range(cut - 1, -1, -1):
                if isinstance(self._items[index], AssistantDraft):
                    cut = index
                    break
        taken, self._items = self._items[:cut], self._items[cut:]
        released = {id(item) for item in taken}
        self._drafts = {k: d for k, d in self._drafts.items() if id(d) not in released}
        return [
            item.finish() if isinstance(item, AssistantDraft | CompactionDraft) else item
            for item in taken
        ]

    def add(self, record: Record) -> None:
        superseded = self._forest.superseded(record.uuid)
        kind = type_name(record.data)
        if kind == "user":
            self._add_user(record, superseded)
        elif kind == "assistant":
            self._add_assistant(record, superseded)
        elif is_boundary(record.data):
            self._add_boundary(record, superseded)
        else:
            self._add_event(record, superseded)

    def _metadata(self, record: Record, **more: Any) -> JsonObject:
        data = record.data
        return compact_metadata(
            source_file=self._source_file,
            line_start=record.line,
            line_end=record.line,
            record_type=type_name(data),
            uuid=record.uuid,
            parent_uuid=str_or_none(data.get("parentUuid")),
            session_id=str_or_none(data.get("sessionId")),
            agent_id=str_or_none(data.get("agentId")),
            is_sidechain=True if data.get("isSidechain") else None,
            cwd=str_or_none(data.get("cwd")),
            git_branch=str_or_none(data.get("gitBranch")),
            version=str_or_none(data.get("version")),
            **self._extra,
            **more,
        )

    def _emit(
        self,
        record: Record,
        role: str,
        content: str,
        *,
        superseded: bool,
        kind: str = KIND_MESSAGE,
        model_visible: bool = True,
        tool_call_id: str | None = None,
        metadata: JsonObject | None = None,
    ) -> None:
        self._items.append(
            ImportedMessage(
                role=role,
                content=content,
                tool_calls=None,
                tool_call_id=tool_call_id,
                kind=kind,
                model_visible=model_visible,
                created_at=parse_timestamp(record.data.get("timestamp")),
                metadata=metadata if metadata is not None else self._metadata(record),
                superseded=superseded,
                line_start=record.line,
                line_end=record.line,
            )
        )
        if kind == KIND_MESSAGE and not superseded:
            self._pending = None

    def _add_user(self, record: Record, superseded: bool) -> None:
        data = record.data
        content = as_object(data.get("message")).get("content")
        if data.get("isCompactSummary"):
            self._add_compact_summary(record, plain_text(content, self._report), superseded)
        elif data.get("isMeta"):
            text = plain_text(content, self._report)
            self._emit(
                record,
                ROLE_USER,
                text,
                superseded=superseded,
                kind=KIND_MACHINE_EVENT,
                metadata=self._metadata(record, is_meta=True),
            )
        elif isinstance(content, str):
            self._emit(record, ROLE_USER, content, superseded=superseded)
        elif isinstance(content, list):
            self._add_user_blocks(record, content, superseded)
        else:
            self._report.skip(record.line, "user record without message content")

    def _add_user_blocks(self, record: Record, blocks: list[object], superseded: bool) -> None:
        """Text and images form user messages; each ``tool_result`` is a tool message."""
        parts: list[str] = []
        for block in blocks:
            if isinstance(block, dict) and type_name(block) == "tool_result":
                if parts:
                    self._emit(record, ROLE_USER, join_parts(parts), superseded=superseded)
                    parts = []
                self._add_tool_result(record, block, superseded)
            else:
                parts.append(block_text(block, self._report))
        if parts:
            self._emit(record, ROLE_USER, join_parts(parts), superseded=superseded)

    def _add_tool_result(self, record: Record, block: JsonObject, superseded: bool) -> None:
        is_error = block.get("is_error")
        metadata = self._metadata(
            record,
            is_error=is_error if isinstance(is_error, bool) else None,
            spawned_agent_id=record.data.get(SPAWNED_AGENT_KEY),
        )
        self._emit(
            record,
            ROLE_TOOL,
            plain_text(block.get("content"), self._report),
            superseded=superseded,
            tool_call_id=str_or_none(block.get("tool_use_id")),
            metadata=metadata,
        )

    def _add_assistant(self, record: Record, superseded: bool) -> None:
        data = record.data
        message = as_object(data.get("message"))
        message_id = str_or_none(message.get("id"))
        key = (message_id, self._generation, superseded) if message_id else None
        draft = self._drafts.get(key) if key else None
        if draft is None:
            synthetic = message.get("model") == SYNTHETIC_MODEL or bool(
                data.get("isApiErrorMessage")
            )
            draft = AssistantDraft(
                line_start=record.line,
                line_end=record.line,
                created_at=parse_timestamp(data.get("timestamp")),
                metadata=self._metadata(
                    record,
                    message_id=message_id,
                    request_id=str_or_none(data.get("requestId")),
                    model=str_or_none(message.get("model")),
                    is_api_error=True if data.get("isApiErrorMessage") else None,
                ),
                kind=KIND_MACHINE_EVENT if synthetic else KIND_MESSAGE,
                superseded=superseded,
            )
            self._items.append(draft)
            if key:
                self._drafts[key] = draft
        draft.line_end = record.line
        if record.uuid is not None:
            draft.uuids.append(record.uuid)
        if (stop_reason := str_or_none(message.get("stop_reason"))) is not None:
            draft.metadata["stop_reason"] = stop_reason
        add_assistant_content(draft, message.get("content"), self._report)
        if not superseded and draft.kind == KIND_MESSAGE:
            self._pending = None

    def _add_boundary(self, record: Record, superseded: bool) -> None:
        data = record.data
        if superseded:
            self._add_event(record, superseded)
            return
        draft = CompactionDraft(
            summary=None,
            created_at=parse_timestamp(data.get("timestamp")),
            metadata=compact_metadata(
                source_file=self._source_file,
                line_start=record.line,
                line_end=record.line,
                uuid=record.uuid,
                logical_parent_uuid=str_or_none(data.get("logicalParentUuid")),
                compact_metadata=data.get("compactMetadata"),
                session_id=str_or_none(data.get("sessionId")),
                **self._extra,
            ),
            line_start=record.line,
            line_end=record.line,
        )
        self._items.append(draft)
        self._generation += 1
        self._pending = draft

    def _add_compact_summary(self, record: Record, text: str, superseded: bool) -> None:
        if superseded:
            self._emit(
                record,
                ROLE_USER,
                text,
                superseded=True,
                kind=KIND_MACHINE_EVENT,
                model_visible=False,
                metadata=self._metadata(record, is_compact_summary=True),
            )
            return
        pending = self._pending
        if pending is not None and pending.summary is None:
            pending.summary = text
            pending.line_end = record.line
            pending.metadata["summary_uuid"] = record.uuid
        else:
            self._items.append(
                CompactionDraft(
                    summary=text,
                    created_at=parse_timestamp(record.data.get("timestamp")),
                    metadata=self._metadata(record, summary_uuid=record.uuid),
                    line_start=record.line,
                    line_end=record.line,
                )
            )
            self._generation += 1
        self._pending = None

    def _add_event(self, record: Record, superseded: bool) -> None:
        """System records, attachments and queue operations."""
        data = record.data
        kind = type_name(data)
        if kind == "attachment":
            attachment = as_object(data.get("attachment"))
            attachment_type = type_name(attachment)
            prompt = queued_prompt(attachment)
            metadata = self._metadata(record, attachment_type=attachment_type)
            if prompt is not None:
                self._emit(record, ROLE_USER, prompt, superseded=superseded, metadata=metadata)
            else:
                self._emit(
                    record,
                    ROLE_SYSTEM,
                    attachment_text(attachment),
                    superseded=superseded,
                    kind=KIND_MACHINE_EVENT,
                    model_visible=False,
                    metadata=metadata,
                )
            return
        role = ROLE_USER if kind == "queue-operation" else ROLE_SYSTEM
        content = data.get("content")
        default = DEFAULT_BOUNDARY_TEXT if is_boundary(data) else ""
        self._emit(
            record,
            role,
            content if isinstance(content, str) else default,
            superseded=superseded,
            kind=KIND_MACHINE_EVENT,
            model_visible=False,
            metadata=self._metadata(
                record,
                subtype=str_or_none(data.get("subtype")),
                level=str_or_none(data.get("level")),
                operation=str_or_none(data.get("operation")),
            ),
        )
