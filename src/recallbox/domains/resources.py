"""The compaction summary's resource directory, built mechanically (DESIGN §3.4).

When a generation closes, the summary of the next one gets a directory (its heading
:data:`DIRECTORY_HEADING`, DESIGN §3.4's "section 10") of every
resource the closed generation touched — tool names, commands, file paths, URLs and hosts — each
with the message ids of its **first successful use** (the tool call and its result). It is a
map for the model, not the evidence itself: the model pulls the evidence back with
``search_memory`` and ``read_message``, as the instruction line under the directory says.

Rules, all without an LLM:

* Resources come from tool-call arguments: the call's name (a tool), leaves under command-like
  keys (a command), path-like keys (a file), URL-like keys (a URL), host-like keys (a host), and
  inside every leaf, URLs, absolute, home-relative and Windows paths, and ``user@host`` hosts.
* A tool result is successful unless its metadata flags it (``is_error`` or ``error`` true, a
  non-zero ``exit_code``/``returncode``/``exit_status``) or its first
  :data:`ERROR_MARKER_LINES` lines carry an error marker. A call without a result is not a
  successful use; a resource never used successfully is listed with its first use.
* The directory is at most :data:`RESOURCE_DIRECTORY_MAX_CHARS` characters; names are clipped
  to :data:`RESOURCE_NAME_MAX_CHARS` (a clipped name is still a prefix ``search_memory`` finds).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from recallbox.domains.messages import string_leaves
from recallbox.text.windows import clip
from recallbox.types import Message

RESOURCE_DIRECTORY_MAX_CHARS = 4_000
RESOURCE_NAME_MAX_CHARS = 200
ERROR_MARKER_LINES = 5
LEAF_SCAN_MAX_CHARS = 4_000  # how much of one argument leaf is scanned for paths and URLs
RESOURCE_KINDS: tuple[str, ...] = ("tool", "command", "file", "url", "host")
DIRECTORY_HEADING = "## Resources used in generation {generation}"
"""The directory's heading (no section number: the summary above it is the host's text)."""

COMMAND_KEYS = frozenset({"command", "cmd", "commandline", "command_line", "script", "shell"})
PATH_KEYS = frozenset(
    {"path", "file", "file_path", "filepath", "filename", "notebook_path", "dir", "directory"}
    | {"cwd", "workdir", "working_directory"}
)
URL_KEYS = frozenset({"url", "uri", "href", "endpoint"})
HOST_KEYS = frozenset({"host", "hostname", "server"})

URL_RE = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>()\[\]{}`]+")
WINDOWS_PATH_RE = re.compile(r"\b[A-Za-z]:\\[^\s'\"<>|*?`]+")
POSIX_PATH_RE = re.compile(r"(?<![\w:/.@-])(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]+)*/?")
USER_HOST_RE = re.compile(
    r"(?<![\w.-])[\w.-]+@([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*)"
)
ERROR_MARKER_RE = re.compile(
    r"^\s*(?:error|fatal|panic|exception|traceback)\b"
    r"|\b(?:error|exception|fatal)\s*[:\]]"
    r"|Traceback \(most recent call last\)"
    r"|command not found|No such file or directory|Permission denied|Connection refused"
    r"|exit (?:code|status):? *[1-9]",
    re.IGNORECASE | re.MULTILINE,
)
EXIT_KEYS = ("exit_code", "returncode", "exit_status")


@dataclass(frozen=True, slots=True)
class Resource:
    """One directory entry: what was touched and the message ids that show it."""

    kind: str
    name: str
    evidence: tuple[str, ...]
    succeeded: bool


def result_failed(message: Message) -> bool:
    """True when a tool result is flagged as an error or starts with an error marker."""
    meta = message.metadata
    if meta.get("is_error") is True or meta.get("error") is True:
        return True
    for key in EXIT_KEYS:
        value = meta.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return True
    head = "\n".join(message.content.splitlines()[:ERROR_MARKER_LINES])
    return ERROR_MARKER_RE.search(head) is not None


def _last_key(path: str) -> str:
    tail = re.sub(r"\[\d+\]$", "", path).rsplit(".", 1)[-1]
    return tail.lower()


def _found_in(text: str) -> Iterator[tuple[str, str]]:
    """Paths, URLs and hosts mentioned anywhere in ``text``."""
    text = text[:LEAF_SCAN_MAX_CHARS]
    for url in URL_RE.findall(text):
        yield "url", url
        host = urlsplit(url).hostname
        if host:
            yield "host", host
    rest = URL_RE.sub(" ", text)
    for path in WINDOWS_PATH_RE.findall(rest):
        yield "file", path
    for path in POSIX_PATH_RE.findall(WINDOWS_PATH_RE.sub(" ", rest)):
        if any(c.isalpha() for c in path):
            yield "file", path
    for host in USER_HOST_RE.findall(rest):
        yield "host", host


def resources_of_call(call: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(kind, name)`` of every resource one tool call touches, in document order."""
    found: list[tuple[str, str]] = []
    name = call.get("name")
    if isinstance(name, str) and name:
        found.append(("tool", name))
    for path, leaf in string_leaves(call.get("arguments"), "arguments"):
        value = leaf.strip()
        if not value:
            continue
        key = _last_key(path)
        if key in COMMAND_KEYS:
            found.append(("command", value))
        elif key in PATH_KEYS:
            found.append(("file", value))
        elif key in URL_KEYS:
            found.append(("url", value))
        elif key in HOST_KEYS:
            found.append(("host", value))
        found.extend(_found_in(leaf))
    return found


def extract_resources(messages: Iterable[Message]) -> list[Resource]:
    """Every resource the messages' tool calls touched, in order of first use."""
    messages = list(messages)
    results: dict[str, Message] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id is not None:
            results.setdefault(message.tool_call_id, message)
    first: dict[tuple[str, str], tuple[tuple[str, ...], bool]] = {}
    for message in messages:
        for call in message.tool_calls or []:
            result = results.get(str(call.get("id")))
            evidence = (message.id,) if result is None else (message.id, result.id)
            ok = result is not None and not result_failed(result)
            for item in resources_of_call(call):
                known = first.get(item)
                if known is None or (ok and not known[1]):
                    first[item] = (evidence, ok)
    return [
        Resource(kind=kind, name=name, evidence=evidence, succeeded=ok)
        for (kind, name), (evidence, ok) in first.items()
    ]


def instruction_line(channel: str) -> str:
    """How to pull earlier experience with a resource back (DESIGN §3.4)."""
    return (
        "To recover earlier experience with a resource, call "
        f"search_memory(channel={json.dumps(channel, ensure_ascii=False)}, "
        'query="<resource name or path>"); results are bounded windows with message ids '
        "for read_message."
    )


def _entry(resource: Resource) -> str:
    ids = ", ".join(resource.evidence)
    name = clip(resource.name, RESOURCE_NAME_MAX_CHARS).replace("\n", " ")
    if resource.succeeded:
        return f"- {resource.kind} `{name}`: first successful use {ids}"
    return f"- {resource.kind} `{name}`: no successful use; first use {ids}"


def render_directory(resources: list[Resource], generation: int) -> str:
    """Section 10 of the summary: the directory, grouped by kind, within its cap."""
    title = (
        DIRECTORY_HEADING.format(generation=generation) + "\n"
        "A mechanical directory: each resource with the message ids of its first successful "
        "use (tool call, tool result)."
    )
    ordered = sorted(resources, key=lambda r: RESOURCE_KINDS.index(r.kind))
    if not ordered:
        return title + "\n(no tool activity)"
    lines = [title]
    used = len(title)
    for shown, resource in enumerate(ordered):
        entry = _entry(resource)
        more = f"- … {len(ordered) - shown} more resources not listed; search_memory finds them."
        if used + 1 + len(entry) + 1 + len(more) > RESOURCE_DIRECTORY_MAX_CHARS:
            lines.append(more)
            break
        lines.append(entry)
        used += 1 + len(entry)
    return "\n".join(lines)


def summary_with_directory(
    summary: str, messages: Iterable[Message], channel: str, generation: int
) -> str:
    """The host's summary followed by the resource directory and the instruction line."""
    directory = render_directory(extract_resources(messages), generation)
    head = summary + "\n\n" if summary.strip() else ""
    return head + directory + "\n\n" + instruction_line(channel)
