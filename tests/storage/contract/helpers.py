"""Building rows for the contract suite through the protocols and the pure domain helpers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any

from recallbox.domains.chunking import rechunk
from recallbox.domains.knowledge_files import split_document
from recallbox.domains.knowledge_plan import plan_file, plan_removed_file
from recallbox.domains.knowledge_sync import document_write
from recallbox.domains.memory_model import parse_key
from recallbox.domains.memory_ops import memory_write
from recallbox.domains.messages import build_row
from recallbox.storage.base import (
    EVERYTHING,
    EmbeddingSpace,
    NewMessage,
    SearchFilter,
    Store,
)
from recallbox.types import MemoryEntry, Message, Section

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


# -- knowledge sections and memory entries (#10) ---------------------------------------------
def document(
    store: Store,
    source: str,
    text: str,
    *,
    scope: str | None = None,
    identity: str | None = None,
    root: str | None = None,
) -> list[Section]:
    """Write ``text`` as the document ``(scope, source)`` the way a sync plans it."""
    sections = split_document(source, text)
    plan = plan_file(source, sections, store.document_sections(scope, source))
    return store.write_document(document_write(plan, scope=scope, identity=identity, root=root))


def remove_document(store: Store, source: str, *, scope: str | None = None) -> list[Section]:
    """Mark every live section of a document removed (its file went away)."""
    plan = plan_removed_file(source, store.document_sections(scope, source))
    return store.write_document(document_write(plan, scope=scope, identity=None, root=None))


def entry(key: str, body: str, **fields: Any) -> MemoryEntry:
    """A memory entry of the key's type, active since 2025-01-01 unless told otherwise."""
    values: dict[str, Any] = {
        "title": None,
        "state": "active",
        "created": date(2025, 1, 1),
        "last_referenced": None,
        "state_since": date(2025, 1, 1),
        **fields,
    }
    return MemoryEntry(key=key, type=parse_key(key)[0], body=body, **values)


def remember_rows(store: Store, *entries: MemoryEntry) -> None:
    """Store new entries under their keys."""
    store.create_memory_entries([memory_write(e) for e in entries])


DOCUMENT_DENIALS = (
    "excluded name",
    "excluded path",
    "excluded identity",
    "excluded for the call",
    "identity for the call",
)


def deny_document(store: Store, how: str) -> SearchFilter:
    """Deny the document ``private/secret.md`` (identity ``7:42``) one way; returns the filter a
    search must then pass."""
    if how == "excluded name":
        store.set_source_excluded("secret.md", True)
    elif how == "excluded path":
        store.set_source_excluded("private/secret.md", True)
    elif how == "excluded identity":
        store.set_source_excluded("hard-link.md", True, "7:42")
    elif how == "excluded for the call":
        return SearchFilter(excluded=("secret.md",))
    else:
        return SearchFilter(excluded=("hard-link.md",), excluded_identities=("7:42",))
    return EVERYTHING
