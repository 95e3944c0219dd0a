"""The visibility rule of the SQLite backend: the one place it is written (DESIGN §3.2, §5).

A message is *visible* to a search when it is a plain message (not a machine event, not a
compaction summary), model-visible, not pending, not superseded, and its thread passes the
privacy gate: not quarantined, its source neither excluded by the stored policy nor by the
call (:class:`~recallbox.storage.queries.SearchFilter`). A transcript chunk is visible when its
thread passes the same gate (a chunk only ever holds visible messages: it is rebuilt when one
changes). Every statement that returns text, ids or counts to a search adds these conditions;
a statement that only narrows a list of row ids for a later one may apply the cheap part
(:data:`MESSAGE_KIND_SQL` and the gate), since that later statement applies the whole rule.

The SQL is over ``messages m`` (or the corpus table) ``JOIN threads t``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from recallbox.errors import UnsupportedFilter
from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.rows import json_list

#: The privacy gate on a thread ``t`` (DESIGN §5): not quarantined, and its source (normalised
#: name or file identity) not excluded by the stored policy.
THREAD_ALLOWED_SQL = (
    "(t.quarantined = 0 AND (t.source IS NULL OR ("
    "t.source NOT IN (SELECT name FROM excluded_sources) AND (t.source_identity IS NULL OR "
    "t.source_identity NOT IN (SELECT identity FROM excluded_sources "
    "WHERE identity IS NOT NULL)))))"
)
#: The kind part of the message rule (stored before the content: cheap to read).
MESSAGE_KIND_SQL = "m.kind = 'message'"
#: The flag part of the message rule (stored after the content).
MESSAGE_FLAGS_SQL = "m.model_visible = 1 AND m.pending = 0 AND m.superseded_by IS NULL"
#: What makes a message itself visible (its thread aside): what a chunk may hold, too.
MESSAGE_VISIBLE_SQL = f"{MESSAGE_KIND_SQL} AND {MESSAGE_FLAGS_SQL}"
#: The whole rule for a message.
MESSAGE_SEARCHABLE_SQL = f"{MESSAGE_VISIBLE_SQL} AND {THREAD_ALLOWED_SQL}"
#: A per-call exclusion of sources (``{source}``: the column of the normalised source name),
#: bound as a JSON array of normalised names.
EXCLUDED_SQL = "({source} IS NULL OR {source} NOT IN (SELECT value FROM json_each({mark})))"


@dataclass(frozen=True, slots=True)
class Clause:
    """SQL to append to a ``WHERE`` (``""`` or ``" AND …"``) and the values it binds, in order."""

    sql: str = ""
    params: tuple[object, ...] = ()


def narrowing(
    where: SearchFilter,
    *,
    scope_sql: str | None = None,
    channel_sql: str | None = "t.channel",
    source_sql: str = "t.source",
    first: int | None = None,
) -> Clause:
    """The conditions ``where`` adds on top of the rule.

    ``channel_sql`` is the column a channel is compared with (``None``: the corpus has no
    channels), ``source_sql`` the column of the normalised source name the per-call
    exclusions are compared with, ``scope_sql`` the corpus's scope condition with one
    placeholder ``{}`` (e.g. ``"(k.scope = {} OR k.scope IS NULL)"``; ``None``: no scopes).
    ``first`` numbers the placeholders from ``?<first>``, for a statement that uses numbered
    ones.

    Raises:
        UnsupportedFilter: ``where`` sets a channel or a scope the corpus does not have.
    """
    conditions: list[tuple[str, object]] = []
    if where.channel is not None:
        if channel_sql is None:
            raise UnsupportedFilter("this domain has no threads; search it without a channel")
        conditions.append((channel_sql + " = {mark}", where.channel))
    if where.excluded:
        conditions.append((EXCLUDED_SQL.replace("{source}", source_sql), json_list(where.excluded)))
    if where.scope is not None:
        if scope_sql is None:
            raise UnsupportedFilter(
                f"this domain has no scopes; search it without a scope (got {where.scope!r})"
            )
        conditions.append((scope_sql.replace("{}", "{mark}"), where.scope))
    sql = "".join(
        " AND " + template.replace("{mark}", "?" if first is None else f"?{first + i}")
        for i, (template, _) in enumerate(conditions)
    )
    return Clause(sql, tuple(value for _, value in conditions))


def without_channel(where: SearchFilter) -> SearchFilter:
    """``where`` minus its channel (for a statement that selects the thread another way)."""
    return replace(where, channel=None)


def thread_gate(where: SearchFilter) -> Clause:
    """The gate and ``where`` for a statement over ``threads t`` alone."""
    narrow = narrowing(where)
    return Clause(f" AND {THREAD_ALLOWED_SQL}{narrow.sql}", narrow.params)
