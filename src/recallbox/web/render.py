"""Templates and the small pure helpers they use: stored text reaches HTML only as data.

The Jinja2 environment autoescapes every value; no helper here returns markup. Links to stored
values (channels, message ids) are built by :func:`thread_url` / :func:`message_url`, which
percent-encode the value into a path of our own: a stored string is never an ``href`` itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse

from recallbox import Box
from recallbox.web.adapters import last_activity

#: A preview of stored text in a list (characters, the ``…`` not counted).
PREVIEW_CHARS = 160
#: How much of one string leaf of a tool-call argument or metadata tree is shown.
TREE_LEAF_MAX_CHARS = 2_000
#: How many nodes one tree shows before it says how many it left out.
TREE_MAX_NODES = 400
#: How deep a tree is unfolded (deeper containers are summarised by their size).
TREE_MAX_DEPTH = 24
ELLIPSIS = "…"


def thread_url(channel: str, **params: object) -> str:
    """``/threads/<channel>`` with every character of the channel that is not unreserved
    percent-encoded (``/``, ``#``, ``?``, spaces, quotes, …)."""
    return "/threads/" + quote(channel, safe="") + _query(params)


def message_url(message_id: str, **params: object) -> str:
    """``/messages/<id>``, the id percent-encoded."""
    return "/messages/" + quote(message_id, safe="") + _query(params)


def link(path: str, **params: object) -> str:
    """``path`` (a route of ours) with ``params`` as an encoded query string."""
    return path + _query(params)


def _query(params: Mapping[str, object]) -> str:
    kept = {k: v for k, v in params.items() if v is not None}
    return "?" + urlencode(kept) if kept else ""


def preview(text: str | None, limit: int = PREVIEW_CHARS) -> str:
    """``text`` on one line (runs of whitespace become one space), cut to ``limit``."""
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[:limit] + ELLIPSIS


def when(moment: datetime | None) -> str:
    """A timestamp as ``YYYY-MM-DD HH:MM:SS`` (UTC)."""
    if moment is None:
        return ""
    return moment.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(slots=True)
class TreeNode:
    """One node of a JSON value shown as a collapsible tree."""

    label: str
    kind: str  # object, array, string, number, boolean, null, more
    value: str = ""
    size: int = 0
    children: list[TreeNode] = field(default_factory=list)
    clipped: int = 0  # characters of a string leaf not shown


@dataclass(slots=True)
class _Budget:
    nodes: int


def json_tree(value: Any, label: str = "arguments") -> TreeNode:
    """``value`` (any JSON value) as a tree of at most :data:`TREE_MAX_NODES` nodes."""
    return _node(label, value, 0, _Budget(TREE_MAX_NODES))


def _node(label: str, value: Any, depth: int, budget: _Budget) -> TreeNode:
    budget.nodes -= 1
    if isinstance(value, Mapping):
        items: Sequence[tuple[str, Any]] = [(str(k), v) for k, v in value.items()]
        return _container(label, "object", items, depth, budget)
    if isinstance(value, list | tuple):
        return _container(
            label, "array", [(f"[{i}]", v) for i, v in enumerate(value)], depth, budget
        )
    if isinstance(value, str):
        shown = value[:TREE_LEAF_MAX_CHARS]
        return TreeNode(label, "string", shown, len(value), clipped=len(value) - len(shown))
    if isinstance(value, bool):
        return TreeNode(label, "boolean", "true" if value else "false")
    if value is None:
        return TreeNode(label, "null", "null")
    return TreeNode(label, "number", str(value))


def _container(
    label: str, kind: str, items: Sequence[tuple[str, Any]], depth: int, budget: _Budget
) -> TreeNode:
    node = TreeNode(label, kind, size=len(items))
    if depth >= TREE_MAX_DEPTH:
        node.children.append(TreeNode(ELLIPSIS, "more", f"{len(items)} items not unfolded"))
        return node
    for shown, (key, child) in enumerate(items):
        if budget.nodes <= 0:
            node.children.append(TreeNode(ELLIPSIS, "more", f"{len(items) - shown} more not shown"))
            break
        node.children.append(_node(key, child, depth + 1, budget))
    return node


#: A message id as the store makes them; ids inside stored text become links to their page.
MESSAGE_ID_RE = re.compile(r"\bm_[0-9a-f]{16}\b")


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of stored text; ``message_id`` is set when the run is a message id to link."""

    text: str
    message_id: str | None = None


def link_ids(text: str) -> list[Piece]:
    """``text`` cut into pieces so the template can link message ids (as text, by id)."""
    pieces: list[Piece] = []
    at = 0
    for match in MESSAGE_ID_RE.finditer(text):
        if match.start() > at:
            pieces.append(Piece(text[at : match.start()]))
        pieces.append(Piece(match.group(0), match.group(0)))
        at = match.end()
    if at < len(text):
        pieces.append(Piece(text[at:]))
    return pieces


def environment() -> Environment:
    """The Jinja2 environment of the inspector: autoescape on, undefined names fail."""
    env = Environment(
        loader=PackageLoader("recallbox.web", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(thread_url=thread_url, message_url=message_url, link=link)
    env.filters.update(preview=preview, when=when, link_ids=link_ids, last_activity=last_activity)
    return env


@dataclass(frozen=True)
class Inspector:
    """What every route needs: the Box, the templates and the guard's form token."""

    box: Box
    env: Environment
    csrf_token: str

    def page(self, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        """Template ``name`` rendered with ``context`` (every value escaped on output)."""
        html = self.env.get_template(name).render(
            csrf_token=self.csrf_token, location=self.box.location, **context
        )
        return HTMLResponse(html, status_code=status)


def inspector(request: Request) -> Inspector:
    """The :class:`Inspector` of the app serving ``request``."""
    found: Inspector = request.app.state.inspector
    return found
