"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``).

Two layouts are read, even mixed in one file:

- **wrapped** (Sept 2025 on): every line is ``{"timestamp", "type", "payload"}`` with ``type``
  one of ``session_meta``, ``response_item``, ``event_msg``, ``turn_context``, ``compacted``
  (newer types are counted);
- **bare** (earlier): the first line is the session meta object itself (``{"id",
  "timestamp", "instructions", "git"}``), then bare response items and ``{"record_type":
  "state"}`` lines, without per-line timestamps.

The thread is ``codex:<session id>`` (the first ``session_meta`` id, else the uuid at the end
of the file name). A sub-agent rollout names its parent thread in ``parent_channel``. Later
``session_meta`` lines (a fork replays its parent's) are counted as ``session_meta``, and the
other session ids they name are reported.

Mapping (documented choices are marked *):

- Only ``response_item``\\ s become messages. ``event_msg`` lines repeat them for the UI and are
  counted as ``event_msg:<type>``; ``turn_context`` lines are counted and lend their ``cwd``
  and ``model`` to the metadata of the following messages.
- ``message`` items: ``user``/``assistant`` keep their role; ``developer``/``system`` become
  ``role="system"`` machine events* that the model saw (harness instructions), and so do user
  messages that are injected context (``<environment_context>``, ``<user_instructions>``,
  ``# AGENTS.md`` ...)*.
- ``reasoning`` items become assistant **machine events** with ``model_visible=False`` and
  ``metadata["item_type"] = "reasoning"``*: the readable text is a summary written for the user
  (the reasoning the model conditioned on is encrypted), so it is kept for the audit view but
  never searched as evidence.
- ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` / ``web_search_call`` are
  assistant messages with one tool call each (``function_call`` arguments stay the raw JSON
  string; a custom tool's ``input`` is its raw text; shell and search calls pass their
  ``action`` object). Calls without a ``call_id`` get ``<item type>@<line>``*.
  ``function_call_output`` / ``custom_tool_call_output`` are tool messages linked by
  ``call_id``; ``success: false`` is kept as ``metadata["is_error"] = True``. A shell result
  Codex encodes as ``{"output": "…", "metadata": {…}}`` is stored as its output text, the
  metadata under ``metadata["output_metadata"]`` (``exit_code`` also beside it).
- ``compacted`` starts a new generation with its ``message`` as the summary (the length of a
  ``replacement_history`` is kept in metadata).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from recallbox.importers._common import (
    MAX_OTHER_SESSION_IDS,
    NO_TYPE,
    FileReport,
    JsonObject,
    as_object,
    compact_metadata,
    image_url_placeholder,
    iter_json_objects,
    join_parts,
    parse_timestamp,
    placeholder,
    str_or_none,
    type_name,
)
from recallbox.importers.records import (
    FORMAT_CODEX,
    KIND_MACHINE_EVENT,
    KIND_MESSAGE,
    ROLE_ASSISTANT,
    ROLE_SYSTEM,
    ROLE_TOOL,
    ROLE_USER,
    Compaction,
    ImportedMessage,
    ParsedTranscript,
    ThreadItem,
)

MESSAGE_ROLES = {
    "user": ROLE_USER,
    "assistant": ROLE_ASSISTANT,
    "developer": ROLE_SYSTEM,
    "system": ROLE_SYSTEM,
}
INSTRUCTION_ROLES = frozenset({"developer", "system"})
INJECTED_CONTEXT_MARKERS = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<collaboration_mode>",
    "<multi_agent_mode>",
    "<apps_instructions>",
    "# AGENTS.md",
)
TEXT_PARTS = frozenset({"input_text", "output_text", "text", "summary_text", "reasoning_text"})
TOOL_CALL_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
TOOL_OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})
TOOL_NAMES = {"local_shell_call": "local_shell", "web_search_call": "web_search"}
SHELL_OUTPUT_KEYS = frozenset({"output", "metadata"})
"""The keys of Codex's encoded shell result (``function_call_output`` of ``shell``)."""
SESSION_UUID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE
)


def parse_codex(path: Path) -> list[ParsedTranscript]:
    """Parse one Codex CLI rollout file into its thread.

    Args:
        path: a ``rollout-*.jsonl`` file (wrapped or bare layout).

    Returns:
        A one-element list: the rollout's thread.

    Raises:
        NotFound: there is no file at ``path``.
    """
    rollout = _Rollout(source_file=str(path))
    for line, data in iter_json_objects(path, rollout.report):
        rollout.add(line, data)
    session_id = rollout.session_id or session_id_from_filename(path)
    return [
        ParsedTranscript(
            channel=f"{FORMAT_CODEX}:{session_id}",
            title=None,
            source_file=str(path),
            parent_channel=f"{FORMAT_CODEX}:{rollout.parent_id}" if rollout.parent_id else None,
            items=rollout.items,
            skipped=rollout.report.skipped,
            unknown_records=rollout.report.unknown_records,
            truncated_tail=rollout.report.truncated_tail,
        )
    ]


def session_id_from_filename(path: Path) -> str:
    """The uuid that ends a rollout file name, else the file stem."""
    match = SESSION_UUID.search(path.stem)
    return match.group(0) if match else path.stem


@dataclass(slots=True)
class _Rollout:
    """The state of one pass over a rollout."""

    source_file: str
    report: FileReport = field(default_factory=FileReport)
    items: list[ThreadItem] = field(default_factory=list)
    session_id: str | None = None
    parent_id: str | None = None
    meta_seen: bool = False
    cwd: str | None = None
    git_branch: str | None = None
    model: str | None = None
    other_ids: list[str] = field(default_factory=list)

    def add(self, line: int, data: JsonObject) -> None:
        record_type = data.get("type")
        payload = data.get("payload")
        if "record_type" in data:
            self.report.count(f"record_type:{str_or_none(data.get('record_type')) or NO_TYPE}")
        elif isinstance(record_type, str) and isinstance(payload, dict):
            self._add_wrapped(line, record_type, payload, parse_timestamp(data.get("timestamp")))
        elif record_type is None and not self.meta_seen and "id" in data:
            self._add_meta(data)
        elif isinstance(record_type, str):
            self._add_item(line, data, None, wrapped=False)
        else:
            self.report.count(NO_TYPE)

    def _add_wrapped(
        self, line: int, record_type: str, payload: JsonObject, timestamp: datetime | None
    ) -> None:
        if record_type == "response_item":
            self._add_item(line, payload, timestamp, wrapped=True)
        elif record_type == "compacted":
            self._add_compacted(line, payload, timestamp)
        elif record_type == "session_meta" and not self.meta_seen:
            self._add_meta(payload)
        elif record_type == "session_meta":
            self.report.count(record_type)
            seen = str_or_none(payload.get("id")) or str_or_none(payload.get("session_id"))
            known = seen is None or seen == self.session_id or seen in self.other_ids
            if not known and len(self.other_ids) < MAX_OTHER_SESSION_IDS:
                self.other_ids.append(str(seen))
        elif record_type == "event_msg":
            self.report.count(f"event_msg:{type_name(payload) or NO_TYPE}")
        else:
            if record_type == "turn_context":
                self.cwd = str_or_none(payload.get("cwd")) or self.cwd
                self.model = str_or_none(payload.get("model")) or self.model
            self.report.count(record_type)

    def _add_meta(self, meta: JsonObject) -> None:
        self.meta_seen = True
        self.session_id = str_or_none(meta.get("id")) or str_or_none(meta.get("session_id"))
        self.cwd = str_or_none(meta.get("cwd"))
        self.git_branch = str_or_none(as_object(meta.get("git")).get("branch"))
        spawn = _dig(meta, "source", "subagent", "thread_spawn")
        self.parent_id = str_or_none(meta.get("parent_thread_id")) or str_or_none(
            spawn.get("parent_thread_id")
        )

    def _metadata(self, line: int, item: JsonObject, *, wrapped: bool, **more: Any) -> JsonObject:
        return compact_metadata(
            source_file=self.source_file,
            line_start=line,
            line_end=line,
            record_type="response_item" if wrapped else "bare_item",
            item_type=type_name(item),
            item_id=str_or_none(item.get("id")),
            call_id=str_or_none(item.get("call_id")),
            status=str_or_none(item.get("status")),
            phase=str_or_none(item.get("phase")),
            cwd=self.cwd,
            git_branch=self.git_branch,
            model=self.model,
            **more,
        )

    def _append(
        self,
        line: int,
        role: str,
        content: str,
        timestamp: datetime | None,
        metadata: JsonObject,
        *,
        kind: str = KIND_MESSAGE,
        model_visible: bool = True,
        tool_calls: list[dict[str, Any]] | None = None,
        tool_call_id: str | None = None,
    ) -> None:
        self.items.append(
            ImportedMessage(
                role=role,
                content=content,
                tool_calls=tool_calls,
                tool_call_id=tool_call_id,
                kind=kind,
                model_visible=model_visible,
                created_at=timestamp,
                metadata=metadata,
                superseded=False,
                line_start=line,
                line_end=line,
            )
        )

    def _add_item(
        self, line: int, item: JsonObject, timestamp: datetime | None, *, wrapped: bool
    ) -> None:
        item_type = type_name(item)
        if item_type == "message":
            self._add_message(line, item, timestamp, wrapped=wrapped)
        elif item_type == "reasoning":
            text = join_parts(
                [*self._texts(item.get("summary")), *self._texts(item.get("content"))]
            )
            encrypted = True if item.get("encrypted_content") else None
            metadata = self._metadata(line, item, wrapped=wrapped, encrypted=encrypted)
            self._append(
                line,
                ROLE_ASSISTANT,
                text,
                timestamp,
                metadata,
                kind=KIND_MACHINE_EVENT,
                model_visible=False,
            )
        elif item_type in TOOL_CALL_ITEMS:
            call = _tool_call(line, item)
            metadata = self._metadata(line, item, wrapped=wrapped)
            self._append(line, ROLE_ASSISTANT, "", timestamp, metadata, tool_calls=[call])
        elif item_type in TOOL_OUTPUT_ITEMS:
            content, is_error, extra = self._output(item.get("output"))
            metadata = self._metadata(line, item, wrapped=wrapped, is_error=is_error, **extra)
            call_id = str_or_none(item.get("call_id"))
            self._append(line, ROLE_TOOL, content, timestamp, metadata, tool_call_id=call_id)
        else:
            prefix = "response_item" if wrapped else "bare_item"
            self.report.count(f"{prefix}:{item_type or NO_TYPE}")

    def _add_message(
        self, line: int, item: JsonObject, timestamp: datetime | None, *, wrapped: bool
    ) -> None:
        source_role = item.get("role")
        role = MESSAGE_ROLES.get(source_role) if isinstance(source_role, str) else None
        if role is None:
            self.report.skip(line, f"message with unknown role {source_role!r}")
            return
        text = join_parts(self._texts(item.get("content")))
        injected = source_role in INSTRUCTION_ROLES or (
            role == ROLE_USER and text.lstrip().startswith(INJECTED_CONTEXT_MARKERS)
        )
        metadata = self._metadata(
            line,
            item,
            wrapped=wrapped,
            source_role=source_role if source_role != role else None,
            injected_context=True if injected else None,
        )
        kind = KIND_MACHINE_EVENT if injected else KIND_MESSAGE
        self._append(line, role, text, timestamp, metadata, kind=kind)

    def _add_compacted(self, line: int, payload: JsonObject, timestamp: datetime | None) -> None:
        history = payload.get("replacement_history")
        message = payload.get("message")
        self.items.append(
            Compaction(
                summary=message if isinstance(message, str) else "",
                created_at=timestamp,
                metadata=compact_metadata(
                    source_file=self.source_file,
                    line_start=line,
                    line_end=line,
                    record_type="compacted",
                    replacement_history_items=len(history) if isinstance(history, list) else None,
                ),
                line_start=line,
                line_end=line,
            )
        )

    def _texts(self, content: object) -> list[str]:
        """The text of a content-part list (message content, reasoning summary, output)."""
        if isinstance(content, str):
            return [content]
        if not isinstance(content, list):
            return []
        texts = []
        for part in content:
            part_object = as_object(part)
            part_type = type_name(part_object)
            text = part_object.get("text")
            if part_type in TEXT_PARTS and isinstance(text, str):
                texts.append(text)
            elif part_type == "input_image":
                texts.append(image_url_placeholder(part_object.get("image_url")))
            else:
                name = part_type or NO_TYPE
                self.report.count(f"content_part:{name}")
                texts.append(placeholder(name))
        return texts

    def _output(self, output: object) -> tuple[str, bool | None, JsonObject]:
        """A tool output as text, ``True`` when it says the call failed, and metadata it
        carried (an encoded shell result's ``metadata``, see :func:`decode_shell_output`)."""
        if isinstance(output, str):
            decoded = decode_shell_output(output)
            if decoded is not None:
                return decoded
            return output, None, {}
        if isinstance(output, list):
            return join_parts(self._texts(output)), None, {}
        if isinstance(output, dict):
            success = output.get("success")
            content, _, extra = self._output(output.get("content"))
            return content, (not success) if isinstance(success, bool) else None, extra
        if output is None:
            return "", None, {}
        return json.dumps(output, ensure_ascii=False), None, {}


def decode_shell_output(text: str) -> tuple[str, bool | None, JsonObject] | None:
    """Codex's encoded shell result ``{"output": "…", "metadata": {…}}`` as its output text
    (what the model read), ``None`` for a success flag, and ``{"output_metadata": {…}}`` with
    its ``exit_code`` lifted beside it (a non-zero one marks the result failed in the resource
    directory). ``None`` when ``text`` is not exactly that shape (it is then kept as it is)."""
    if not text.startswith("{") or '"output"' not in text:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("output"), str):
        return None
    meta = value.get("metadata")
    if set(value) - SHELL_OUTPUT_KEYS or not isinstance(meta, dict | None):
        return None
    extra: JsonObject = {}
    if meta is not None:
        extra["output_metadata"] = meta
        exit_code = meta.get("exit_code")
        if isinstance(exit_code, int) and not isinstance(exit_code, bool):
            extra["exit_code"] = exit_code
    return value["output"], None, extra


def _dig(value: JsonObject, *keys: str) -> JsonObject:
    """``value[k1][k2]...`` as an object (empty when any step is missing or not an object)."""
    for key in keys:
        value = as_object(value.get(key))
    return value


def _tool_call(line: int, item: JsonObject) -> dict[str, Any]:
    """The ``{id, name, arguments}`` of a tool-call item."""
    item_type = type_name(item) or NO_TYPE
    call_id = str_or_none(item.get("call_id")) or str_or_none(item.get("id"))
    if item_type == "function_call":
        arguments = item.get("arguments")
    elif item_type == "custom_tool_call":
        arguments = item.get("input")
    else:
        arguments = item.get("action")
    return {
        "id": call_id or f"{item_type}@{line}",
        "name": str_or_none(item.get("name")) or TOOL_NAMES.get(item_type, item_type),
        "arguments": arguments,
    }
