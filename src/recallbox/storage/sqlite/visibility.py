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
#: The source part of the gate: the thread has no source file, or one no exclusion names.
THREAD_SOURCE_ALLOWED_SQL = (
    "(t.source IS NULL OR ("
    "t.source NOT IN (SELECT name FROM excluded_sources) AND (t.source_identity IS NULL OR "
    "t.source_identity NOT IN (SELECT identity FROM excluded_sources "
    "WHERE identity IS NOT NULL))))"
)
THREAD_ALLOWED_SQL = f"(t.quarantined = 0 AND {THREAD_SOURCE_ALLOWED_SQL})"
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
#: A per-call exclusion of documents or files by path (``{name}``: the row's normalised
#: basename, ``{path}``: its normalised path; ``{suffix}``: the suffix condition or nothing),
#: bound as a JSON array of normalised exclusions.
EXCLUDED_PATH_SQL = (
    "NOT EXISTS (SELECT 1 FROM json_each({mark}) x WHERE "
    "(instr(x.value, '/') = 0 AND x.value = {name}) OR "
    "(instr(x.value, '/') > 0 AND ({path} = x.value{suffix})))"
)


def _suffix_match(path_sql: str, exclusion_sql: str) -> str:
    """``path`` ends with ``/`` + the exclusion (a document stored under a longer path)."""
    return f" OR substr({path_sql}, -(length({exclusion_sql}) + 1)) = '/' || {exclusion_sql}"


def source_allowed_sql(
    name_sql: str, path_sql: str, identity_sql: str | None = None, *, suffix: bool
) -> str:
    """The stored policy's gate on a document or file (DESIGN §5 "Matching a source").

    Denied when an exclusion without ``/`` equals the row's basename (``name_sql``), an
    exclusion with ``/`` equals its path (``path_sql``) — or, with ``suffix`` (knowledge
    documents), the path ends with ``/`` + it — or the row's file identity (``identity_sql``)
    is an excluded one. Both columns hold normalised, casefolded text
    (``domains.privacy.normalize_source_path``).
    """
    by_path = f"{path_sql} = e.path" + (_suffix_match(path_sql, "e.path") if suffix else "")
    by_identity = (
        f" OR ({identity_sql} IS NOT NULL AND e.identity = {identity_sql})" if identity_sql else ""
    )
    return (
        "NOT EXISTS (SELECT 1 FROM excluded_sources e WHERE "
        f"(e.path IS NULL AND e.name = {name_sql}) OR "
        f"(e.path IS NOT NULL AND ({by_path})){by_identity})"
    )


#: The source the memory entries stand for (``domains.privacy.MEMORY_SOURCE_NAME``), as SQL.
MEMORY_SOURCE_SQL = "'memory.md'"
#: The gate on every memory entry: no exclusion of ``MEMORY.md`` (a path holding ``/`` names a
#: document, never the memory entries).
MEMORY_ALLOWED_SQL = source_allowed_sql(MEMORY_SOURCE_SQL, MEMORY_SOURCE_SQL, suffix=True)
#: The gate on a knowledge section ``k``: its document's basename, path and file identity.
SECTION_ALLOWED_SQL = source_allowed_sql(
    "k.source_name", "k.source_path", "k.identity", suffix=True
)


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
    path_sql: str | None = None,
    identity_sql: str | None = "t.source_identity",
    suffix: bool = True,
    first: int | None = None,
) -> Clause:
    """The conditions ``where`` adds on top of the rule.

    ``channel_sql`` is the column a channel is compared with (``None``: the corpus has no
    channels), ``source_sql`` the column of the normalised source basename the per-call
    exclusions are compared with, ``path_sql`` the row's normalised path (documents and
    files: an exclusion holding ``/`` is compared with it, as :func:`source_allowed_sql`
    does, ``suffix`` as there; ``None``: only basenames count, as for thread sources),
    ``identity_sql`` the row's file identity (``None``: none), ``scope_sql`` the corpus's
    scope condition with one placeholder ``{}`` (e.g. ``"(k.scope = {} OR k.scope IS
    NULL)"``; ``None``: no scopes). ``first`` numbers the placeholders from ``?<first>``,
    for a statement that uses numbered ones.

    Raises:
        UnsupportedFilter: ``where`` sets a channel or a scope the corpus does not have.
    """
    conditions: list[tuple[str, object]] = []
    if where.channel is not None:
        if channel_sql is None:
            raise UnsupportedFilter("this domain has no threads; search it without a channel")
        conditions.append((channel_sql + " = {mark}", where.channel))
    if where.excluded:
        if path_sql is None:
            names = sorted({name.rsplit("/", 1)[-1] for name in where.excluded})
            conditions.append((EXCLUDED_SQL.replace("{source}", source_sql), json_list(names)))
        else:
            template = (
                EXCLUDED_PATH_SQL.replace("{name}", source_sql)
                .replace("{path}", path_sql)
                .replace("{suffix}", _suffix_match(path_sql, "x.value") if suffix else "")
            )
            conditions.append((template, json_list(list(where.excluded))))
    if where.excluded_identities and identity_sql is not None:
        conditions.append(
            (
                EXCLUDED_SQL.replace("{source}", identity_sql),
                json_list(list(where.excluded_identities)),
            )
        )
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
