"""The visibility rule of the PostgreSQL backend: the one place it is written (DESIGN §3.2, §5).

The same rule as ``storage/sqlite/visibility.py``, in PostgreSQL's SQL: a message is visible to
a search when it is a plain message, model-visible, not pending, not superseded, and its thread
passes the privacy gate (not quarantined, its source neither excluded by the stored policy nor
by the call). Per-call lists are bound as ``text[]`` arrays; every placeholder is ``%s``, so a
:class:`Clause` carries its values in order.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from recallbox.errors import UnsupportedFilter
from recallbox.storage.queries import SearchFilter

#: The source part of the gate: the thread has no source file, or one no exclusion names.
THREAD_SOURCE_ALLOWED_SQL = (
    "(t.source IS NULL OR (NOT EXISTS (SELECT 1 FROM excluded_sources e "
    "WHERE e.name = t.source) AND (t.source_identity IS NULL OR NOT EXISTS (SELECT 1 FROM "
    "excluded_sources e WHERE e.identity = t.source_identity))))"
)
THREAD_ALLOWED_SQL = f"(NOT t.quarantined AND {THREAD_SOURCE_ALLOWED_SQL})"
MESSAGE_KIND_SQL = "m.kind = 'message'"
MESSAGE_FLAGS_SQL = "m.model_visible AND NOT m.pending AND m.superseded_by IS NULL"
MESSAGE_VISIBLE_SQL = f"{MESSAGE_KIND_SQL} AND {MESSAGE_FLAGS_SQL}"
MESSAGE_SEARCHABLE_SQL = f"{MESSAGE_VISIBLE_SQL} AND {THREAD_ALLOWED_SQL}"
#: A per-call exclusion of sources by normalised basename (``{source}``), bound as ``text[]``.
EXCLUDED_SQL = "({source} IS NULL OR NOT ({source} = ANY(%s::text[])))"
#: A per-call exclusion of documents or files by basename or path, bound as ``text[]``.
EXCLUDED_PATH_SQL = (
    "NOT EXISTS (SELECT 1 FROM unnest(%s::text[]) AS x(value) WHERE "
    "(strpos(x.value, '/') = 0 AND x.value = {name}) OR "
    "(strpos(x.value, '/') > 0 AND ({path} = x.value{suffix})))"
)


def _suffix_match(path_sql: str, exclusion_sql: str) -> str:
    """``path`` ends with ``/`` + the exclusion (a document stored under a longer path)."""
    return f" OR right({path_sql}, length({exclusion_sql}) + 1) = '/' || {exclusion_sql}"


def source_allowed_sql(
    name_sql: str, path_sql: str, identity_sql: str | None = None, *, suffix: bool
) -> str:
    """The stored policy's gate on a document or file (see the SQLite backend's twin)."""
    by_path = f"{path_sql} = e.path" + (_suffix_match(path_sql, "e.path") if suffix else "")
    by_identity = (
        f" OR ({identity_sql} IS NOT NULL AND e.identity = {identity_sql})" if identity_sql else ""
    )
    return (
        "NOT EXISTS (SELECT 1 FROM excluded_sources e WHERE "
        f"(e.path IS NULL AND e.name = {name_sql}) OR "
        f"(e.path IS NOT NULL AND ({by_path})){by_identity})"
    )


MEMORY_SOURCE_SQL = "'memory.md'"
MEMORY_ALLOWED_SQL = source_allowed_sql(MEMORY_SOURCE_SQL, MEMORY_SOURCE_SQL, suffix=True)
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
) -> Clause:
    """The conditions ``where`` adds on top of the rule (the SQLite backend's ``narrowing``).

    Raises:
        UnsupportedFilter: ``where`` sets a channel or a scope the corpus does not have.
    """
    conditions: list[tuple[str, object]] = []
    if where.channel is not None:
        if channel_sql is None:
            raise UnsupportedFilter("this domain has no threads; search it without a channel")
        conditions.append((f"{channel_sql} = %s", where.channel))
    if where.excluded:
        if path_sql is None:
            names = sorted({name.rsplit("/", 1)[-1] for name in where.excluded})
            conditions.append((EXCLUDED_SQL.replace("{source}", source_sql), names))
        else:
            template = (
                EXCLUDED_PATH_SQL.replace("{name}", source_sql)
                .replace("{path}", path_sql)
                .replace("{suffix}", _suffix_match(path_sql, "x.value") if suffix else "")
            )
            conditions.append((template, list(where.excluded)))
    if where.excluded_identities and identity_sql is not None:
        conditions.append(
            (EXCLUDED_SQL.replace("{source}", identity_sql), list(where.excluded_identities))
        )
    if where.scope is not None:
        if scope_sql is None:
            raise UnsupportedFilter(
                f"this domain has no scopes; search it without a scope (got {where.scope!r})"
            )
        conditions.append((scope_sql.replace("{}", "%s"), where.scope))
    return Clause(
        "".join(f" AND {sql}" for sql, _ in conditions), tuple(value for _, value in conditions)
    )


def without_channel(where: SearchFilter) -> SearchFilter:
    """``where`` minus its channel (for a statement that selects the thread another way)."""
    return replace(where, channel=None)


def thread_gate(where: SearchFilter) -> Clause:
    """The gate and ``where`` for a statement over ``threads t`` alone."""
    narrow = narrowing(where)
    return Clause(f" AND {THREAD_ALLOWED_SQL}{narrow.sql}", narrow.params)
