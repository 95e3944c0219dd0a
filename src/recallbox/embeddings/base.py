"""The embedder contract of the vector leg (DESIGN §4.2) and the helpers that enforce it.

An :class:`Embedder` turns texts into L2-normalised float vectors, one result per text in the
same order. ``None`` for a text means "the vector leg is absent for that text" and is never an
error. An embedder that raises — or that answers with the wrong number of results, a vector of
the wrong dimension, or a non-finite value — is treated as returning ``None`` for every text:
:func:`safe_embed` is the one place that applies that rule, so callers never see an embedder
exception.

Models trained with asymmetric prefixes (E5: ``query:`` / ``passage:``) also implement
:class:`QueryEmbedder`; :func:`embed_queries` picks the right method for a query.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from recallbox.errors import InvalidArgument

__all__ = [
    "NORM_EPSILON",
    "Embedder",
    "Embedding",
    "QueryEmbedder",
    "Vector",
    "as_text_list",
    "embed_queries",
    "l2_normalize",
    "safe_embed",
]

#: A vector: L2-normalised floats of length ``Embedder.dim``.
Vector = list[float]
#: One result of an embedder: a vector, or ``None`` when the vector leg is absent for the text.
Embedding = Vector | None

#: A vector whose Euclidean norm is at or below this has no direction; it becomes ``None``.
NORM_EPSILON = 1e-12

logger = logging.getLogger("recallbox.embeddings")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors (DESIGN §4.2).

    ``model_id`` and ``dim`` are stored with every vector so that vectors of different models are
    never mixed. ``dim`` may be ``0`` until the embedder has learned it (an HTTP embedder without
    a configured dimension learns it from its first answer).
    """

    @property
    def model_id(self) -> str:
        """A stable identifier of the model (and of everything that changes its vectors)."""
        ...

    @property
    def dim(self) -> int:
        """The vector length (``0`` while not yet known)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        """One L2-normalised vector or ``None`` per text, in the order of ``texts``."""
        ...


@runtime_checkable
class QueryEmbedder(Embedder, Protocol):
    """An embedder whose queries are embedded differently from the documents (E5 prefixes)."""

    def embed_query(self, texts: Sequence[str]) -> list[Embedding]:
        """Like :meth:`Embedder.embed`, for search queries instead of stored passages."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> list[Embedding]:
    """Embed search queries: ``embed_query`` when the embedder has it, else ``embed``.

    Exceptions propagate; wrap the call in :func:`safe_embed` (``query=True``) to get the
    "raises means None for all" behaviour.
    """
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_query(texts)
    return embedder.embed(texts)


def as_text_list(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list, after checking it is a sequence of ``str``.

    A bare ``str`` is refused: it is a sequence of characters, and embedding each character is
    never what the caller meant. Raises :class:`~recallbox.errors.InvalidArgument`.
    """
    if isinstance(texts, str | bytes):
        raise InvalidArgument("expected a sequence of texts, got one string; wrap it in a list")
    items = list(texts)
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidArgument(f"texts[{position}] is {type(item).__name__}, expected str")
    return items


def l2_normalize(values: Sequence[float]) -> Vector | None:
    """``values`` scaled to unit Euclidean length; ``None`` for a zero or non-finite vector."""
    floats = [float(x) for x in values]
    if not floats or not all(math.isfinite(x) for x in floats):
        return None
    norm = math.sqrt(math.fsum(x * x for x in floats))
    if not math.isfinite(norm) or norm <= NORM_EPSILON:
        return None
    return [x / norm for x in floats]


def safe_embed(embedder: Embedder, texts: Sequence[str], *, query: bool = False) -> list[Embedding]:
    """Call ``embedder`` and never raise: any failure becomes ``[None] * len(texts)``.

    ``query=True`` embeds the texts as search queries (see :func:`embed_queries`). The result is
    checked before it is returned; each of these turns the whole answer into ``None`` values and
    logs one warning on the ``recallbox.embeddings`` logger:

    * the embedder raised an :class:`Exception` (``KeyboardInterrupt`` and friends propagate);
    * the answer is not a sequence of exactly ``len(texts)`` items;
    * a vector's length differs from ``embedder.dim`` (read after the call, so an embedder that
      learns its dimension may do so during the call), or vectors differ in length;
    * a vector holds a value that is not a finite number.

    Valid vectors come back as plain ``list[float]``, re-normalised to unit length (a no-op for a
    conforming embedder); a zero vector, which has no direction, becomes ``None`` for its text.
    An empty ``texts`` returns ``[]`` without calling the embedder. The one thing that raises is a
    caller error: ``texts`` that is not a sequence of ``str`` raises
    :class:`~recallbox.errors.InvalidArgument` (see :func:`as_text_list`).
    """
    items = as_text_list(texts)
    count = len(items)
    if count == 0:
        return []
    name = _describe(embedder)
    try:
        raw = embed_queries(embedder, items) if query else embedder.embed(items)
    except Exception as exc:
        logger.warning(
            "embedder %s raised %s: %s; no vectors for %d text(s)",
            name,
            type(exc).__name__,
            exc,
            count,
        )
        return [None] * count
    problem, checked = _check_answer(embedder, raw, count)
    if problem is not None:
        logger.warning("embedder %s %s; no vectors for %d text(s)", name, problem, count)
        return [None] * count
    return checked


def _check_answer(
    embedder: Embedder, raw: object, count: int
) -> tuple[str | None, list[Embedding]]:
    """Validate an embedder's answer: (problem, normalised vectors); problem is None when valid."""
    if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
        return f"returned {type(raw).__name__}, not a list", []
    if len(raw) != count:
        return f"returned {len(raw)} result(s) for {count} text(s)", []
    try:
        expected = embedder.dim
    except Exception as exc:
        return f"has no readable dim ({type(exc).__name__}: {exc})", []
    if isinstance(expected, bool) or not isinstance(expected, int) or expected < 0:
        return f"has an invalid dim {expected!r}", []
    seen_length: int | None = None
    out: list[Embedding] = []
    for position, item in enumerate(raw):
        if item is None:
            out.append(None)
            continue
        try:
            floats = [float(x) for x in item]
        except (TypeError, ValueError) as exc:
            return f"returned a non-numeric vector at position {position} ({exc})", []
        length = len(floats)
        if expected and length != expected:
            return f"returned a {length}-d vector at position {position}, expected {expected}", []
        if seen_length is not None and length != seen_length:
            return f"returned vectors of different lengths ({seen_length} and {length})", []
        seen_length = length
        if not all(math.isfinite(x) for x in floats):
            return f"returned a non-finite value at position {position}", []
        out.append(l2_normalize(floats))
    return None, out


def _describe(embedder: object) -> str:
    """The embedder's model id for log messages, without ever raising."""
    try:
        return repr(getattr(embedder, "model_id", type(embedder).__name__))
    except Exception:
        return type(embedder).__name__
