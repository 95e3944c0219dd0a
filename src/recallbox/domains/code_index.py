"""Indexing a repository into the code corpus (issue #11 items 1, 2): ``box.index_code``.

One run: read what the scope holds (:meth:`~recallbox.storage.base.CodeStore.code_graph`),
walk and parse only the files whose stamp or hash changed
(:func:`~recallbox.code.parse_repository`), resolve edges across the scope — every edge after
a file was added or deleted or its imports or bases changed, else only the stored edges a
changed symbol name can affect (:mod:`recallbox.code.reresolve`) — and write the run in one
transaction. Only this module needs the ``code`` extra (tree-sitter); searching the stored index
does not.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from operator import attrgetter
from pathlib import Path
from typing import cast

from recallbox.code import parse_repository, resolve_edges
from recallbox.code.arguments import MAX_SCOPE_CHARS, check_root, check_scope
from recallbox.code.incremental import FileStamp, file_hash
from recallbox.code.index import ParsedRepository, Progress
from recallbox.code.reresolve import (
    FULL,
    ResolutionPlan,
    bases_changed,
    bases_of,
    plan_resolution,
    target_last,
)
from recallbox.code.snippets import source_lines, symbol_snippet
from recallbox.code.types import (
    EDGE_IMPORTS,
    CodeIndexReport,
    Confidence,
    Edge,
    EdgeKind,
    FileIndex,
    Symbol,
    SymbolKind,
)
from recallbox.domains.privacy import normalize_source_path
from recallbox.errors import InvalidArgument
from recallbox.storage.base import CodeStore
from recallbox.storage.values_code import (
    CodeEdgeFix,
    CodeEdgeRecord,
    CodeFile,
    CodeFileWrite,
    CodeGraphFile,
    CodeIndexWrite,
    CodeSymbolRecord,
)
from recallbox.text.cjk import segment
from recallbox.text.identifiers import segment_code_text, segment_identifier

_ORDINAL = attrgetter("ordinal")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for one index run.

    A run builds some 10^5 small records (symbols, edges, their stored rows), none in a
    reference cycle; the collector's passes over them cost about half of a re-index's CPU time
    (measured: ``benchmarks/code_index.py``). Reference counting still frees everything.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _source_of(path: str) -> str:
    """The path as the privacy gate compares it (DESIGN §5)."""
    try:
        return normalize_source_path(path)
    except InvalidArgument:
        return path.casefold()


def symbol_record(symbol: Symbol, lines: Sequence[str]) -> CodeSymbolRecord:
    """What is stored of one symbol: its fields, its snippet and its indexed texts."""
    qualname = symbol.qualname.split("#", 1)[0] or symbol.name
    words = [
        segment_identifier(qualname),
        segment_code_text(symbol.signature),
        segment_code_text(symbol.doc),
        segment_code_text(" ".join(symbol.decorators)),
        segment_identifier(symbol.file),
    ]
    return CodeSymbolRecord(
        symbol_id=symbol.id,
        name=symbol.name,
        qualname=symbol.qualname,
        kind=symbol.kind,
        start_line=symbol.start_line,
        end_line=symbol.end_line,
        signature=symbol.signature,
        doc=symbol.doc,
        snippet=symbol_snippet(lines, symbol.start_line, symbol.end_line),
        name_seg=symbol.name_seg or segment_identifier(symbol.name),
        content_seg=segment(" ".join(word for word in words if word)),
        content_hash=file_hash(f"{symbol.signature}\n{symbol.doc}".encode("utf-8", "replace")),
    )


def edge_record(ordinal: int, edge: Edge) -> CodeEdgeRecord:
    """What is stored of one edge (its position in its file's edges: ``ordinal``)."""
    return CodeEdgeRecord(
        ordinal, edge.kind, edge.source_id, edge.target_name, target_last(edge.target_name),
        edge.line, edge.target_id, edge.confidence,
    )  # fmt: skip


def _file_row(file: FileIndex, stamp: FileStamp | None) -> CodeFile:
    return CodeFile(
        file.path, _source_of(file.path), file.language, file.hash, file.size,
        stamp.mtime_ns if stamp else file.mtime_ns, stamp.identity if stamp else None, file.error,
    )  # fmt: skip


def stored_file(graph: CodeGraphFile, calls: Sequence[CodeEdgeRecord] = ()) -> FileIndex:
    """A stored file as the resolver reads it: its symbols, its imports and extends edges and
    the ``calls`` edges given, in ordinal order."""
    f = graph.file
    symbols = tuple(
        Symbol(
            r.symbol_id,
            r.name,
            r.qualname,
            cast("SymbolKind", r.kind),
            f.path,
            r.start_line,
            r.end_line,
            f.language,
        )
        for r in graph.symbols
    )
    records = sorted((*graph.edges, *calls), key=_ORDINAL)
    edges = tuple(
        Edge(
            cast("EdgeKind", r.kind),
            r.source_id,
            r.target_name,
            r.line,
            r.target_id,
            cast("Confidence", r.confidence),
        )
        for r in records
    )
    return FileIndex(f.path, f.language, f.hash, symbols, edges, f.error, f.size, f.mtime_ns)


class _BasesMoved(Exception):
    """A partial pass found an ``extends`` edge resolving elsewhere: resolve in full."""


class _Resolution:
    """The edges of the parsed files and the fixes of stored ones, from one resolve pass."""

    def __init__(self) -> None:
        self.new_edges: dict[str, list[Edge]] = {}
        self.fixes: list[CodeEdgeFix] = []
        self.reresolved = 0


def _resolve(
    store: CodeStore,
    scope: str,
    graph: Mapping[str, CodeGraphFile],
    parsed: ParsedRepository,
    plan: ResolutionPlan,
    root_name: str,
) -> _Resolution:
    """Resolve per ``plan``.

    Raises:
        _BasesMoved: a partial pass found that base classes moved.
    """
    calls = (
        store.code_call_edges(scope)
        if plan.full
        else store.code_call_edges(scope, names=plan.names, mentions=plan.keys)
    )
    changed = {file.path for file in parsed.files} | set(parsed.changes.deleted)
    kept = [graph[path] for path in sorted(graph) if path not in changed]
    files = [stored_file(item, calls.get(item.file.path, ())) for item in kept]
    parsed_paths = {file.path for file in parsed.files}

    result = _Resolution()

    def selected(file: FileIndex, edge: Edge) -> bool:
        if file.path in parsed_paths:
            return True
        if plan.selects(edge.target_name):
            result.reresolved += 1
            return True
        return False

    everything = [*files, *parsed.files]
    resolved = iter(resolve_edges(everything, root_name=root_name, only=selected))
    for item, file in zip(kept, files, strict=True):
        after = [next(resolved) for _ in file.edges]
        if not plan.full and bases_changed(file.edges, after):
            raise _BasesMoved
        records = sorted((*item.edges, *calls.get(item.file.path, ())), key=_ORDINAL)
        result.fixes += [
            CodeEdgeFix(item.file.path, record.ordinal, edge.target_id, edge.confidence)
            for record, edge in zip(records, after, strict=True)
            if (record.target_id, record.confidence) != (edge.target_id, edge.confidence)
        ]
    for file in parsed.files:
        result.new_edges[file.path] = edges = [next(resolved) for _ in file.edges]
        before = graph.get(file.path)
        if (
            not plan.full
            and before is not None
            and bases_of(stored_file(before).edges) != bases_of(edges)
        ):
            raise _BasesMoved
    return result


def _restamped(graph: Mapping[str, CodeGraphFile], parsed: ParsedRepository) -> list[CodeFile]:
    """Unchanged files whose size, mtime or identity moved (a touch, a copy, a checkout)."""
    out = []
    for path in parsed.changes.unchanged:
        stamp, stored = parsed.stamps[path], graph[path].file
        if (stamp.size, stamp.mtime_ns, stamp.identity) != (
            stored.size,
            stored.mtime_ns,
            stored.identity,
        ):
            out.append(
                replace(stored, size=stamp.size, mtime_ns=stamp.mtime_ns, identity=stamp.identity)
            )
    return out


def _writes(parsed: ParsedRepository, resolution: _Resolution) -> list[CodeFileWrite]:
    writes = []
    for file in parsed.files:
        lines = source_lines(parsed.sources[file.path])
        edges = resolution.new_edges[file.path]
        writes.append(
            CodeFileWrite(
                _file_row(file, parsed.stamps.get(file.path)),
                tuple(symbol_record(symbol, lines) for symbol in file.symbols),
                tuple(edge_record(i, edge) for i, edge in enumerate(edges)),
            )
        )
    return writes


def index_code(
    store: CodeStore, path: object, scope: object = None, *, progress: Progress | None = None
) -> CodeIndexReport:
    """Index (or re-index) the repository at ``path`` as ``scope`` (see :meth:`Box.index_code`).

    Raises:
        InvalidArgument: ``path`` is not a directory, or a bad scope name.
        DependencyMissing: the ``code`` extra (tree-sitter) is not installed.
    """
    root = check_root(path)
    name = check_scope(scope, root.name)
    with collector_paused():
        return _index(store, root, name, progress)


def _index(store: CodeStore, root: Path, name: str, progress: Progress | None) -> CodeIndexReport:
    graph = {item.file.path: item for item in store.code_graph(name)}
    stamps = {
        p: FileStamp(p, g.file.hash, g.file.size, g.file.mtime_ns, g.file.identity)
        for p, g in graph.items()
    }
    parsed = parse_repository(root, scope=name, stamps=stamps, progress=progress)
    old = {f.path: stored_file(graph[f.path]) for f in parsed.files if f.path in graph}
    imports = [e.target_name for g in graph.values() for e in g.edges if e.kind == EDGE_IMPORTS]
    imports += [e.target_name for f in parsed.files for e in f.edges if e.kind == EDGE_IMPORTS]
    plan = plan_resolution(parsed.changes, old, parsed.files, imports)
    try:
        resolution = (
            _resolve(store, name, graph, parsed, plan, root.name)
            if parsed.files or parsed.changes.deleted
            else _Resolution()
        )
    except _BasesMoved:
        plan = FULL
        resolution = _resolve(store, name, graph, parsed, plan, root.name)
    store.write_code_index(
        CodeIndexWrite(
            scope=name,
            root=str(root),
            commit=parsed.report.commit,
            files=tuple(_writes(parsed, resolution)),
            deleted=parsed.changes.deleted,
            restamped=tuple(_restamped(graph, parsed)),
            fixes=tuple(resolution.fixes),
        )
    )
    totals = next((s for s in store.code_scopes() if s.name == name), None)
    return replace(
        parsed.report,
        total_files=totals.files if totals else 0,
        total_symbols=totals.symbols if totals else 0,
        total_edges=totals.edges if totals else 0,
        full_resolution=plan.full,
        edges_reresolved=resolution.reresolved,
        edges_updated=len(resolution.fixes),
    )


__all__ = [
    "MAX_SCOPE_CHARS",
    "check_root",
    "check_scope",
    "edge_record",
    "index_code",
    "stored_file",
    "symbol_record",
]
