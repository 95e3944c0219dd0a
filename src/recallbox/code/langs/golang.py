"""Go: functions, methods (``Type.Method`` by receiver), structs, interfaces, types, imports.

* A method's qualname is its receiver type's (``func (s *Server) Handle`` → ``Server.Handle``),
  whichever file of the package the type is declared in; calls on the receiver variable
  (``s.log()``) are written ``Server.log``.
* ``type X struct``/``interface``/other: kinds ``struct``, ``interface``, ``type``; an
  interface's method elements are ``method``s of it. An embedded field (``struct{ Base }``) or
  an embedded interface is an ``extends`` edge.
* ``import u "example.com/m/util"`` binds ``u`` (else the path's last element, ignoring a
  ``/vN`` suffix) to the package path; a call ``u.Parse()`` is written
  ``example.com/m/util:Parse``. Calls to names of the same package resolve across its files later.
* The doc line is the first line of the comment right above the declaration.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from recallbox.code.builder import FileBuilder, Scope
from recallbox.code.langs.common import (
    Handler,
    Visit,
    member_parts,
    string_content,
    walk,
    with_self,
)
from recallbox.code.types import SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

_MEMBERS = {"selector_expression": ("operand", "field")}
_NAMES = frozenset({"identifier"})
_MAJOR_VERSION = re.compile(r"v\d+")


def extract(builder: FileBuilder, root: Node) -> None:
    """Fill ``builder`` from a Go syntax tree."""
    package = next((c for c in root.named_children if c.type == "package_clause"), None)
    name = (
        builder.text(package.named_children[0])
        if package is not None and package.named_child_count
        else ""
    )
    doc = builder.leading_comment(package, climb=False) if package is not None else ""
    scope = builder.module(name or builder.path.rsplit("/", 1)[-1].split(".", 1)[0], root, doc)
    walk(builder, root, scope, HANDLERS)


def _type_name(builder: FileBuilder, node: Node | None) -> str:
    while node is not None and node.type in ("pointer_type", "generic_type", "parenthesized_type"):
        inner = node.child_by_field_name("type")
        node = (
            inner
            if inner is not None
            else (node.named_children[0] if node.named_child_count else None)
        )
    return builder.text(node) if node is not None else ""


def _function(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    name = builder.text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    doc = builder.leading_comment(node)
    if node.type == "method_declaration":
        receiver = node.child_by_field_name("receiver")
        parameter = (
            receiver.named_children[0]
            if receiver is not None and receiver.named_child_count
            else None
        )
        owner = (
            _type_name(builder, parameter.child_by_field_name("type"))
            if parameter is not None
            else ""
        )
        self_name = (
            builder.text(parameter.child_by_field_name("name")) if parameter is not None else ""
        )
        inner = builder.define(
            scope,
            node,
            name,
            "method",
            body=body,
            doc=doc,
            owner=owner or None,
            self_names=(self_name,) if self_name else (),
        )
    else:
        inner = builder.define(scope, node, name, "function", body=body, doc=doc)
    return [(body, inner)] if body is not None else []


def _type_spec(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    name = builder.text(node.child_by_field_name("name"))
    shape = node.child_by_field_name("type")
    kind: SymbolKind = {"struct_type": "struct", "interface_type": "interface"}.get(
        shape.type if shape is not None else "", "type"
    )  # type: ignore[assignment]
    declaration = node.parent
    single = declaration is not None and declaration.named_child_count == 1
    doc = builder.leading_comment(declaration if single and declaration is not None else node)
    signature = f"type {name} {kind}" if kind in ("struct", "interface") else None
    inner = builder.define(
        scope,
        node,
        name,
        kind,
        start=declaration if single else None,
        doc=doc,
        signature=signature,
    )
    if shape is not None and kind == "struct":
        fields = next((c for c in shape.named_children if c.type == "field_declaration_list"), None)
        for field in fields.named_children if fields is not None else ():
            if field.type == "field_declaration" and field.child_by_field_name("name") is None:
                _embed(builder, inner, field.child_by_field_name("type"))
    elif shape is not None and kind == "interface":
        for element in shape.named_children:
            if element.type == "method_elem":
                builder.define(
                    inner,
                    element,
                    builder.text(element.child_by_field_name("name")),
                    "method",
                    doc=builder.leading_comment(element),
                )
            elif element.type in ("type_elem", "constraint_elem"):
                for embedded in element.named_children:
                    _embed(builder, inner, embedded)
    return []


def _embed(builder: FileBuilder, scope: Scope, node: Node | None) -> None:
    while node is not None and node.type == "pointer_type" and node.named_child_count:
        node = node.named_children[0]
    if node is None:
        return
    parts: tuple[str, ...]
    if node.type == "qualified_type":
        parts = (
            builder.text(node.child_by_field_name("package")),
            builder.text(node.child_by_field_name("name")),
        )
    elif node.type == "type_identifier":
        parts = (builder.text(node),)
    else:
        return
    builder.extend(scope, parts, node)


def _call(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    function = node.child_by_field_name("function")
    if function is not None:
        parts = member_parts(builder, function, member_types=_MEMBERS, name_types=_NAMES)
        builder.call(scope, with_self(scope, parts), function)
    return None


def _import_spec(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    path = string_content(builder, node.child_by_field_name("path"))
    name = builder.text(node.child_by_field_name("name"))
    if name in ("_", "."):
        builder.bind(scope, None, path, node)
        return []
    if not name:
        elements = [part for part in path.split("/") if part]
        if len(elements) > 1 and _MAJOR_VERSION.fullmatch(elements[-1]):
            elements.pop()
        name = elements[-1].split(".", 1)[0] if elements else path
    builder.bind(scope, name, path, node, joiner=":")
    return []


HANDLERS: dict[str, Handler] = {
    "function_declaration": _function,
    "method_declaration": _function,
    "type_spec": _type_spec,
    "type_alias": _type_spec,
    "call_expression": _call,
    "import_spec": _import_spec,
}

__all__ = ["HANDLERS", "extract"]
