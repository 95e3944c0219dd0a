"""The tree walk every language extractor shares, and small node helpers.

The walk is iterative (a syntax tree of arbitrary input can be deeper than Python's recursion
limit). Each language maps node types to handlers; a handler records what it sees on the
:class:`~recallbox.code.builder.FileBuilder` and returns the children to visit next, each with
the scope it belongs to, or ``None`` to visit every named child in the current scope.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias

from recallbox.code.builder import UNKNOWN_RECEIVER, FileBuilder, Scope

if TYPE_CHECKING:
    from tree_sitter import Node

Visit: TypeAlias = "list[tuple[Node, Scope]]"
Handler: TypeAlias = "Callable[[FileBuilder, Node, Scope], Visit | None]"


def walk(builder: FileBuilder, root: Node, scope: Scope, handlers: Mapping[str, Handler]) -> None:
    """Visit ``root``'s subtree depth-first, in source order, dispatching on node type."""
    stack: Visit = [(root, scope)]
    pop, push, lookup = stack.pop, stack.extend, handlers.get
    while stack:
        node, current = pop()
        handler = lookup(node.type)
        if handler is not None:
            children = handler(builder, node, current)
            if children is not None:
                push(reversed(children))
                continue
        if node.named_child_count:
            push([(child, current) for child in reversed(node.named_children)])


def member_parts(
    builder: FileBuilder,
    node: Node,
    *,
    member_types: Mapping[str, tuple[str, str]],
    name_types: frozenset[str],
) -> tuple[str, ...]:
    """The dotted name parts of an expression like ``a.b.c`` (``("?", "c")`` for ``f().c``).

    ``member_types`` maps a member-access node type to its (object field, member field);
    ``name_types`` are the node types that are a plain name.
    """
    tail: list[str] = []
    current: Node | None = node
    while current is not None and current.type in member_types:
        object_field, member_field = member_types[current.type]
        tail.append(builder.text(current.child_by_field_name(member_field)))
        current = current.child_by_field_name(object_field)
    if current is not None and current.type in name_types:
        tail.append(builder.text(current))
    else:
        tail.append(UNKNOWN_RECEIVER)
    return tuple(reversed(tail))


def with_self(scope: Scope, parts: tuple[str, ...]) -> tuple[str, ...]:
    """``self.m`` / ``this.m`` / a Go receiver's ``s.m`` rewritten as ``Class.m``."""
    if len(parts) > 1 and parts[0] in scope.self_names and scope.class_qualname:
        return (*scope.class_qualname.split("."), *parts[1:])
    return parts


def module_stem(path: str, index_names: Sequence[str]) -> str:
    """A file's module name: its stem, or its directory's name for ``__init__.py``/``index.ts``."""
    directory, base = posixpath.split(path)
    stem = base.split(".", 1)[0]
    if stem in index_names and directory:
        return posixpath.basename(directory)
    return stem


def string_content(builder: FileBuilder, node: Node | None) -> str:
    """The text of a string literal without its quotes."""
    text = builder.text(node).strip()
    return text.strip("\"'`")


__all__ = ["Handler", "Visit", "member_parts", "module_stem", "string_content", "walk", "with_self"]
