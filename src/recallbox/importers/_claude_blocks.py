"""Claude Code content blocks and the drafts of merged items (a part of :mod:`._claude_items`).

A draft is an item being assembled from several records: an assistant message from the records
that share its ``message.id``, a compaction from its boundary and its summary record. Content
blocks become text (images, documents and unknown blocks become placeholders, counted).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from recallbox.importers._common import (
    NO_TYPE,
    FileReport,
    JsonObject,
    as_object,
    join_parts,
    placeholder,
    str_or_none,
    type_name,
)
from recallbox.importers.records import (
    KIND_MESSAGE,
    ROLE_ASSISTANT,
    Compaction,
    ImportedMessage,
)

TOOL_USE_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
MEDIA_BLOCKS = frozenset({"image", "document"})


@dataclass(slots=True)
class AssistantDraft:
    """An assistant message being merged from the records that share its ``message.id``."""

    line_start: int
    line_end: int
    created_at: datetime | None
    metadata: JsonObject
    kind: str
    superseded: bool
    texts: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    redacted_thinking: int = 0
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    uuids: list[str] = field(default_factory=list)

    def finish(self) -> ImportedMessage:
        metadata = dict(self.metadata, line_end=self.line_end)
        if len(self.uuids) > 1:
            metadata["uuids"] = self.uuids
        if self.thinking:
            metadata["thinking"] = self.thinking
        if self.redacted_thinking:
            metadata["redacted_thinking_blocks"] = self.redacted_thinking
        return ImportedMessage(
            role=ROLE_ASSISTANT,
            content=join_parts(self.texts),
            tool_calls=self.tool_calls or None,
            tool_call_id=None,
            kind=self.kind,
            model_visible=self.kind == KIND_MESSAGE,
            created_at=self.created_at,
            metadata=metadata,
            superseded=self.superseded,
            line_start=self.line_start,
            line_end=self.line_end,
        )


@dataclass(slots=True)
class CompactionDraft:
    """A compaction boundary waiting for its ``isCompactSummary`` record."""

    summary: str | None
    created_at: datetime | None
    metadata: JsonObject
    line_start: int
    line_end: int

    def finish(self) -> Compaction:
        return Compaction(
            summary=self.summary or "",
            created_at=self.created_at,
            metadata=dict(self.metadata, line_end=self.line_end),
            line_start=self.line_start,
            line_end=self.line_end,
        )


def add_assistant_content(draft: AssistantDraft, content: object, report: FileReport) -> None:
    if isinstance(content, str):
        draft.texts.append(content)
        return
    if not isinstance(content, list):
        return
    for block in content:
        block_type = type_name(block)
        if not isinstance(block, dict):
            draft.texts.append(block_text(block, report))
        elif block_type in TOOL_USE_BLOCKS:
            draft.tool_calls.append(
                {
                    "id": str(block.get("id") or ""),
                    "name": str(block.get("name") or ""),
                    "arguments": block.get("input"),
                }
            )
        elif block_type == "thinking":
            thinking = block.get("thinking")
            if isinstance(thinking, str) and thinking:
                draft.thinking.append(thinking)
        elif block_type == "redacted_thinking":
            draft.redacted_thinking += 1
        else:
            draft.texts.append(block_text(block, report))


def plain_text(content: object, report: FileReport) -> str:
    """String content as is; block content as its blocks' text joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return join_parts([block_text(block, report) for block in content])
    return ""


def block_text(block: object, report: FileReport) -> str:
    """The text of one content block; a placeholder for images, documents and the unknown."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        report.count("content_block:<not an object>")
        return placeholder("block")
    block_type = type_name(block)
    if block_type == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if block_type in MEDIA_BLOCKS:
        source = as_object(block.get("source"))
        detail = str_or_none(source.get("media_type")) or str_or_none(source.get("url"))
        return placeholder(str(block_type), detail)
    if block_type == "tool_result":
        return plain_text(block.get("content"), report)
    name = block_type or NO_TYPE
    report.count(f"content_block:{name}")
    return placeholder(name)


def attachment_text(attachment: JsonObject) -> str:
    for key in ("content", "prompt", "text"):
        value = attachment.get(key)
        if isinstance(value, str):
            return value
    return json.dumps(attachment, ensure_ascii=False)
