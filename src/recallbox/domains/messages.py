"""Validating and normalising what ``append`` receives into storable rows (DESIGN §2, §9).

Rules:
* ``role`` is one of user/assistant/tool/system and ``kind`` one of message/machine_event/
  compaction_summary, else ``InvalidArgument``. A ``compaction_summary`` row opens a new
  generation (that is what a compaction summary is: the first message of the next generation).
* Text is normalised (``recallbox.text.normalize``); the original is kept when it differs.
* ``tool_calls`` items are ``{"id", "name", "arguments"}``. ``arguments`` is any JSON value; a
  ``str`` is parsed as JSON when it parses (the parsed value is stored, the original text kept
  for the audit view) and is otherwise one raw string leaf.
* ``args_text`` holds every string leaf of the arguments, one per line, for literal search.
* ``created_at``: an aware datetime, a naive one (taken as UTC), an ISO-8601 string or epoch
  seconds; ``None`` means now.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from recallbox.errors import InvalidArgument
from recallbox.limits import DEPTH_REASON, TooDeep, check_depth, loads_bounded, may_nest_too_deep
from recallbox.storage.base import NewMessage
from recallbox.storage.codecs import STORED_JSON_SEPARATORS, is_utf8
from recallbox.text.normalize import needs_normalization, normalize_json, normalize_text
from recallbox.types import KINDS, ROLES

APPEND_KEYS = frozenset(
    {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "kind",
        "model_visible",
        "pending",
        "created_at",
        "metadata",
    }
)
ARGUMENTS_FIELD = "tool_call.arguments"


CHANNEL_ECHO_CHARS = 80
"""How much of a refused channel its error echoes."""


def check_channel(channel: object) -> str:
    """The normalised channel; one rule for every verb that names a thread: a string that is
    not empty or blank *after* normalisation (``"\\x08"`` becomes ``" "``: refused).

    Raises:
        InvalidArgument: not a string, or empty or blank once normalised.
    """
    if not isinstance(channel, str):
        raise InvalidArgument(f"channel must be a non-empty string, got {type(channel).__name__}")
    normalized = normalize_text(channel)
    if not normalized.strip():
        shown = repr(channel[:CHANNEL_ECHO_CHARS])
        raise InvalidArgument(f"channel must be a non-empty string, got {shown}")
    return normalized


def to_datetime(value: object) -> datetime:
    """Accept a datetime, an ISO-8601 string or epoch seconds; naive times are UTC."""
    if value is None:
        return datetime.now(UTC)
    if isinstance(value, datetime):
        result = value
    elif isinstance(value, str):
        try:
            result = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidArgument(f"created_at is not an ISO-8601 time: {value!r}") from exc
    elif isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        result = datetime.fromtimestamp(value, UTC)
    else:
        raise InvalidArgument(f"created_at must be a datetime, ISO string or epoch, got {value!r}")
    return result if result.tzinfo is not None else result.replace(tzinfo=UTC)


def _check_json(value: Any, what: str) -> None:
    """``value`` must be JSON no deeper than ``MAX_JSON_DEPTH``. A value whose JSON text has
    more brackets than the limit is measured without recursion (a 10 000-level value is
    refused by name, never by a RecursionError); any other is serialised once, which both
    proves it is JSON and bounds its depth (:func:`~recallbox.limits.may_nest_too_deep`)."""
    _json_text(value, what)


def _json_text(value: Any, what: str, *, stored: bool = False) -> str:
    """:func:`_check_json`, returning the JSON text it made: with ``stored``, made as
    :func:`~recallbox.storage.codecs.dump_json` first makes it (no ASCII escapes, compact), so
    the one dump that validates metadata is also the text stored when it is UTF-8. The bracket
    count of both forms is the same (escapes and separators hold no bracket)."""
    text: str | None
    try:
        if stored:
            text = json.dumps(
                value, allow_nan=False, ensure_ascii=False, separators=STORED_JSON_SEPARATORS
            )
        else:
            text = json.dumps(value, allow_nan=False)
    except RecursionError:
        text = None
    except (TypeError, ValueError) as exc:
        check_depth_or_refuse(value, what)
        raise InvalidArgument(f"{what} must be JSON-serialisable: {exc}") from exc
    if text is None or may_nest_too_deep(text):
        check_depth_or_refuse(value, what)
    if text is None:
        raise InvalidArgument(f"{what} must be JSON-serialisable: nested too deeply")
    return text


def check_depth_or_refuse(value: Any, what: str) -> None:
    """:func:`~recallbox.limits.check_depth`, raising :class:`InvalidArgument`."""
    try:
        check_depth(value, what)
    except TooDeep as exc:
        raise InvalidArgument(str(exc)) from exc


def string_leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """Every string leaf of a JSON value with its path (``a.b[2].c``), in document order.
    Iterative: any depth is walked without recursion."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, Mapping):
            stack.extend((v, f"{where}.{k}") for k, v in reversed(list(item.items())))
        elif isinstance(item, list | tuple):
            stack.extend((v, f"{where}[{i}]") for i, v in reversed(list(enumerate(item))))


def argument_leaves(tool_calls: Sequence[Mapping[str, Any]] | None) -> list[tuple[str, str]]:
    """``(field, text)`` for every string leaf of every call's arguments, in document order."""
    leaves: list[tuple[str, str]] = []
    for call in tool_calls or ():
        leaves.extend(string_leaves(call.get("arguments"), ARGUMENTS_FIELD))
    return leaves


def _normalise_tool_calls(
    tool_calls: object,
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Return the stored calls and, when anything differs from the input, the raw input JSON."""
    if tool_calls is None:
        return None, None
    if not isinstance(tool_calls, Sequence) or isinstance(tool_calls, str | bytes):
        raise InvalidArgument("tool_calls must be a list of {id, name, arguments} mappings")
    stored: list[dict[str, Any]] = []
    raw: list[Any] = []
    differs = False
    for i, call in enumerate(tool_calls):
        if not isinstance(call, Mapping):
            raise InvalidArgument(f"tool_calls[{i}] must be a mapping with id, name, arguments")
        call_id = call.get("id")
        name = call.get("name")
        if not isinstance(call_id, str) or not isinstance(name, str):
            raise InvalidArgument(f"tool_calls[{i}] needs string 'id' and 'name'")
        arguments = call.get("arguments")
        _check_json(arguments, f"tool_calls[{i}].arguments")
        raw.append(arguments)
        if isinstance(arguments, str):
            try:
                arguments = loads_bounded(arguments)
                differs = True
            except TooDeep as exc:
                raise InvalidArgument(f"tool_calls[{i}].arguments is {DEPTH_REASON}") from exc
            except ValueError:
                pass
        normalised = normalize_json(arguments)
        if normalised != arguments or needs_normalization(call_id + name):
            differs = True
        stored.append(
            {"id": normalize_text(call_id), "name": normalize_text(name), "arguments": normalised}
        )
    raw_text = json.dumps(raw, ensure_ascii=True) if differs else None
    return stored, raw_text


def build_row(
    role: object,
    content: object = "",
    *,
    tool_calls: object = None,
    tool_call_id: object = None,
    kind: object = "message",
    model_visible: object = True,
    pending: object = False,
    created_at: object = None,
    metadata: object = None,
) -> NewMessage:
    """Validate and normalise one message.

    Raises:
        InvalidArgument: for an invalid role, kind, field type, or non-JSON value.
    """
    if role not in ROLES:
        raise InvalidArgument(f"role must be one of {', '.join(ROLES)}; got {role!r}")
    if kind not in KINDS:
        raise InvalidArgument(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise InvalidArgument(f"content must be a string, got {type(content).__name__}")
    if tool_call_id is not None and not isinstance(tool_call_id, str):
        raise InvalidArgument("tool_call_id must be a string or None")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgument("metadata must be a mapping (a JSON object)")
    stored_metadata = dict(metadata)
    metadata_text = _json_text(stored_metadata, "metadata", stored=True)
    calls, calls_raw = _normalise_tool_calls(tool_calls)
    text = normalize_text(content)
    return NewMessage(
        role=str(role),
        kind=str(kind),
        content=text,
        raw_content=content if text != content else None,
        tool_calls=calls,
        tool_calls_raw=calls_raw,
        args_text="\n".join(leaf for _, leaf in argument_leaves(calls)),
        tool_call_id=normalize_text(tool_call_id) if tool_call_id is not None else None,
        model_visible=bool(model_visible),
        pending=bool(pending),
        created_at=to_datetime(created_at),
        metadata=stored_metadata,
        opens_generation=kind == "compaction_summary",
        metadata_json=metadata_text if is_utf8(metadata_text) else None,
    )


def build_row_from_mapping(item: Mapping[str, Any]) -> NewMessage:
    """``append_many``'s per-item form: append()'s keyword arguments plus ``role``."""
    if not isinstance(item, Mapping):
        raise InvalidArgument("append_many takes mappings of append() keyword arguments")
    unknown = set(item) - APPEND_KEYS
    if unknown:
        raise InvalidArgument(f"unknown message fields: {', '.join(sorted(unknown))}")
    if "role" not in item:
        raise InvalidArgument("every message needs a 'role'")
    return build_row(**item)
