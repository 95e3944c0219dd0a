"""Building rows for the contract suite through the protocols and the pure domain helpers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from recallbox.domains.chunking import rechunk
from recallbox.domains.messages import build_row
from recallbox.storage.base import (
    EVERYTHING,
    EmbeddingSpace,
    NewMessage,
    SearchFilter,
    Store,
)
from recallbox.types import Message

DIM = 2
MODEL = "contract-2"


def row(content: str = "", *, role: str = "user", **fields: Any) -> NewMessage:
    """A validated message row (``build_row``'s keyword arguments)."""
    return build_row(role, content, **fields)


def add(store: Store, channel: str, *contents: str, **fields: Any) -> list[Message]:
    """Append one message per text to ``channel``."""
    return store.append(channel, [row(text, **fields) for text in contents])


def axis(text: str) -> list[float]:
    """A text mentioning ``alpha`` points along x, any other along y."""
    return [1.0, 0.0] if "alpha" in text else [0.0, 1.0]


def embed(
    store: Store, corpus: str, vector: Callable[[str], Sequence[float]] = axis
) -> EmbeddingSpace:
    """Give every row of ``corpus`` that needs one a vector; returns the refreshed space."""
    space = store.ensure_embedding_space(corpus, MODEL, DIM)
    while targets := store.embed_targets(space, after=0, limit=100):
        store.put_embeddings(space, [(t, vector(t.text)) for t in targets])
    return next(s for s in store.embedding_spaces(corpus) if s.id == space.id)


def chunk(store: Store, channel: str) -> int:
    """Chunk a whole thread (the transcripts domain's rule)."""
    return rechunk(store, channel, 1)


DENIALS = ("quarantine", "excluded name", "excluded identity", "excluded for the call")


def deny(store: Store, channel: str, how: str) -> SearchFilter:
    """Deny ``channel`` one way; returns the filter a search must then pass."""
    if how == "quarantine":
        store.set_quarantined(channel, True)
    elif how == "excluded name":
        store.set_thread_source(channel, "secret.jsonl", None)
        store.set_source_excluded("secret.jsonl", True)
    elif how == "excluded identity":
        store.set_thread_source(channel, "other-name.jsonl", "7:42")
        store.set_source_excluded("renamed.jsonl", True, "7:42")
    else:
        store.set_thread_source(channel, "secret.jsonl", None)
        return SearchFilter(excluded=("secret.jsonl",))
    return EVERYTHING


def stored(how: str) -> bool:
    """Whether the denial is in the stored policy (the gate of reads without a filter)."""
    return how != "excluded for the call"
