"""JavaScript, TypeScript and TSX (one extractor: the TypeScript grammars extend JavaScript's).

* Symbols: ``function``/generator declarations, ``const f = () => …``/``function …``
  declarators (``function``), classes (``abstract`` too), methods and arrow-function class
  fields (``method``), TypeScript interfaces (their method signatures are ``method``s), type
  aliases (``type``), enums, namespaces. A definition nested in a function is ``outer.inner``.
* ``this.m()`` is written ``Class.m``; ``new C()`` is a call of ``C``; decorators
  (``@Component(…)``) are calls from the decorated symbol.
* Imports bind ``import d from "./m"`` as ``./m:default``, ``{a as b}`` as ``./m:a``,
  ``* as ns`` as ``./m``, and ``const x = require("./m")`` / ``const {a} = require("./m")``
  the same way; the module specifier is resolved against the file's path later.
* ``extends`` (a class's base, an interface's extended interfaces) and ``implements`` are
  ``extends`` edges.
* The doc line is the first line of the comment right above the definition (or its ``export``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallbox.code.builder import UNKNOWN_RECEIVER, FileBuilder, Scope, first_doc_line
from recallbox.code.langs.common import (
    Handler,
    Visit,
    member_parts,
    module_stem,
    string_content,
    walk,
    with_self,
)
from recallbox.code.types import SymbolKind

if TYPE_CHECKING:
    from tree_sitter import Node

_MEMBERS = {"member_expression": ("object", "property")}
_NAMES = frozenset({"identifier", "this", "super"})
_FUNCTION_VALUES = frozenset(
    {
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
    }
)


def extract(builder: FileBuilder, root: Node) -> None:
    """Fill ``builder`` from a JavaScript/TypeScript/TSX syntax tree."""
    scope = builder.module(module_stem(builder.path, ("index",)), root, _file_doc(builder, root))
    walk(builder, root, scope, HANDLERS)


def _file_doc(builder: FileBuilder, root: Node) -> str:
    first = root.named_children[0] if root.named_child_count else None
    if first is None or first.type != "comment" or first.start_point.row != 0:
        return ""
    following = first.next_named_sibling
    # A comment right above the first definition documents that definition, not the file.
    if following is None or following.start_point.row > first.end_point.row + 1:
        return first_doc_line(builder.text(first), comment_markers=True)
    return ""


def _decorators(builder: FileBuilder, node: Node) -> list[Node]:
    found = list(node.children_by_field_name("decorator"))
    found += [
        child for child in node.named_children if child.type == "decorator" and child not in found
    ]
    parent = node.parent
    if parent is not None and parent.type == "export_statement":
        found = list(parent.children_by_field_name("decorator")) + found
    return found


def _define(
    builder: FileBuilder,
    node: Node,
    scope: Scope,
    name: str,
    kind: SymbolKind,
    *,
    body: Node | None,
    start: Node | None = None,
) -> tuple[Scope, Visit]:
    decorators = _decorators(builder, node)
    first = decorators[0] if decorators and decorators[0].start_byte < node.start_byte else start
    inner = builder.define(
        scope,
        node,
        name,
        kind,
        start=first,
        body=body,
        doc=builder.leading_comment(start or node),
        decorators=[builder.text(d).lstrip("@").strip() for d in decorators],
        self_names=("this",) if kind == "method" or kind == "class" else (),
    )
    visit: Visit = []
    for decorator in decorators:
        expression = decorator.named_children[0] if decorator.named_child_count else None
        if expression is None:
            continue
        if expression.type == "call_expression":
            visit.append((expression, inner))
        else:
            builder.call(inner, _parts(builder, expression), expression)
    return inner, visit


def _parts(builder: FileBuilder, node: Node) -> tuple[str, ...]:
    return member_parts(builder, node, member_types=_MEMBERS, name_types=_NAMES)


def _class(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    name = builder.text(node.child_by_field_name("name"))
    if not name:
        return None  # an anonymous class expression: its methods belong to the enclosing scope
    return _class_named(builder, node, scope, name)


def _class_named(
    builder: FileBuilder, node: Node, scope: Scope, name: str, start: Node | None = None
) -> Visit:
    body = node.child_by_field_name("body")
    kind: SymbolKind = "interface" if node.type == "interface_declaration" else "class"
    inner, visit = _define(builder, node, scope, name, kind, body=body, start=start)
    for clause in node.named_children:
        if clause.type in ("class_heritage", "extends_type_clause"):
            _heritage(builder, clause, inner)
    if body is not None:
        visit.append((body, inner))
    return visit


def _heritage(builder: FileBuilder, clause: Node, scope: Scope) -> None:
    targets: list[Node] = []
    for item in clause.named_children:
        if item.type in ("extends_clause", "implements_clause"):
            targets += item.children_by_field_name("value") or list(item.named_children)
        else:
            targets.append(item)
    for target in targets:
        if target.type in ("type_arguments", "arguments"):
            continue
        if target.type == "generic_type":
            target = target.child_by_field_name("name") or target
        parts = (
            tuple(builder.text(target).split("."))
            if target.type
            in (
                "identifier",
                "type_identifier",
                "nested_type_identifier",
                "member_expression",
            )
            else (UNKNOWN_RECEIVER,)
        )
        builder.extend(scope, parts, target)


def _function(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    name = builder.text(node.child_by_field_name("name")) or "default"
    body = node.child_by_field_name("body")
    kind: SymbolKind = "method" if scope.kind in ("class", "interface") else "function"
    inner, visit = _define(builder, node, scope, name, kind, body=body)
    visit += [(child, inner) for child in node.named_children if child.type != "decorator"]
    return visit


def _field(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    value = node.child_by_field_name("value")
    if value is None or value.type not in _FUNCTION_VALUES or scope.kind != "class":
        return None
    name = builder.text(node.child_by_field_name("name") or node.child_by_field_name("property"))
    inner, visit = _define(
        builder, node, scope, name, "method", body=value.child_by_field_name("body")
    )
    return [*visit, (value, inner)]


def _declarator(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    name_node = node.child_by_field_name("name")
    value = node.child_by_field_name("value")
    if name_node is None or value is None:
        return None
    if value.type == "call_expression" and _is_require(builder, value):
        _require(builder, name_node, value, scope)
        return []
    if name_node.type != "identifier":
        return None
    declaration = node.parent if node.parent is not None else node
    if value.type == "class":
        return _class_named(builder, value, scope, builder.text(name_node), start=declaration)
    if value.type not in _FUNCTION_VALUES:
        return None
    inner, visit = _define(
        builder,
        node,
        scope,
        builder.text(name_node),
        "function",
        body=value.child_by_field_name("body"),
        start=declaration,
    )
    return [*visit, (value, inner)]


def _is_require(builder: FileBuilder, call: Node) -> bool:
    function = call.child_by_field_name("function")
    return (
        function is not None
        and function.type == "identifier"
        and builder.text(function) == "require"
    )


def _require(builder: FileBuilder, name_node: Node, call: Node, scope: Scope) -> None:
    arguments = call.child_by_field_name("arguments")
    first = (
        arguments.named_children[0]
        if arguments is not None and arguments.named_child_count
        else None
    )
    if first is None or first.type != "string":
        return
    spec = string_content(builder, first)
    if name_node.type == "identifier":
        builder.bind(scope, builder.text(name_node), spec, call, joiner=":")
    elif name_node.type == "object_pattern":
        for item in name_node.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                local = builder.text(item)
                builder.bind(scope, local, f"{spec}:{local}", item)
            elif item.type == "pair_pattern":
                key = builder.text(item.child_by_field_name("key"))
                builder.bind(
                    scope, builder.text(item.child_by_field_name("value")), f"{spec}:{key}", item
                )


def _simple(kind: SymbolKind) -> Handler:
    def handler(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
        name = builder.text(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        inner, visit = _define(
            builder, node, scope, name, kind, body=body if kind != "type" else None
        )
        if body is not None and kind == "namespace":
            visit.append((body, inner))
        return visit

    return handler


def _call(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    field = "constructor" if node.type == "new_expression" else "function"
    function = node.child_by_field_name(field)
    if function is not None and not (
        function.type == "identifier" and builder.text(function) == "require"
    ):
        parts = with_self(scope, _parts(builder, function))
        if parts and parts[0] != "super":
            builder.call(scope, parts, function)
    return None


def _import(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    spec = string_content(builder, node.child_by_field_name("source"))
    clause = next((child for child in node.named_children if child.type == "import_clause"), None)
    if clause is None:
        builder.bind(scope, None, spec, node)  # import "./side-effect"
        return []
    for item in clause.named_children:
        if item.type == "identifier":
            builder.bind(scope, builder.text(item), f"{spec}:default", item)
        elif item.type == "namespace_import":
            local = next((c for c in item.named_children if c.type == "identifier"), None)
            builder.bind(scope, builder.text(local), spec, item, joiner=":")
        elif item.type == "named_imports":
            for specifier in item.named_children:
                if specifier.type != "import_specifier":
                    continue
                name = builder.text(specifier.child_by_field_name("name"))
                alias = builder.text(specifier.child_by_field_name("alias")) or name
                builder.bind(scope, alias, f"{spec}:{name}", specifier)
    return []


def _export(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    # An exported class's decorators belong to the class (see _decorators), not the module.
    return [(child, scope) for child in node.named_children if child.type != "decorator"]


HANDLERS: dict[str, Handler] = {
    "export_statement": _export,
    "class_declaration": _class,
    "abstract_class_declaration": _class,
    "class": _class,
    "interface_declaration": _class,
    "function_declaration": _function,
    "generator_function_declaration": _function,
    "method_definition": _function,
    "method_signature": _function,
    "function_signature": _function,
    "abstract_method_signature": _function,
    "public_field_definition": _field,
    "field_definition": _field,
    "variable_declarator": _declarator,
    "type_alias_declaration": _simple("type"),
    "enum_declaration": _simple("enum"),
    "internal_module": _simple("namespace"),
    "call_expression": _call,
    "new_expression": _call,
    "import_statement": _import,
}

__all__ = ["HANDLERS", "extract"]
