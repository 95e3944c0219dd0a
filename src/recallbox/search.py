"""``box.search``: the flat ranked-hits primitive every domain and the aggregator use (DESIGN §4.5).

One call = at most one embedder call (the query, and only with ``allow_embed=True``, an
embedder configured and a domain with vectors) and no write of any kind. The vector leg is
skipped, and the keyword results stand alone, when there is no embedder, ``allow_embed`` is
false, or the embedder raises or answers ``None`` for the query. A database whose stored
vectors belong to another model than the configured embedder raises
:class:`~recallbox.errors.SchemaMismatch` instead of mixing them. The domain is looked up in
``recallbox.domains.registry``; nothing here knows one domain from another.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.domains.base import Domain, QueryVector, SearchContext
from recallbox.domains.privacy import call_exclusions
from recallbox.domains.registry import AVAILABLE_DOMAINS, DOMAINS, get_domain
from recallbox.embeddings import Embedder, safe_embed
from recallbox.errors import InvalidArgument, SchemaMismatch
from recallbox.hitlog import HitRecorder, new_event
from recallbox.storage.base import EmbeddingSpace, SearchFilter, Store, VectorIndex
from recallbox.text.fts_query import build_fts_query
from recallbox.text.normalize import normalize_text
from recallbox.types import Hit

DEFAULT_SEARCH_LIMIT = 10
#: The largest ``limit`` accepted.
MAX_SEARCH_LIMIT = 1_000
#: The legs a search may run.
LEG_KEYWORD = "keyword"
LEG_VECTOR = "vector"
HYBRID_LEGS: tuple[str, ...] = (LEG_KEYWORD, LEG_VECTOR)
REBUILD_HINT = "recallbox embed --rebuild"


def check_limit(limit: object) -> int:
    """A positive ``int`` up to :data:`MAX_SEARCH_LIMIT`, else ``InvalidArgument``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidArgument(f"limit must be an int from 1 to {MAX_SEARCH_LIMIT}, got {limit!r}")
    return limit


def _describe(space: EmbeddingSpace) -> str:
    return f"{space.model_id!r} ({space.dim}-d)"


def message_space(store: VectorIndex, embedder: Embedder, owner: str) -> EmbeddingSpace | None:
    """The stored vectors of ``owner``'s corpus the embedder's vectors may be compared with
    (``None``: none).

    Raises:
        SchemaMismatch: vectors of another model (or dimension) are stored.
    """
    dim = embedder.dim
    same: list[EmbeddingSpace] = []
    other: list[EmbeddingSpace] = []
    for space in store.embedding_spaces(owner):
        if space.model_id == embedder.model_id and dim in (0, space.dim):
            same.append(space)
        elif space.count:
            other.append(space)
    if other:
        stored = ", ".join(f"{s.count} of {_describe(s)}" for s in other)
        wanted = repr(embedder.model_id) + (f" ({dim}-d)" if dim else "")
        raise SchemaMismatch(
            f"this database holds message vectors of another model ({stored}), but recallbox "
            f"was opened with the embedder {wanted}; vectors of different models are never "
            f"mixed. Re-embed with `{REBUILD_HINT}` (Python: box.embed_all(rebuild=True)), or "
            "open the database with the embedder that wrote them."
        )
    return max(same, key=lambda s: s.count) if same else None


def embed_query(embedder: Embedder, text: str) -> list[float] | None:
    """The query's vector: exactly one embedder call; ``None`` when it fails or answers None."""
    result = safe_embed(embedder, [text], query=True)
    return result[0] if result else None


def query_vector(
    store: VectorIndex, embedder: Embedder, text: str, owner: str
) -> QueryVector | None:
    """The query's vector in ``owner``'s space, or ``None`` when the vector leg cannot run.

    Raises:
        SchemaMismatch: stored vectors belong to another model, or the embedder's answer has
            another dimension than they do.
    """
    space = message_space(store, embedder, owner)
    vector = embed_query(embedder, text)
    if vector is None or space is None:
        return None
    if len(vector) != space.dim:
        raise SchemaMismatch(
            f"the embedder {embedder.model_id!r} answered a {len(vector)}-d vector but "
            f"its stored vectors are {space.dim}-d; re-embed with `{REBUILD_HINT}`"
        )
    return QueryVector(vector, space)


def _check_text(query: object, channel: object) -> None:
    if not isinstance(query, str):
        raise InvalidArgument(f"query must be a string, got {type(query).__name__}")
    if channel is not None and not isinstance(channel, str):
        raise InvalidArgument(f"channel must be a string or None, got {type(channel).__name__}")


def search_filter(channel: str | None, scope: str | None, excluded: Sequence[str]) -> SearchFilter:
    """The :class:`SearchFilter` of a verb's ``channel``, ``scope`` and per-call ``excluded``.

    Raises:
        InvalidArgument: a non-string or blank scope, a non-string channel, or a bad
            ``excluded``.
    """
    if scope is not None and not isinstance(scope, str):
        raise InvalidArgument(f"scope must be a project name or None, got {type(scope).__name__}")
    if scope is not None and not normalize_text(scope).strip():
        # Trigger: ``scope=""`` (``--scope ""``). Why: no project has a blank name, so it would
        # search no project silently. Outcome: named, like any other bad argument (exit 2).
        raise InvalidArgument("scope must be a project name or None, got a blank string")
    names, identities = call_exclusions(excluded)
    return SearchFilter(
        channel=normalize_text(channel) if channel is not None else None,
        scope=normalize_text(scope) if scope is not None else None,
        excluded=names,
        excluded_identities=identities,
    )


def search(
    store: Store,
    embedder: Embedder | None,
    query: str,
    *,
    domain: str = "sessions",
    channel: str | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
    allow_embed: bool = True,
    scope: str | None = None,
    excluded: Sequence[str] = (),
    legs: Sequence[str] = HYBRID_LEGS,
    using: Domain | None = None,
) -> list[Hit]:
    """Ranked hits for ``query`` in ``domain``, best first (see :meth:`recallbox.Box.search`).

    ``legs`` (``"keyword"``, ``"vector"``) restricts the legs and ``using`` searches with
    this domain object instead of the registered one (e.g. ``SessionsDomain(PLAIN_RANKING)``),
    for measurements.

    Raises:
        InvalidArgument: unknown or unavailable domain, bad limit, non-string query/channel.
        SchemaMismatch: stored vectors belong to another model than ``embedder``.
    """
    found = get_domain(domain) if using is None else using
    check_limit(limit)
    _check_text(query, channel)
    text = normalize_text(query).strip()
    if not text:
        return []
    where = search_filter(channel, scope, excluded)
    vector = None
    if allow_embed and embedder is not None and LEG_VECTOR in legs and found.owner is not None:
        vector = query_vector(store, embedder, text, found.owner)
    ctx = SearchContext(store, where, vector, use_keyword=LEG_KEYWORD in legs)
    return found.search(ctx, build_fts_query(text), limit=limit)


def record_search(recorder: HitRecorder, query: str, domain: str, hits: list[Hit]) -> list[Hit]:
    """Record one hit row per returned hit (layer ``hybrid`` when a vector leg scored one, else
    ``keyword``); returns ``hits``."""
    if hits:
        layer = "hybrid" if any(h.vector is not None for h in hits) else "keyword"
        recorder.hits(
            normalize_text(query).strip(),
            domain=domain,
            layer=layer,
            target_ids=[h.id for h in hits],
            event=new_event(),
        )
    return hits


__all__ = [
    "AVAILABLE_DOMAINS",
    "DEFAULT_SEARCH_LIMIT",
    "DOMAINS",
    "HYBRID_LEGS",
    "LEG_KEYWORD",
    "LEG_VECTOR",
    "MAX_SEARCH_LIMIT",
    "check_limit",
    "embed_query",
    "message_space",
    "query_vector",
    "record_search",
    "search",
    "search_filter",
]
