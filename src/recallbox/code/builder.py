"""The per-file collector the language extractors fill: scopes, symbols, raw references.

A language module walks a tree-sitter tree and tells a :class:`FileBuilder` what it sees:
``define`` a symbol (opening a :class:`Scope` for its body), ``call``/``extend`` a target
written as name parts, ``bind`` an import alias. :meth:`FileBuilder.finish` then resolves
what the file alone can resolve, in this order:

1. the target's first part names a definition visible from the reference — the enclosing
   functions and the module, innermost first (class bodies are not scopes for the code inside
   their methods, as in Python and JavaScript; ``self.x``/``this.x``/a Go receiver were written
   ``Class.x`` by the extractor) — and the rest of the parts lead to a definition inside it:
   confidence ``exact``;
2. the first part is an import alias: it is replaced by the import's qualified target, left for
   :mod:`recallbox.code.resolve`;
3. otherwise the parts are kept as written, for name-only resolution.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from recallbox.code.types import (
    CLASS_KINDS,
    CONFIDENCE_EXACT,
    Edge,
    EdgeKind,
    Symbol,
    SymbolKind,
    symbol_id,
)
from recallbox.text.identifiers import segment_identifier

if TYPE_CHECKING:
    from tree_sitter import Node

#: A signature longer than this is cut (with "…").
SIGNATURE_MAX_CHARS = 240
#: A docstring's first line longer than this is cut (with "…").
DOC_LINE_MAX_CHARS = 240
#: Stands for a receiver that is not a plain name (``f().g()``, ``xs[0].g()``).
UNKNOWN_RECEIVER = "?"

_SPACE = re.compile(r"\s+")
_COMMENT_MARKERS = re.compile(r"^\s*(?:/\*\*?|\*/|\*|//[/!]?|#)\s?")


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a reference sits: the innermost symbol and what ``self`` means there."""

    id: str
    qualname: str
    kind: SymbolKind
    parent: Scope | None = None
    class_qualname: str | None = None
    self_names: frozenset[str] = frozenset()

    def chain(self) -> Iterable[Scope]:
        """This scope and its enclosing ones, innermost first."""
        scope: Scope | None = self
        while scope is not None:
            yield scope
            scope = scope.parent


@dataclass(slots=True)
class _Reference:
    kind: EdgeKind
    scope: Scope
    parts: tuple[str, ...]
    line: int


@dataclass(slots=True)
class FileBuilder:
    """Collects one file's symbols and references (see the module docstring)."""

    path: str
    language: str
    source: bytes
    separator: str = "."
    symbols: list[Symbol] = field(default_factory=list)
    imports: list[Edge] = field(default_factory=list)
    aliases: dict[str, tuple[str, str]] = field(default_factory=dict)
    _references: list[_Reference] = field(default_factory=list)
    _qualnames: Counter[str] = field(default_factory=Counter)
    _by_qualname: dict[str, str] = field(default_factory=dict)

    def module(self, name: str, node: Node, doc: str = "") -> Scope:
        """Define the file's module symbol and return the top scope."""
        self.symbols.append(
            Symbol(
                id=self.path,
                name=name,
                qualname="",
                kind="module",
                file=self.path,
                start_line=1,
                end_line=max(1, node.end_point.row + (0 if node.end_point.column == 0 else 1)),
                language=self.language,
                doc=doc,
                name_seg=segment_identifier(name),
            )
        )
        self._by_qualname[""] = self.path
        return Scope(self.path, "", "module")

    def define(
        self,
        scope: Scope,
        node: Node,
        name: str,
        kind: SymbolKind,
        *,
        start: Node | None = None,
        body: Node | None = None,
        doc: str = "",
        decorators: Sequence[str] = (),
        self_names: Iterable[str] = (),
        owner: str | None = None,
        signature: str | None = None,
    ) -> Scope:
        """Define a symbol for ``node`` inside ``scope`` and return the scope of its body.

        ``start`` is the node the symbol's lines start at (its first decorator), ``body`` the
        node its signature stops before, ``owner`` a class qualname that overrides the scope
        as the parent (a Go method's receiver type, a Rust impl's type).
        """
        parent_qualname = scope.qualname if owner is None else owner
        qualname = f"{parent_qualname}.{name}" if parent_qualname else name
        self._qualnames[qualname] += 1
        if self._qualnames[qualname] > 1:
            qualname = f"{qualname}#{self._qualnames[qualname]}"
        ident = symbol_id(self.path, qualname)
        self._by_qualname.setdefault(qualname, ident)
        first = start if start is not None else node
        self.symbols.append(
            Symbol(
                id=ident,
                name=name,
                qualname=qualname,
                kind=kind,
                file=self.path,
                start_line=first.start_point.row + 1,
                end_line=node.end_point.row + 1,
                language=self.language,
                signature=_cut(signature, SIGNATURE_MAX_CHARS)
                if signature is not None
                else self.signature(node, body),
                doc=doc,
                decorators=tuple(decorators),
                name_seg=segment_identifier(name),
            )
        )
        is_class = kind in CLASS_KINDS
        inherited = scope if owner is None else None
        return Scope(
            ident,
            qualname,
            kind,
            parent=scope,
            class_qualname=qualname
            if is_class
            else owner or (inherited.class_qualname if inherited else None),
            self_names=frozenset(self_names) or (scope.self_names if not is_class else frozenset()),
        )

    def call(self, scope: Scope, parts: Sequence[str], node: Node) -> None:
        """Record a ``calls`` reference from ``scope`` to the target named by ``parts``."""
        self._reference("calls", scope, parts, node)

    def extend(self, scope: Scope, parts: Sequence[str], node: Node) -> None:
        """Record an ``extends`` reference from the class ``scope`` to a base named by ``parts``."""
        self._reference("extends", scope, parts, node)

    def bind(
        self,
        scope: Scope,
        alias: str | None,
        target: str,
        node: Node,
        *,
        imported: str | None = None,
        joiner: str | None = None,
    ) -> None:
        """Record an import bound locally as ``alias`` (if any) to the qualified ``target``.

        ``imported`` is the edge's target when it differs from what the alias stands for
        (``import a.b`` binds ``a`` but imports ``a.b``); ``joiner`` joins the alias's target
        to the rest of a name that starts with it (``:`` after a JavaScript or Go module
        path, the language's separator otherwise).
        """
        if alias and alias != "*":
            self.aliases.setdefault(alias, (target, joiner or self.separator))
        line = node.start_point.row + 1
        self.imports.append(Edge("imports", scope.id, imported or target, line))

    def text(self, node: Node | None) -> str:
        """The source text of ``node`` (``""`` for None), decoded leniently."""
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")

    def signature(self, node: Node, body: Node | None) -> str:
        """The header of a definition: its text up to the body, whitespace collapsed."""
        end = body.start_byte if body is not None else node.end_byte
        header = self.source[node.start_byte : end].decode("utf-8", errors="replace")
        header = _SPACE.sub(" ", header).strip().removesuffix("{").rstrip()
        return _cut(header, SIGNATURE_MAX_CHARS)

    def leading_comment(
        self, node: Node, *, skip: frozenset[str] = frozenset(), climb: bool = True
    ) -> str:
        """The first line of the comment block right above ``node`` (``""`` when none).

        ``skip`` names node types allowed between the comment and the node (Rust attributes);
        ``climb`` looks above the wrappers of ``node`` (``export``, a decorated definition).
        """
        anchor = node
        while climb and anchor.parent is not None and anchor.parent.type in _WRAPPERS:
            anchor = anchor.parent
        block: list[Node] = []
        sibling = anchor.prev_named_sibling
        below = anchor.start_point.row
        while sibling is not None and (sibling.type in skip or "comment" in sibling.type):
            if sibling.end_point.row < below - 1:
                break
            if "comment" in sibling.type:
                block.append(sibling)
            below = sibling.start_point.row
            sibling = sibling.prev_named_sibling
        for comment in reversed(block):
            line = first_doc_line(self.text(comment), comment_markers=True)
            if line:
                return line
        return ""

    def finish(self) -> list[Edge]:
        """The file's edges: imports, then calls and extends resolved as far as the file allows."""
        return [*self.imports, *(self._resolve(reference) for reference in self._references)]

    def _reference(self, kind: EdgeKind, scope: Scope, parts: Sequence[str], node: Node) -> None:
        cleaned = tuple(part for part in parts if part)
        if cleaned and cleaned != (UNKNOWN_RECEIVER,):
            self._references.append(_Reference(kind, scope, cleaned, node.start_point.row + 1))

    def _resolve(self, reference: _Reference) -> Edge:
        parts = reference.parts
        written = self.separator.join(parts)
        for scope in reference.scope.chain():
            if scope.kind in CLASS_KINDS and scope is not reference.scope:
                continue
            prefix = f"{scope.qualname}." if scope.qualname else ""
            target = self._by_qualname.get(prefix + ".".join(parts))
            if target is not None:
                return Edge(
                    reference.kind,
                    reference.scope.id,
                    written,
                    reference.line,
                    target,
                    CONFIDENCE_EXACT,
                )
        alias = self.aliases.get(parts[0])
        if alias is not None:
            target, joiner = alias
            rest = self.separator.join(parts[1:])
            written = f"{target}{joiner}{rest}" if rest else target
        return Edge(reference.kind, reference.scope.id, written, reference.line)


# Nodes that wrap a definition, so the doc comment sits above the wrapper.
_WRAPPERS = frozenset({"export_statement", "decorated_definition"})


def first_doc_line(text: str, *, comment_markers: bool = False) -> str:
    """The first non-empty line of a docstring or comment, markers and quotes removed."""
    for raw in text.splitlines():
        line = _COMMENT_MARKERS.sub("", raw) if comment_markers else raw
        line = line.strip().strip("\"'").strip()
        if comment_markers:
            line = line.removesuffix("*/").strip()
        if line:
            return _cut(line, DOC_LINE_MAX_CHARS)
    return ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "DOC_LINE_MAX_CHARS",
    "SIGNATURE_MAX_CHARS",
    "UNKNOWN_RECEIVER",
    "FileBuilder",
    "Scope",
    "first_doc_line",
]
