"""``box.search``: the flat ranked-hits primitive every domain and the aggregator use (DESIGN §4.5).

One call = at most one embedder call (the query, and only with ``allow_embed=True`` and an
embedder configured) and no write of any kind. The vector leg is skipped, and the keyword
results stand alone, when there is no embedder, ``allow_embed`` is false, or the embedder
raises or answers ``None`` for the query. A database whose stored vectors belong to another
model than the configured embedder raises :class:`~recallbox.errors.SchemaMismatch` instead of
mixing them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from recallbox.domains import sessions, transcripts
from recallbox.embeddings import Embedder, safe_embed
from recallbox.errors import InvalidArgument, SchemaMismatch
from recallbox.storage.retrieval import OWNER_MESSAGE, EmbeddingSpace, RetrievalStore
from recallbox.storage.transcripts import OWNER_TRANSCRIPT_CHUNK, TranscriptSearchStore
from recallbox.text.fts_query import build_fts_query
from recallbox.text.normalize import normalize_text
from recallbox.types import Hit

#: Every recall domain, in the order buckets are rendered (DESIGN §5).
DOMAINS: tuple[str, ...] = ("memory", "knowledge", "sessions", "transcripts", "code")
#: The domains ``search`` can answer in this version.
AVAILABLE_DOMAINS: tuple[str, ...] = ("sessions", "transcripts")
DEFAULT_SEARCH_LIMIT = 10
#: The largest ``limit`` accepted.
MAX_SEARCH_LIMIT = 1_000
#: The legs a search may run.
LEG_KEYWORD = "keyword"
LEG_VECTOR = "vector"
HYBRID_LEGS: tuple[str, ...] = (LEG_KEYWORD, LEG_VECTOR)
REBUILD_HINT = "recallbox embed --rebuild"


def check_domain(domain: object) -> str:
    """The domain name, or ``InvalidArgument`` for an unknown or not-yet-available one."""
    if domain not in DOMAINS:
        raise InvalidArgument(f"unknown domain {domain!r}; expected one of {', '.join(DOMAINS)}")
    if domain not in AVAILABLE_DOMAINS:
        raise InvalidArgument(
            f"the {domain!r} domain is not available yet in this version of recallbox; "
            f"search one of: {', '.join(AVAILABLE_DOMAINS)}"
        )
    return str(domain)


def check_limit(limit: object) -> int:
    """A positive ``int`` up to :data:`MAX_SEARCH_LIMIT`, else ``InvalidArgument``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_SEARCH_LIMIT:
        raise InvalidArgument(f"limit must be an int from 1 to {MAX_SEARCH_LIMIT}, got {limit!r}")
    return limit


def _describe(space: EmbeddingSpace) -> str:
    return f"{space.model_id!r} ({space.dim}-d)"


def message_space(
    store: RetrievalStore, embedder: Embedder, owner: str = OWNER_MESSAGE
) -> EmbeddingSpace | None:
    """The stored message vectors the embedder's vectors may be compared with (``None``: none);
    ``owner`` picks another kind of vectors (transcript chunks).

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


def search(
    store: RetrievalStore,
    embedder: Embedder | None,
    query: str,
    *,
    domain: str = "sessions",
    channel: str | None = None,
    limit: int = DEFAULT_SEARCH_LIMIT,
    allow_embed: bool = True,
    legs: Sequence[str] = HYBRID_LEGS,
    ranking: sessions.Ranking = sessions.DEFAULT_RANKING,
) -> list[Hit]:
    """Ranked hits for ``query`` in ``domain``, best first (see :meth:`recallbox.Box.search`).

    ``legs`` (``"keyword"``, ``"vector"``) restricts the legs and ``ranking`` changes the
    sessions ranking (:data:`recallbox.domains.sessions.PLAIN_RANKING`: the plain hybrid), for
    measurements.

    Raises:
        InvalidArgument: unknown or unavailable domain, bad limit, non-string query/channel.
        SchemaMismatch: stored vectors belong to another model than ``embedder``.
    """
    check_domain(domain)
    check_limit(limit)
    if not isinstance(query, str):
        raise InvalidArgument(f"query must be a string, got {type(query).__name__}")
    if channel is not None and not isinstance(channel, str):
        raise InvalidArgument(f"channel must be a string or None, got {type(channel).__name__}")
    text = normalize_text(query).strip()
    if not text:
        return []
    if channel is not None:
        channel = normalize_text(channel)
    query_vector: sessions.QueryVector | None = None
    owner = OWNER_TRANSCRIPT_CHUNK if domain == transcripts.DOMAIN else OWNER_MESSAGE
    if allow_embed and embedder is not None and LEG_VECTOR in legs:
        space = message_space(store, embedder, owner)
        vector = embed_query(embedder, text)
        if vector is not None and space is not None:
            if len(vector) != space.dim:
                raise SchemaMismatch(
                    f"the embedder {embedder.model_id!r} answered a {len(vector)}-d vector but "
                    f"its stored vectors are {space.dim}-d; re-embed with `{REBUILD_HINT}`"
                )
            query_vector = sessions.QueryVector(vector, space)
    if domain == transcripts.DOMAIN:
        return transcripts.search(
            cast(TranscriptSearchStore, store),
            build_fts_query(text),
            channel=channel,
            limit=limit,
            query_vector=query_vector,
            use_keyword=LEG_KEYWORD in legs,
        )
    return sessions.search(
        store,
        build_fts_query(text),
        channel=channel,
        limit=limit,
        query_vector=query_vector,
        use_keyword=LEG_KEYWORD in legs,
        text=text,
        ranking=ranking,
    )
