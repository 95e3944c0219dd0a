"""MemoryStore: keyed entries, a per-type counter that never goes back, the MEMORY.md gate."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

import recallbox
from recallbox.domains.memory_model import identity_hash
from recallbox.domains.memory_ops import memory_write
from recallbox.storage.base import (
    CORPUS_MEMORY_ENTRY,
    EVERYTHING,
    LexicalQuery,
    SearchFilter,
    Store,
)

from .helpers import embed, entry, remember_rows

MIGRATIONS = LexicalQuery((("migrations",),))


def test_entries_are_stored_under_their_keys(store: Store) -> None:
    assert store.memory_entries() == [] and store.memory_entry("PIT01") is None
    assert store.highest_memory_number("pitfall") == 0
    first = entry("PIT01", "run the migrations first", title="Migrations", ref_count=2)
    other = entry("PRI01", "prefer small steps", evergreen=True, last_referenced=date(2025, 2, 1))
    remember_rows(store, first, other)
    assert store.memory_entries() == [first, other]
    assert store.memory_entry("PRI01") == other
    assert store.highest_memory_number("pitfall") == 1
    assert store.highest_memory_number("principle") == 1
    with pytest.raises(recallbox.InvalidArgument) as refused:
        remember_rows(store, entry("PIT01", "again"))
    assert "PIT01" in str(refused.value)
    assert store.memory_entries() == [first, other]


def test_the_highest_issued_number_never_goes_back(store: Store) -> None:
    remember_rows(store, entry("GDL07", "seven"))
    remember_rows(store, entry("GDL02", "two"))
    assert store.highest_memory_number("guideline") == 7
    assert store.highest_memory_number("decision") == 0


def test_an_update_replaces_an_entry_and_its_index(store: Store) -> None:
    old = entry("PIT01", "run the migrations first")
    remember_rows(store, old)
    assert [k for k, _ in store.keyword_ranked(CORPUS_MEMORY_ENTRY, MIGRATIONS, where=EVERYTHING, limit=5)] == ["PIT01"]  # fmt: skip
    new = replace(old, body="seed the cache first", state="dormant", ref_count=4)
    store.update_memory_entries([memory_write(new)])
    assert store.memory_entry("PIT01") == new
    found = store.keyword_ranked(CORPUS_MEMORY_ENTRY, MIGRATIONS, where=EVERYTHING, limit=5)
    assert found == []
    cache = LexicalQuery((("cache",),))
    assert store.keyword_ranked(CORPUS_MEMORY_ENTRY, cache, where=EVERYTHING, limit=5)[0][0] == (
        "PIT01"
    )
    with pytest.raises(recallbox.NotFound):
        store.update_memory_entries([memory_write(entry("PIT09", "nobody"))])


def test_identical_text_is_found_by_its_identity_hash(store: Store) -> None:
    remember_rows(
        store,
        entry("GDL01", "use  the staging key"),
        entry("GDL02", "use the staging key", superseded_by="GDL03"),
        entry("GDL03", "something else"),
    )
    found = store.memory_entries_with_identity(identity_hash("use the staging key"))
    assert [e.key for e in found] == ["GDL01"]  # the superseded one is not a candidate
    assert store.memory_entries_with_identity(identity_hash("nothing")) == []


def test_agent_reads_pass_through_the_memory_gate(store: Store) -> None:
    one, two = entry("PIT01", "run the migrations first"), entry("DEC01", "we chose postgres")
    remember_rows(store, one, two)
    assert store.memory_allowed(where=EVERYTHING)
    assert [r.entry for r in store.visible_memory(where=EVERYTHING)] == [one, two]
    rows = store.memory_rows(["PIT01", "DEC01", "XXX01"], where=EVERYTHING)
    assert sorted(rows) == ["DEC01", "PIT01"]
    assert rows["PIT01"].content == "run the migrations first" and rows["PIT01"].content_hash
    a_document = SearchFilter(excluded=("notes/memory.md",))  # a path names a document
    assert store.memory_allowed(where=a_document)
    for where in (
        SearchFilter(excluded=("memory.md",)),
        SearchFilter(excluded=("x.md", "memory.md")),
    ):
        assert not store.memory_allowed(where=where)
        assert store.visible_memory(where=where) == []
        assert store.memory_rows(["PIT01"], where=where) == {}
        assert store.keyword_ranked(CORPUS_MEMORY_ENTRY, MIGRATIONS, where=where, limit=5) == []
    store.set_source_excluded("notes/memory.md", True)
    assert store.memory_allowed(where=EVERYTHING)
    store.set_source_excluded("memory.md", True)
    assert not store.memory_allowed(where=EVERYTHING)
    assert store.visible_memory(where=EVERYTHING) == []
    assert store.memory_entries() == [one, two]  # the audit read still shows them
    space = store.ensure_embedding_space(CORPUS_MEMORY_ENTRY, "m", 2)
    assert store.embed_targets(space, after=0, limit=10) == []  # never sent to an embedder
    store.set_source_excluded("memory.md", False)
    assert store.count_embed_targets(space) == 2


def test_entries_have_vectors_and_refuse_scopes_and_channels(store: Store) -> None:
    remember_rows(store, entry("PIT01", "alpha lesson"), entry("PIT02", "beta lesson"))
    space = embed(store, CORPUS_MEMORY_ENTRY)
    assert space.count == 2 and store.corpus_size(CORPUS_MEMORY_ENTRY) == 2
    assert [k for k, _ in store.nearest([1.0, 0.0], space=space, where=EVERYTHING, limit=1)] == [
        "PIT01"
    ]
    denied = SearchFilter(excluded=("memory.md",))
    assert store.nearest([1.0, 0.0], space=space, where=denied, limit=5) == []
    assert store.distances([1.0, 0.0], ["PIT01"], space=space, where=denied) == {}
    for where in (SearchFilter(scope="P"), SearchFilter(channel="c")):
        with pytest.raises(recallbox.UnsupportedFilter):
            store.keyword_ranked(CORPUS_MEMORY_ENTRY, MIGRATIONS, where=where, limit=5)


def test_drills_of_entries_are_read_above_the_watermark(store: Store) -> None:
    remember_rows(store, entry("PIT01", "one"), entry("PIT02", "two"))
    assert store.decay_watermark() == 0 and store.memory_drills(after=0) == []
    store.record_drill("PIT01", domain="memory")
    store.record_drill("m_not_an_entry")
    store.record_hits("q", domain="memory", layer="keyword", target_ids=["PIT02"])
    store.record_drill("PIT02", domain="memory")
    drills = store.memory_drills(after=0)
    assert [d.key for d in drills] == ["PIT01", "PIT02"]
    assert drills[0].hit_id < drills[1].hit_id and drills[0].at <= drills[1].at
    store.set_decay_watermark(drills[0].hit_id)
    assert store.decay_watermark() == drills[0].hit_id
    assert [d.key for d in store.memory_drills(after=store.decay_watermark())] == ["PIT02"]
    store.set_decay_watermark(drills[1].hit_id)
    assert store.memory_drills(after=store.decay_watermark()) == []
