"""VectorIndex and HitLog: spaces, exact nearest neighbours, the embedding passes' reads."""

from __future__ import annotations

import pytest

import recallbox
from recallbox.storage.base import (
    CORPUS_MESSAGE,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    SearchFilter,
    Store,
)

from .helpers import add, chunk, embed, row


def test_spaces_are_registered_once_per_model_and_dimension(store: Store) -> None:
    assert store.embedding_spaces(CORPUS_MESSAGE) == []
    space = store.ensure_embedding_space(CORPUS_MESSAGE, "m", 3)
    assert store.ensure_embedding_space(CORPUS_MESSAGE, "m", 3) == space
    other = store.ensure_embedding_space(CORPUS_MESSAGE, "m", 4)
    assert other.id != space.id
    assert (space.owner, space.model_id, space.dim, space.count) == (CORPUS_MESSAGE, "m", 3, 0)
    assert store.embedding_spaces(CORPUS_MESSAGE) == [space, other]
    assert store.embedding_spaces(CORPUS_TRANSCRIPT_CHUNK) == []
    with pytest.raises(recallbox.InvalidArgument):
        store.ensure_embedding_space("nonsense", "m", 3)


def test_corpus_size_counts_every_row(store: Store) -> None:
    assert store.corpus_size(CORPUS_MESSAGE) == 0
    add(store, "a", "one", "two", "event", kind="message")
    add(store, "b", "queued", pending=True)
    assert store.corpus_size(CORPUS_MESSAGE) == 4
    assert store.corpus_size(CORPUS_TRANSCRIPT_CHUNK) == 0
    chunk(store, "a")
    assert store.corpus_size(CORPUS_TRANSCRIPT_CHUNK) == 1


def test_embed_targets_walk_missing_and_stale_vectors_by_key(store: Store) -> None:
    rows = add(store, "a", "alpha one", "beta two", "   ", "alpha three")
    add(store, "a", "invisible", model_visible=False)
    add(store, "a", "event", role="system", kind="machine_event")
    space = store.ensure_embedding_space(CORPUS_MESSAGE, "m", 2)
    assert store.count_embed_targets(space) == 3  # text of visible plain messages only
    first = store.embed_targets(space, after=0, limit=2)
    assert [t.id for t in first] == [rows[0].id, rows[1].id]
    assert [t.text for t in first] == ["alpha one", "beta two"]
    rest = store.embed_targets(space, after=first[-1].key, limit=10)
    assert [t.id for t in rest] == [rows[3].id]
    assert store.put_embeddings(space, [(t, [1.0, 0.0]) for t in [*first, *rest]]) == 3
    assert store.count_embed_targets(space) == 0
    assert store.embedding_spaces(CORPUS_MESSAGE)[0].count == 3
    with pytest.raises(ValueError):
        store.put_embeddings(space, [(first[0], [1.0, 0.0, 0.0])])


def test_nearest_is_exact_over_visible_rows(store: Store) -> None:
    near, far = add(store, "a", "alpha near", "beta far")
    queued = add(store, "a", "alpha queued", pending=True)[0]
    other = add(store, "b", "alpha other")[0]
    space = embed(store, CORPUS_MESSAGE)
    found = store.nearest([1.0, 0.0], space=space, where=EVERYTHING, limit=10)
    assert {i for i, _ in found[:2]} == {near.id, other.id}  # equally near: any order
    assert [i for i, _ in found][2:] == [far.id] and queued.id not in dict(found)
    assert found[0][1] == pytest.approx(0.0) and found[-1][1] == pytest.approx(1.0)
    in_a = store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="a"), limit=1)
    assert [i for i, _ in in_a] == [near.id]  # a pending row never takes a visible row's place
    assert store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="zz"), limit=5) == []
    ids = [near.id, far.id, queued.id, "m_unknown"]
    distances = store.distances([0.0, 1.0], ids, space=space, where=EVERYTHING)
    assert distances == {near.id: pytest.approx(1.0), far.id: pytest.approx(0.0)}


def test_a_changed_text_needs_a_new_vector(store: Store) -> None:
    (message,) = add(store, "a", "alpha one")
    space = embed(store, CORPUS_MESSAGE)
    store.extend_message(message.id, row("beta changed"))
    assert store.distances([1.0, 0.0], [message.id], space=space, where=EVERYTHING) == {}
    assert store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="a"), limit=5) == []
    assert [t.id for t in store.embed_targets(space, after=0, limit=10)] == [message.id]


def test_dropping_a_space_deletes_its_vectors(store: Store) -> None:
    add(store, "a", "alpha", "beta")
    space = embed(store, CORPUS_MESSAGE)
    assert store.drop_embedding_space(space) == 2
    assert store.embedding_spaces(CORPUS_MESSAGE) == []


def test_the_chunk_corpus_has_the_same_vectors(store: Store) -> None:
    add(store, "a", "alpha chunk")
    add(store, "b", "beta chunk")
    chunk(store, "a")
    chunk(store, "b")
    space = embed(store, CORPUS_TRANSCRIPT_CHUNK)
    assert space.count == 2
    found = store.nearest([1.0, 0.0], space=space, where=EVERYTHING, limit=1)
    assert [i for i, _ in found] == ["a@1"]
    got = store.distances(
        [1.0, 0.0], ["a@1", "b@1", "a@9", "not an id"], space=space, where=EVERYTHING
    )
    assert got == {"a@1": pytest.approx(0.0), "b@1": pytest.approx(1.0)}


def test_drills_select_the_lazy_pass_and_hits_do_not(store: Store) -> None:
    first, second, third = add(store, "a", "one", "two", "three")
    chunk(store, "a")
    store.record_hits("two", domain="sessions", layer="keyword", target_ids=[first.id, third.id])
    store.record_hits("nothing", domain="sessions", layer="keyword", target_ids=[])
    store.record_drill(second.id)
    store.record_drill("a@1", domain="transcripts")
    messages = store.ensure_embedding_space(CORPUS_MESSAGE, "m", 2)
    drilled = store.embed_targets(messages, after=0, limit=10, drilled_only=True)
    assert [t.id for t in drilled] == [second.id]
    assert store.count_embed_targets(messages, drilled_only=True) == 1
    chunks = store.ensure_embedding_space(CORPUS_TRANSCRIPT_CHUNK, "m", 2)
    assert [t.id for t in store.embed_targets(chunks, after=0, limit=10, drilled_only=True)] == [
        "a@1"
    ]  # a chunk counts when it holds a drilled message
