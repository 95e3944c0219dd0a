"""``box.callers`` and ``box.callees`` (DESIGN §4, issue #11 item 4): the call graph, gated.

A symbol id is unique per scope; the same id in several scopes (one repository indexed twice)
needs ``scope`` — without it the call is refused with the scopes that hold it. An unknown id
and an id whose file the privacy policy denies give the same :class:`~recallbox.errors.NotFound`;
a denied caller or callee is never listed (the store gates every symbol it returns).

Callers are found breadth-first up to ``depth`` hops (each caller once, at its nearest depth,
at most :data:`MAX_CALL_HITS` in all), callees one hop; each is a hit of the ``code`` domain
with its file, lines, snippet and stale flag, scored ``1 / depth``.
"""

from __future__ import annotations

from typing import Protocol

from recallbox.domains.code import stale_files_of, symbol_hit
from recallbox.errors import InvalidArgument, NotFound
from recallbox.storage.base import CodeStore, SearchFilter, StoreLifecycle
from recallbox.storage.values_code import CodeSymbolRow, code_key
from recallbox.text.normalize import normalize_text
from recallbox.types import Hit

#: The deepest ``callers(depth=…)``.
MAX_CALLER_DEPTH = 5
#: At most this many callers (all depths) or callees in one answer.
MAX_CALL_HITS = 100
#: ``Hit.explain`` key: how many hops from the symbol asked about.
EXPLAIN_DEPTH = "depth"
#: A symbol id echoed in an error is cut to this many characters.
ECHO_ID_CHARS = 120


def _echo(symbol_id: str) -> str:
    return repr(
        symbol_id if len(symbol_id) <= ECHO_ID_CHARS else symbol_id[: ECHO_ID_CHARS - 1] + "…"
    )


class CallGraphStore(CodeStore, StoreLifecycle, Protocol):
    """What the call-graph verbs read: the code index on one snapshot."""


def _check_id(symbol_id: object) -> str:
    if not isinstance(symbol_id, str) or not symbol_id.strip():
        raise InvalidArgument("symbol_id must be a symbol id such as 'src/app.py::App.run'")
    return normalize_text(symbol_id)


def _check_depth(depth: object) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_CALLER_DEPTH:
        raise InvalidArgument(f"depth must be an int from 1 to {MAX_CALLER_DEPTH}, got {depth!r}")
    return depth


def _where(scope: object) -> SearchFilter:
    if scope is not None and not isinstance(scope, str):
        raise InvalidArgument(f"scope must be a project name or None, got {type(scope).__name__}")
    return SearchFilter(scope=normalize_text(scope) if scope is not None else None)


def find_symbol(store: CodeStore, symbol_id: str, where: SearchFilter) -> CodeSymbolRow:
    """The one visible symbol ``symbol_id`` (in ``where.scope`` when given).

    Raises:
        NotFound: unknown, or denied by the privacy policy (the same error).
        InvalidArgument: the id is in several scopes and none was given (they are listed).
    """
    scopes = [s.name for s in store.code_scopes() if where.scope in (None, s.name)]
    rows = store.code_symbol_rows([code_key(scope, symbol_id) for scope in scopes], where=where)
    if not rows:
        where_text = f" in scope {where.scope!r}" if where.scope is not None else ""
        raise NotFound(f"unknown symbol id {_echo(symbol_id)}{where_text}")
    if len(rows) > 1:
        found = ", ".join(sorted(row.scope for row in rows.values()))
        raise InvalidArgument(
            f"symbol id {_echo(symbol_id)} exists in several scopes ({found}); pass scope= to choose"
        )
    return next(iter(rows.values()))


def _hits(
    store: CodeStore, found: list[tuple[str, int]], where: SearchFilter
) -> list[tuple[CodeSymbolRow, int]]:
    rows = store.code_symbol_rows([key for key, _ in found], where=where)
    return [(rows[key], depth) for key, depth in found if key in rows]


def _as_hits(rows: list[tuple[CodeSymbolRow, int]]) -> list[Hit]:
    stale = stale_files_of([row for row, _ in rows])
    return [
        symbol_hit(row, score=1.0 / depth, stale=stale, explain={EXPLAIN_DEPTH: float(depth)})
        for row, depth in rows
    ]


def callers(
    store: CallGraphStore, symbol_id: object, depth: object = 1, *, scope: object = None
) -> list[Hit]:
    """The visible symbols that call ``symbol_id``, up to ``depth`` hops, nearest first."""
    ident, hops, where = _check_id(symbol_id), _check_depth(depth), _where(scope)
    with store.read_snapshot():
        origin = find_symbol(store, ident, where)
        seen, frontier = {origin.key}, [origin.key]
        found: list[tuple[str, int]] = []
        for level in range(1, hops + 1):
            calls = store.code_calls(frontier, incoming=True, where=where, limit=MAX_CALL_HITS)
            frontier = []
            for key in (k for callee in calls.values() for k in callee):
                if key not in seen and len(found) < MAX_CALL_HITS:
                    seen.add(key)
                    frontier.append(key)
                    found.append((key, level))
            if not frontier:
                break
        rows = _hits(store, found, where)
    return _as_hits(rows)


def callees(store: CallGraphStore, symbol_id: object, *, scope: object = None) -> list[Hit]:
    """The visible symbols ``symbol_id`` calls (resolved calls), by the line of the first call."""
    ident, where = _check_id(symbol_id), _where(scope)
    with store.read_snapshot():
        origin = find_symbol(store, ident, where)
        calls = store.code_calls([origin.key], incoming=False, where=where, limit=MAX_CALL_HITS)
        rows = _hits(store, [(key, 1) for key in calls.get(origin.key, [])], where)
    return _as_hits(rows)


__all__ = ["MAX_CALLER_DEPTH", "MAX_CALL_HITS", "callees", "callers", "find_symbol"]
