"""Python: modules, classes, functions, methods (nested too), decorators, calls, imports, bases.

* A ``def`` directly in a class body is a ``method``; any other ``def`` is a ``function``
  (``outer.inner`` for a nested one). Its lines start at its first decorator.
* The first parameter of a method (unless ``@staticmethod``) is its ``self``: ``self.m()`` is
  written ``Class.m``, and so inside functions nested in the method.
* Decorators are recorded on the symbol, and each one is a ``calls`` edge from the decorated
  symbol (``@app.route("/")`` calls ``app.route``; ``@cache`` applies ``cache``).
* ``import a.b`` binds ``a``; ``import a.b as c`` binds ``c``; ``from .m import x as y`` binds
  ``y`` to ``.m.x`` (relative names are resolved against the file's path later).
* Bases: each positional base of a class (``Generic[T]`` counts as ``Generic``) is an
  ``extends`` edge; keyword arguments (``metaclass=``) are not.
* The docstring is the first statement of the body when it is a string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallbox.code.builder import FileBuilder, Scope, first_doc_line
from recallbox.code.langs.common import Handler, Visit, member_parts, module_stem, walk, with_self

if TYPE_CHECKING:
    from tree_sitter import Node

_MEMBERS = {"attribute": ("object", "attribute")}
_NAMES = frozenset({"identifier"})


def extract(builder: FileBuilder, root: Node) -> None:
    """Fill ``builder`` from a Python syntax tree."""
    scope = builder.module(
        module_stem(builder.path, ("__init__",)), root, _docstring(builder, root)
    )
    walk(builder, root, scope, HANDLERS)


def _dotted(builder: FileBuilder, node: Node) -> tuple[str, ...]:
    if node.type == "subscript":  # Generic[T], list[int]
        value = node.child_by_field_name("value")
        return _dotted(builder, value) if value is not None else ()
    return member_parts(builder, node, member_types=_MEMBERS, name_types=_NAMES)


def _docstring(builder: FileBuilder, body: Node | None) -> str:
    if body is None or body.named_child_count == 0:
        return ""
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_child_count == 1:
        literal = first.named_children[0]
        if literal.type in ("string", "concatenated_string"):
            text = builder.text(literal).lstrip("rRbBuUfF")
            return first_doc_line(text.strip("\"'"))
    return ""


def _definition(
    builder: FileBuilder, node: Node, scope: Scope, decorated: Node | None = None
) -> Visit:
    decorators = (
        []
        if decorated is None
        else [child for child in decorated.named_children if child.type == "decorator"]
    )
    names = [builder.text(d).lstrip("@").strip() for d in decorators]
    name = builder.text(node.child_by_field_name("name"))
    body = node.child_by_field_name("body")
    doc = _docstring(builder, body)
    visit: Visit = []
    if node.type == "class_definition":
        inner = builder.define(
            scope, node, name, "class", start=decorated, body=body, doc=doc, decorators=names
        )
        bases = node.child_by_field_name("superclasses")
        for base in bases.named_children if bases is not None else ():
            if base.type in ("identifier", "attribute", "subscript"):
                builder.extend(inner, _dotted(builder, base), base)
    else:
        is_method = scope.kind == "class"
        parameters = node.child_by_field_name("parameters")
        self_names = (
            _self_name(builder, parameters) if is_method and "staticmethod" not in names else ()
        )
        inner = builder.define(
            scope,
            node,
            name,
            "method" if is_method else "function",
            start=decorated,
            body=body,
            doc=doc,
            decorators=names,
            self_names=self_names,
        )
        if parameters is not None:
            visit.append((parameters, scope))
    for decorator in decorators:
        expression = decorator.named_children[0] if decorator.named_child_count else None
        if expression is None:
            continue
        if expression.type == "call":
            visit.append((expression, inner))
        else:
            builder.call(inner, _dotted(builder, expression), expression)
    if body is not None:
        visit.append((body, inner))
    return visit


def _self_name(builder: FileBuilder, parameters: Node | None) -> tuple[str, ...]:
    if parameters is None or parameters.named_child_count == 0:
        return ()
    first = parameters.named_children[0]
    if first.type != "identifier":
        first = next((c for c in first.named_children if c.type == "identifier"), first)
    return (builder.text(first),) if first.type == "identifier" else ()


def _decorated(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    definition = node.child_by_field_name("definition")
    if definition is None:
        return None
    return _definition(builder, definition, scope, node)


def _plain_definition(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    return _definition(builder, node, scope)


def _call(builder: FileBuilder, node: Node, scope: Scope) -> Visit | None:
    function = node.child_by_field_name("function")
    if function is not None:
        builder.call(scope, with_self(scope, _dotted(builder, function)), function)
    return None


def _import(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    for item in node.named_children:
        if item.type == "dotted_name":
            dotted = builder.text(item)
            head = dotted.split(".", 1)[0]
            builder.bind(scope, head, head, item, imported=dotted)
        elif item.type == "aliased_import":
            dotted = builder.text(item.child_by_field_name("name"))
            builder.bind(scope, builder.text(item.child_by_field_name("alias")), dotted, item)
    return []


def _import_from(builder: FileBuilder, node: Node, scope: Scope) -> Visit:
    module = builder.text(node.child_by_field_name("module_name"))
    joiner = "" if module.endswith(".") else "."
    for item in node.children_by_field_name("name"):
        if item.type == "aliased_import":
            name = builder.text(item.child_by_field_name("name"))
            alias = builder.text(item.child_by_field_name("alias"))
        else:
            name = alias = builder.text(item)
        builder.bind(scope, alias, f"{module}{joiner}{name}", item)
    if any(child.type == "wildcard_import" for child in node.named_children):
        builder.bind(scope, "*", module, node)
    return []


HANDLERS: dict[str, Handler] = {
    "class_definition": _plain_definition,
    "function_definition": _plain_definition,
    "decorated_definition": _decorated,
    "call": _call,
    "import_statement": _import,
    "import_from_statement": _import_from,
    "future_import_statement": lambda builder, node, scope: [],
}

__all__ = ["HANDLERS", "extract"]
