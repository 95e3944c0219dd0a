"""Rust: functions, methods of ``impl`` blocks and traits, structs, enums, traits, modules, ``use``.

* A function in ``impl Type`` or ``impl Trait for Type`` is the method ``Type.name`` (a second
  method of that name from another impl gets ``#2``); in a ``trait`` it is ``Trait.name``.
  ``self.m()`` and ``Self::m()`` are written ``Type::m``.
* ``struct``/``union`` (``struct``), ``enum``, ``trait``, ``type`` aliases and inline
  ``mod m { … }`` (``namespace``) are symbols; ``mod m;`` is an import of ``self::m``.
* ``impl Trait for Type`` is an ``extends`` edge from ``Type`` (when it is declared in the same
  file, else from the module) to ``Trait``; so are a trait's supertraits.
* ``use a::b::{c, d as e}`` binds ``c`` and ``e`` to ``a::b::c`` and ``a::b::d``; targets are
  written with ``::`` and resolved against the crate's files later.
* Macro invocations are not calls. The doc line is the first ``///`` (or other) comment line
  above the item, attributes (``#[derive]``) in between allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallbox.code.builder import FileBuilder, Scope, first_doc_line
from recallbox.code.langs.common import Handler, Visit, member_parts, module_stem, walk, with_self
from recallbox.code.types import SymbolKind
from recallbox.code.types import symbol_id as make_id

if TYPE_CHECKING:
    from tree_sitter import Node

_MEMBERS = {"scoped_identifier": ("path", "name"), "field_expression": ("value", "field")}
_NAMES = frozenset({"identifier", "self", "crate", "super", "type_identifier", "metavariable"})
_ATTRIBUTES = frozenset({"attribute_item", "inner_attribute_item"})
_ITEM_KINDS: dict[str, SymbolKind] = {
    "struct_item": "struct",
    "union_item": "struct",
    "enum_item": "enum",
    "trait_item": "trait",
    "type_item": "type",
    "mod_item": "namespace",
}


def extract(builder: FileBuilder, root: Node) -> None:
    """Fill ``builder`` from a Rust syntax tree."""
    doc = ""
    for child in root.named_children:
        if "comment" not in child.type:
            break
        if builder.text(child).startswith("//!"):
            doc = first_doc_line(builder.text(child), comment_markers=True)
            break
    scope = builder.module(module_stem(builder.path, ("mod", "lib", "main")), root, doc)
    walk(builder, root, scope, HANDLERS)


def _doc(builder: FileBuilder, node: Node) -> str:
    return builder.leading_comment(node, skip=_ATTRIBUTES)


def _parts(builder: FileBuilder, node: Node) -> tuple[str, ...]:
    if node.type == "generic_function":
        inner = node.child_by_field_name("function")
        return _parts(builder, inner) if inner is not None else ()
    return member_parts(builder, node, member_types=_MEMBERS, name_types=_NAMES)


def _type_name(builder: FileBuilder, node: Node | None) -> str:
    while node is not None and node.type in (
        "generic_type",
        "reference_type",
        "scoped_type_identifier",
    ):
        inner = node.child_by_field_name("type") or node.child_by_field_name("name")
        if inner is None:
            break
        node = inner
    return builder.text(node) if node is not None else ""


def _function(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    name = builder.text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    in_impl = scope.kind == "struct" and scope.class_qualname is not None
    kind: SymbolKind = "method" if in_impl or scope.kind == "trait" else "function"
    inner = builder.define(
        scope,
        node,
        name,
        kind,
        body=body,
        doc=_doc(builder, node),
        owner=scope.class_qualname if in_impl else None,
        self_names=("self",) if kind == "method" else (),
    )
    return [(body, inner)] if body is not None else []


def _item(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    kind = _ITEM_KINDS[node.type]
    name = builder.text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    if node.type == "mod_item" and body is None:
        builder.bind(scope, name, f"self::{name}", node)
        return []
    inner = builder.define(scope, node, name, kind, body=body, doc=_doc(builder, node))
    if node.type == "trait_item":
        bounds = node.child_by_field_name("bounds")
        for bound in bounds.named_children if bounds is not None else ():
            if bound.type in ("type_identifier", "scoped_type_identifier"):
                builder.extend(inner, tuple(builder.text(bound).split("::")), bound)
    if node.type in ("trait_item", "mod_item") and body is not None:
        return [(body, inner)]
    return []


def _impl(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    type_name = _type_name(builder, node.child_by_field_name("type"))
    trait = node.child_by_field_name("trait")
    body = node.child_by_field_name("body")
    if not type_name:
        return [(body, scope)] if body is not None else []
    type_qualname = f"{scope.qualname}.{type_name}" if scope.qualname else type_name
    source = make_id(builder.path, type_qualname)
    known = any(symbol.id == source for symbol in builder.symbols)
    owner_scope = Scope(
        source if known else scope.id,
        type_qualname,
        "struct",
        parent=scope,
        class_qualname=type_qualname,
        self_names=frozenset({"self"}),
    )
    if trait is not None:
        trait_node = trait.child_by_field_name("type") if trait.type == "generic_type" else trait
        builder.extend(owner_scope, tuple(builder.text(trait_node).split("::")), trait)
    # The impl block is a class-like scope: its functions are methods of ``type_qualname``.
    impl_scope = Scope(
        scope.id,
        scope.qualname,
        "struct",
        parent=scope,
        class_qualname=type_qualname,
        self_names=frozenset({"self"}),
    )
    return [(body, impl_scope)] if body is not None else []


def _call(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    function = node.child_by_field_name("function")
    if function is None:
        return None
    parts = _parts(builder, function)
    if parts and parts[0] == "Self" and scope.class_qualname:
        parts = (*scope.class_qualname.split("."), *parts[1:])
    builder.call(scope, with_self(scope, parts), function)
    return None


def _use(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    argument = node.child_by_field_name("argument")
    if argument is not None:
        _use_tree(builder, scope, argument, "")
    return []


def _use_tree(builder: FileBuilder, scope: Scope, node: Node, prefix: str) -> None:
    def join(tail: str) -> str:
        return f"{prefix}::{tail}" if prefix and tail else prefix or tail

    if node.type in ("identifier", "scoped_identifier", "crate", "self", "super"):
        path = join(builder.text(node))
        last = path.rsplit("::", 1)[-1]
        if last == "self":
            path = path.rsplit("::", 1)[0]
            last = path.rsplit("::", 1)[-1]
        builder.bind(scope, last, path, node)
    elif node.type == "use_as_clause":
        path = join(builder.text(node.child_by_field_name("path")))
        builder.bind(scope, builder.text(node.child_by_field_name("alias")), path, node)
    elif node.type == "use_wildcard":
        wildcard = node.named_children[0] if node.named_child_count else None
        builder.bind(scope, "*", join(builder.text(wildcard)), node)
    elif node.type == "scoped_use_list":
        listed = node.child_by_field_name("list")
        if listed is not None:
            _use_tree(builder, scope, listed, join(builder.text(node.child_by_field_name("path"))))
    elif node.type == "use_list":
        for item in node.named_children:
            _use_tree(builder, scope, item, prefix)


HANDLERS: dict[str, Handler] = {
    "function_item": _function,
    "function_signature_item": _function,
    "struct_item": _item,
    "union_item": _item,
    "enum_item": _item,
    "trait_item": _item,
    "type_item": _item,
    "mod_item": _item,
    "impl_item": _impl,
    "call_expression": _call,
    "use_declaration": _use,
    "macro_invocation": lambda builder, node, scope: [],
}

__all__ = ["HANDLERS", "extract"]
