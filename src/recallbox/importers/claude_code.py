"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One session file yields the session thread ``claude-code:<session id>`` (the ``sessionId`` of
its first record that names one — a copy of the file under another name is the same session;
the file stem when no record names one), then
one thread per sub-agent: inline ``isSidechain`` records of the session file, the
``<session>/subagents/agent-<id>.jsonl`` files and the older ``agent-<id>.jsonl`` files beside
the session whose ``sessionId`` matches. A sub-agent thread is
``claude-code:<session id>/agent-<agent id>`` (``/sidechain-<root uuid>`` for inline records
without an ``agentId``) with ``parent_channel`` set to the session thread.

Mapping (documented choices are marked *):

- ``user`` records: string or block content. ``text`` blocks (and images, as
  ``[image: <media type>]``) form a user message; each ``tool_result`` block becomes a
  ``role="tool"`` message with ``tool_call_id = tool_use_id`` (``is_error`` in metadata).
  ``isMeta`` records are machine events that the model did see* (``model_visible=True``).
- ``assistant`` records: Claude Code writes one record per content block of an API message;
  records sharing ``message.id`` (same branch, same generation) merge into one message at the
  position of the first. ``text`` blocks form the content, ``tool_use`` blocks the
  ``tool_calls`` (arguments = the ``input`` object), ``thinking`` blocks are kept in
  ``metadata["thinking"]``* (the model's own scratch text: kept for the audit view, not
  searched). API-error and ``<synthetic>`` messages are machine events (never model output).
- ``system`` records with ``subtype: compact_boundary`` start a generation: the boundary and
  the following ``isCompactSummary`` user record form one :class:`Compaction`. The boundary's
  ``logicalParentUuid`` joins it to the previous generation for branch resolution.
- Branches: see :mod:`recallbox.importers._branches`; messages off the live line are kept with
  ``superseded=True``, in file order.
- Titles: the last ``custom-title``, else the last ``ai-title``, else the ``summary`` record
  whose ``leafUuid`` is on the live line, else the last ``summary``. Summary records are never
  compactions.
- Kept as machine events (``model_visible=False``) and counted in ``unknown_records``: other
  ``system`` subtypes (key ``system:<subtype>``), ``attachment`` records (``attachment:<type>``,
  except ``queued_command`` prompts, which are user messages the model received*) and
  ``queue-operation`` records. Only counted: every other type (``file-history-snapshot``,
  ``progress``, ...). ``toolUseResult`` (a structured duplicate of the tool result, often the
  whole file an edit touched) is dropped*, except the ``agentId`` of a finished sub-agent,
  kept as ``metadata["spawned_agent_id"]``.
- ``agent-acompact-*`` files (the compaction agent, a verbatim copy of the conversation
  being summarised) are not imported*; they are counted as ``subagent_file:acompact``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from recallbox.errors import NotFound
from recallbox.importers._branches import BranchForest
from recallbox.importers._claude_items import (
    SPAWNED_AGENT_KEY,
    Record,
    ThreadBuilder,
    is_boundary,
    queued_prompt,
)
from recallbox.importers._common import (
    NO_TYPE,
    FileReport,
    JsonObject,
    as_object,
    bounded_lines,
    iter_json_objects,
    open_source,
    str_or_none,
    type_name,
)
from recallbox.importers.records import FORMAT_CLAUDE_CODE, ParsedTranscript, ThreadItem
from recallbox.limits import TooDeep, loads_bounded

SUBAGENTS_DIR = "subagents"
AGENT_FILE_PREFIX = "agent-"
COMPACTION_AGENT_PREFIX = "agent-acompact"
AGENT_FILE_GLOB = "agent-*.jsonl"
SESSION_ID_PEEK_LINES = 20
"""How many lines of an old-style ``agent-*.jsonl`` are read to find its ``sessionId``."""

MESSAGE_TYPES = frozenset({"user", "assistant"})
EVENT_TYPES = frozenset({"system", "attachment", "queue-operation"})
TITLE_TYPES = frozenset({"summary", "custom-title", "ai-title"})


@dataclass(slots=True)
class _Titles:
    custom: str | None = None
    ai: str | None = None
    summaries: list[tuple[str | None, str]] = field(default_factory=list)

    def take(self, data: JsonObject) -> None:
        kind = type_name(data)
        if kind == "custom-title":
            self.custom = str_or_none(data.get("customTitle")) or self.custom
        elif kind == "ai-title":
            self.ai = str_or_none(data.get("aiTitle")) or self.ai
        elif (text := str_or_none(data.get("summary"))) is not None:
            self.summaries.append((str_or_none(data.get("leafUuid")), text))

    def choose(self, forest: BranchForest) -> str | None:
        if self.custom or self.ai:
            return self.custom or self.ai
        live = [text for leaf, text in self.summaries if leaf is not None and forest.on_line(leaf)]
        if live:
            return live[-1]
        return self.summaries[-1][1] if self.summaries else None


@dataclass(slots=True)
class _ScannedFile:
    """Everything one pass over a file keeps: records, branch forests, titles, the report."""

    main: list[Record] = field(default_factory=list)
    side: list[Record] = field(default_factory=list)
    main_forest: BranchForest = field(default_factory=BranchForest)
    side_forest: BranchForest = field(default_factory=BranchForest)
    titles: _Titles = field(default_factory=_Titles)
    report: FileReport = field(default_factory=FileReport)
    session_id: str | None = None
    agent_id: str | None = None


def parse_claude_code(path: Path) -> list[ParsedTranscript]:
    """Parse a Claude Code session file and its sub-agent transcripts.

    Args:
        path: a ``<session>.jsonl`` file; given an ``agent-*.jsonl`` file directly, only that
            sub-agent thread is returned.

    Returns:
        The session thread first, then inline sidechain threads, then sub-agent files.

    Raises:
        NotFound: there is no file at ``path``.
    """
    if path.name.startswith(AGENT_FILE_PREFIX):
        return [_agent_file_thread(path, parent_session=None)]
    scanned = _scan(path, single_thread=False)
    session_id = scanned.session_id or path.stem
    threads = [_session_thread(path, session_id, scanned)]
    threads.extend(_inline_sidechain_threads(path, session_id, scanned))
    for agent_path in _subagent_files(path, session_id):
        if agent_path.name.startswith(COMPACTION_AGENT_PREFIX):
            scanned.report.count("subagent_file:acompact")
            continue
        threads.append(_agent_file_thread(agent_path, parent_session=session_id))
    scanned.report.sort()
    return threads


def _channel(session_id: str, suffix: str | None = None) -> str:
    base = f"{FORMAT_CLAUDE_CODE}:{session_id}"
    return f"{base}/{suffix}" if suffix else base


def _sidechain_suffix(agent_id: str | None, root: str | None) -> str:
    """The channel suffix of an inline sidechain record's thread: ``agent-<agent id>``, else
    ``sidechain-<root uuid>``, else ``sidechain``."""
    if agent_id is not None:
        return f"agent-{agent_id}"
    if root is not None:
        return f"sidechain-{root}"
    return "sidechain"


def _scan(path: Path, *, single_thread: bool) -> _ScannedFile:
    """One streaming pass: keep the records that become items, map every uuid to its parent."""
    scanned = _ScannedFile()
    first_line: dict[str, int] = {}
    for line, data in iter_json_objects(path, scanned.report):
        kind = type_name(data)
        if scanned.session_id is None:
            scanned.session_id = str_or_none(data.get("sessionId"))
        if scanned.agent_id is None:
            scanned.agent_id = str_or_none(data.get("agentId"))
        if kind in TITLE_TYPES:
            scanned.titles.take(data)
            continue
        uuid = str_or_none(data.get("uuid"))
        if uuid is not None and uuid in first_line:
            scanned.report.skip(line, f"duplicate uuid {uuid} (first on line {first_line[uuid]})")
            continue
        side = bool(data.get("isSidechain")) and not single_thread
        if uuid is not None:
            first_line[uuid] = line
            forest = scanned.side_forest if side else scanned.main_forest
            forest.add(uuid, _parent_of(data), conversational=_is_conversational(data))
        if kind in MESSAGE_TYPES or kind in EVENT_TYPES:
            _drop_tool_use_result(data)
            (scanned.side if side else scanned.main).append(Record(line, data))
        if (key := _unknown_key(data)) is not None:
            scanned.report.count(key)
    for forest, records in (
        (scanned.main_forest, scanned.main),
        (scanned.side_forest, scanned.side),
    ):
        forest.resolve(r.uuid for r in records if r.uuid is not None and _is_conversational(r.data))
    return scanned


def _drop_tool_use_result(data: JsonObject) -> None:
    """Drop ``toolUseResult`` but keep the ``agentId`` of a finished sub-agent."""
    result = data.pop("toolUseResult", None)
    if isinstance(result, dict) and (agent_id := str_or_none(result.get("agentId"))):
        data[SPAWNED_AGENT_KEY] = agent_id


def _parent_of(data: JsonObject) -> str | None:
    parent = str_or_none(data.get("parentUuid"))
    if parent is None and is_boundary(data):
        parent = str_or_none(data.get("logicalParentUuid"))
    return parent


def _is_conversational(data: JsonObject) -> bool:
    return type_name(data) in MESSAGE_TYPES or is_boundary(data)


def _unknown_key(data: JsonObject) -> str | None:
    """The ``unknown_records`` key of a record kept only as a machine event or only counted.

    ``None`` for what maps to a message or a compaction (user, assistant, compaction
    boundaries, queued prompts).
    """
    kind = type_name(data)
    if kind is None:
        return NO_TYPE
    if kind in MESSAGE_TYPES:
        return None
    if kind == "system":
        if is_boundary(data):
            return None
        return f"system:{str_or_none(data.get('subtype')) or NO_TYPE}"
    if kind == "attachment":
        attachment = as_object(data.get("attachment"))
        if queued_prompt(attachment) is not None:
            return None
        return f"attachment:{type_name(attachment) or NO_TYPE}"
    return kind


# --- threads -----------------------------------------------------------------------------


def _items(
    path: Path,
    records: list[Record],
    forest: BranchForest,
    report: FileReport,
    extra: JsonObject,
) -> list[ThreadItem]:
    builder = ThreadBuilder(str(path), forest, report, extra=extra)
    for record in records:
        builder.add(record)
    return builder.finish()


def _session_thread(path: Path, session_id: str, scanned: _ScannedFile) -> ParsedTranscript:
    return ParsedTranscript(
        channel=_channel(session_id),
        title=scanned.titles.choose(scanned.main_forest),
        source_file=str(path),
        items=_items(path, scanned.main, scanned.main_forest, scanned.report, {}),
        skipped=scanned.report.skipped,
        unknown_records=scanned.report.unknown_records,
        truncated_tail=scanned.report.truncated_tail,
    )


def _inline_sidechain_threads(
    path: Path, session_id: str, scanned: _ScannedFile
) -> list[ParsedTranscript]:
    """Sidechain records of a session file, one thread per ``agentId`` (or per root uuid)."""
    groups: dict[str, list[Record]] = {}
    for record in scanned.side:
        uuid = record.uuid
        root = scanned.side_forest.root(uuid) if uuid is not None else None
        suffix = _sidechain_suffix(str_or_none(record.data.get("agentId")), root)
        groups.setdefault(suffix, []).append(record)
    extra = {"parent_session_id": session_id}
    return [
        ParsedTranscript(
            channel=_channel(session_id, suffix),
            title=None,
            source_file=str(path),
            parent_channel=_channel(session_id),
            items=_items(path, records, scanned.side_forest, scanned.report, extra),
        )
        for suffix, records in groups.items()
    ]


def _agent_file_thread(path: Path, *, parent_session: str | None) -> ParsedTranscript:
    """A sub-agent transcript file as one thread linked to its session."""
    scanned = _scan(path, single_thread=True)
    session_id = parent_session or scanned.session_id or _session_from_layout(path)
    agent_id = scanned.agent_id or path.stem.removeprefix(AGENT_FILE_PREFIX)
    extra = {"parent_session_id": session_id} if session_id else {}
    items = _items(path, scanned.main, scanned.main_forest, scanned.report, extra)
    scanned.report.sort()
    return ParsedTranscript(
        channel=_channel(session_id, f"agent-{agent_id}") if session_id else _channel(path.stem),
        title=scanned.titles.choose(scanned.main_forest),
        source_file=str(path),
        parent_channel=_channel(session_id) if session_id else None,
        items=items,
        skipped=scanned.report.skipped,
        unknown_records=scanned.report.unknown_records,
        truncated_tail=scanned.report.truncated_tail,
    )


def _session_from_layout(path: Path) -> str | None:
    """``<session>/subagents/agent-x.jsonl`` -> ``<session>``."""
    return path.parent.parent.name if path.parent.name == SUBAGENTS_DIR else None


def _subagent_files(path: Path, session_id: str) -> list[Path]:
    """The sub-agent files of a session file: ``<file stem>/subagents/``, then the siblings
    whose records name ``session_id``."""
    nested = path.parent / path.stem / SUBAGENTS_DIR
    found = sorted(nested.glob(AGENT_FILE_GLOB)) if nested.is_dir() else []
    found.extend(
        sibling
        for sibling in sorted(path.parent.glob(AGENT_FILE_GLOB))
        if peek_session_id(sibling) == session_id
    )
    return found


def peek_session_id(path: Path) -> str | None:
    """The ``sessionId`` of the first records of a Claude Code file (``None`` if unreadable)."""
    try:
        with open_source(path) as stream:
            for number, line in enumerate(bounded_lines(stream), start=1):
                if number > SESSION_ID_PEEK_LINES:
                    break
                if line is None:
                    continue
                try:
                    data = loads_bounded(line)
                except (json.JSONDecodeError, TooDeep):
                    continue
                if isinstance(data, dict) and (found := str_or_none(data.get("sessionId"))):
                    return found
    except (OSError, NotFound):
        return None
    return None
