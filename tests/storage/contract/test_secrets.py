"""SecretStore: purge and redact reach every row, index, vector and hit-log row of a target."""

from __future__ import annotations

from recallbox.domains.chunking import rechunk
from recallbox.domains.secrets import REDACTED, rewriter
from recallbox.storage.base import (
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    LexicalQuery,
    Store,
)
from recallbox.storage.secrets import SecretTarget

from .helpers import add, chunk, document, embed, entry, remember_rows

SECRET = LexicalQuery((("hunter2",),))


def _erase(store: Store, target: SecretTarget, pattern: str | None = None) -> int:
    """Purge (or, with ``pattern``, redact) ``target`` the way the Box does; returns the rows
    purged or the replacements made."""
    store.secure_delete()
    with store.transaction():
        if pattern is None:
            erased = store.purge_rows(target)
            changed, count = erased.rechunk, erased.messages + erased.sections + erased.memories
        else:
            redacted = store.redact_rows(target, rewriter(pattern))
            changed, count = redacted.rechunk, redacted.replacements
        for channel, seq in changed:
            if store.has_transcript_chunks(channel):
                rechunk(store, channel, seq)
    return count


def test_a_purged_message_leaves_rows_indexes_vectors_and_chunks(store: Store) -> None:
    kept, secret, last = add(store, "t", "alpha one", "the password is hunter2", "gamma")
    add(store, "other", "hunter2 is mentioned here too")
    chunk(store, "t")
    space = embed(store, CORPUS_MESSAGE)
    embed(store, CORPUS_TRANSCRIPT_CHUNK)
    store.record_hits("hunter2", domain="sessions", layer="keyword", target_ids=[secret.id])
    store.record_drill(secret.id)
    assert _erase(store, SecretTarget(message_id=secret.id)) == 1
    erasure = store.finish_erasure()
    assert erasure.vectors >= 1 and erasure.indexes_optimized >= 1
    assert store.get_message(secret.id) is None
    assert [m.id for m in store.messages("t")] == [kept.id, last.id]
    assert all("hunter2" not in c.text for _, _, c in store.transcript_chunks("t"))
    ranked = [i for i, _ in store.keyword_ranked(CORPUS_MESSAGE, SECRET, where=EVERYTHING, limit=9)]
    assert secret.id not in ranked and len(ranked) == 1
    near = store.nearest([0.0, 1.0], space=space, where=EVERYTHING, limit=9)
    assert secret.id not in [i for i, _ in near]


def test_a_purged_thread_is_gone_with_its_chunks(store: Store) -> None:
    add(store, "t", "hunter2 one", "two")
    add(store, "keep", "hunter2 kept")
    chunk(store, "t")
    erased = store.purge_rows(SecretTarget(channel="t"))
    assert (erased.threads, erased.messages, erased.chunks) == (1, 2, 1)
    store.finish_erasure()
    assert store.get_thread("t") is None and not store.has_transcript_chunks("t")
    assert [t.channel for t in store.list_threads()] == ["keep"]
    assert store.purge_rows(SecretTarget(channel="t")).threads == 0  # nothing left


def test_purged_entries_and_sections(store: Store) -> None:
    remember_rows(store, entry("PIT01", "hunter2 rotates"), entry("PIT02", "kept"))
    document(store, "ops/vault.md", "# Vault\n\n## Key\n\nhunter2\n")
    document(store, "other.md", "## Kept\n\nhunter2 elsewhere\n")
    embed(store, CORPUS_SECTION)
    erased = store.purge_rows(SecretTarget(key="PIT01", source="vault.md"))
    assert (erased.memories, erased.sections) == (1, 1)  # "# Vault" alone is no section
    store.finish_erasure()
    assert store.memory_entry("PIT01") is None and store.memory_entry("PIT02") is not None
    assert store.document_sections(None, "ops/vault.md") == []
    assert len(store.document_sections(None, "other.md")) == 1


def test_redact_rewrites_every_text_of_a_message_and_its_chunks(store: Store) -> None:
    (message,) = add(
        store,
        "t",
        "pw hunter2 and hunter2",
        tool_calls=[{"id": "c", "name": "sh", "arguments": {"a": ["x hunter2", 3, None]}}],
        metadata={"note": "hunter2", "n": 1},
    )
    chunk(store, "t")
    space = embed(store, CORPUS_MESSAGE)
    assert _erase(store, SecretTarget(channel="t"), "hunter2") == 4
    store.finish_erasure()
    got = store.get_message(message.id)
    assert got is not None
    assert got.content == f"pw {REDACTED} and {REDACTED}"
    assert got.tool_calls == [
        {"id": "c", "name": "sh", "arguments": {"a": [f"x {REDACTED}", 3, None]}}
    ]
    assert got.metadata == {"note": REDACTED, "n": 1}
    assert all("hunter2" not in c.text for _, _, c in store.transcript_chunks("t"))
    assert store.keyword_ranked(CORPUS_MESSAGE, SECRET, where=EVERYTHING, limit=9) == []
    assert [t.id for t in store.embed_targets(space, after=0, limit=9)] == [message.id]


def test_redact_rewrites_sections_and_unknown_targets_change_nothing(store: Store) -> None:
    document(store, "vault.md", "## Key hunter2\n\nhunter2\n")
    assert _erase(store, SecretTarget(source="vault.md"), "hunter2") == 3
    assert all(
        "hunter2" not in (s.heading or "") for s in store.document_sections(None, "vault.md")
    )
    assert _erase(store, SecretTarget(message_id="m_0000000000000000"), "hunter2") == 0
    assert _erase(store, SecretTarget(channel="nowhere")) == 0
