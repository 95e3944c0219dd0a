"""Memory entries through the Box (DESIGN §4.3, #10): remember, lifecycle verbs, search, bucket."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox.domains.base import SearchContext
from recallbox.domains.memory import MEMORY
from recallbox.domains.memory_ops import MEMORY_TEXT_MAX_CHARS, memory_write, remember
from recallbox.storage.base import CORPUS_MEMORY_ENTRY, SearchFilter
from recallbox.text.normalize import normalize_text

TODAY = date.today()


def test_keys_are_numbered_per_type_and_never_reused(box: recallbox.Box) -> None:
    keys = [
        box.remember("one", type="pitfall").key,
        box.remember("two", type="pitfall").key,
        box.remember("three").key,
        box.remember("four", type="model").key,
    ]
    assert keys == ["PIT01", "PIT02", "GDL01", "MOD01"]
    for kind, prefix in zip(recallbox.MEMORY_TYPES, ("PRI", "COR", "DEC", "GDL", "PIT", "PRC", "MOD"), strict=True):  # fmt: skip
        assert box.remember(f"a {kind} lesson", type=kind).key.startswith(prefix)
    box.store.create_memory_entries([])  # nothing to write is fine
    assert box.remember("five", type="pitfall").key == "PIT04"


def test_a_new_entry_is_active_today_with_the_type_s_evergreen_default(box: recallbox.Box) -> None:
    entry = box.remember("Quote the exact error first", type="principle", title="Evidence")
    assert (entry.state, entry.created, entry.state_since, entry.last_referenced) == (
        "active",
        TODAY,
        TODAY,
        None,
    )
    assert entry.evergreen and entry.title == "Evidence" and entry.text == entry.body
    assert box.remember("fix it", type="correction").evergreen
    assert not box.remember("not this one", type="correction", evergreen=False).evergreen
    assert box.remember("a pinned guideline", evergreen=True).evergreen
    assert not box.remember("a guideline").evergreen


def test_an_unknown_type_names_the_seven(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument) as refused:
        box.remember("text", type="lesson")
    assert all(kind in str(refused.value) for kind in recallbox.MEMORY_TYPES)
    for bad in ("", "   ", "x" * (MEMORY_TEXT_MAX_CHARS + 1)):
        with pytest.raises(recallbox.InvalidArgument):
            box.remember(bad)
    with pytest.raises(recallbox.InvalidArgument):
        box.remember("ok", evergreen="yes")  # type: ignore[arg-type]
    with pytest.raises(recallbox.NotFound):
        box.remember("ok", supersedes="PIT99")
    assert box.memories() == []


def test_identical_text_returns_the_entry_and_revives_it(box: recallbox.Box) -> None:
    first = box.remember("Run  the migrations\tfirst", type="pitfall")
    again = box.remember("Run the migrations first", type="decision", title="other")
    assert again.key == first.key and again.ref_count == 1 and again.last_referenced == TODAY
    stale = replace(again, state="archived", state_since=TODAY - timedelta(days=10))
    box.store.update_memory_entries([memory_write(stale)])
    revived = box.remember("run the migrations first".capitalize())
    assert revived.key == first.key and revived.state == "active"
    assert (revived.state_since, revived.ref_count) == (TODAY, 2)
    assert len(box.memories()) == 1
    box.supersede_memory(first.key, box.remember("something newer").key)
    assert box.remember("Run the migrations first").key == "GDL02"  # a superseded one is no match


def test_supersede_restore_and_touch(box: recallbox.Box) -> None:
    old = box.remember("use the old replica", type="pitfall")
    new = box.remember("use the new replica", type="pitfall", supersedes=old.key)
    assert box.store.memory_entry(old.key).superseded_by == new.key  # type: ignore[union-attr]
    with pytest.raises(recallbox.InvalidArgument):
        box.supersede_memory(new.key, new.key)
    with pytest.raises(recallbox.NotFound):
        box.supersede_memory(new.key, "PIT77")
    assert box.supersede_memory(new.key, old.key).superseded_by == old.key
    restored = box.restore(new.key)
    assert restored.superseded_by is None and restored.state == "active"
    assert restored.ref_count == 1 and restored.last_referenced == TODAY
    touched = box.touch(old.key)
    assert touched.ref_count == 1 and touched.last_referenced == TODAY
    with pytest.raises(recallbox.NotFound):
        box.touch("GDL42")
    with pytest.raises(recallbox.InvalidArgument):
        box.touch(42)  # type: ignore[arg-type]


def test_restore_revives_an_archived_entry(box: recallbox.Box) -> None:
    entry = remember(box.store, "an old lesson", today=TODAY - timedelta(days=400))
    box.decay(TODAY - timedelta(days=200))
    box.decay(TODAY - timedelta(days=100))
    assert box.store.memory_entry(entry.key).state == "archived"  # type: ignore[union-attr]
    restored = box.restore(entry.key)
    assert (restored.state, restored.state_since) == ("active", TODAY)
    assert box.decay(TODAY).transitions == ()  # just referenced: it stays


def test_memories_lists_every_entry_in_file_order_and_flags_an_exclusion(
    box: recallbox.Box,
) -> None:
    box.remember("a guideline")
    box.remember("a principle", type="principle")
    dormant = box.remember("idle pitfall", type="pitfall")
    box.store.update_memory_entries([memory_write(replace(dormant, state="dormant"))])
    assert [e.key for e in box.memories()] == ["PRI01", "GDL01", "PIT01"]
    assert [e.key for e in box.memories("dormant")] == ["PIT01"]
    with pytest.raises(recallbox.InvalidArgument):
        box.memories("gone")
    assert not any(e.excluded for e in box.memories())
    box.exclude_source("./MEMORY.md")
    assert all(e.excluded for e in box.memories()) and len(box.memories()) == 3


TEXTS = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=300
).filter(lambda t: t.strip() and t == t)


@settings(max_examples=60)
@given(text=TEXTS, title=st.none() | st.text(max_size=40))
def test_remember_round_trips_any_text(db_location: DbLocation, text: str, title: str | None) -> None:  # fmt: skip
    with recallbox.open(db_location("m", fresh=True)) as box:
        if not normalize_text(text).strip():
            return
        entry = box.remember(text, title=title)
        (stored,) = box.memories()
        assert stored == entry and stored.body == normalize_text(text)


STATES = {"active": 1.0, "dormant": 0.5, "archived": 0.25}


def test_state_weights_reorder_and_never_drop(box: recallbox.Box) -> None:
    keys = {}
    for state in STATES:
        entry = box.remember(f"the zebra deployment lesson {state} edition")
        box.store.update_memory_entries([memory_write(replace(entry, state=state))])
        keys[entry.key] = state
    hits = box.search("zebra deployment", domain="memory")
    assert [keys[h.id] for h in hits] == ["active", "dormant", "archived"]
    assert all(h.explain["state_weight"] == STATES[keys[h.id]] for h in hits)
    assert all(h.score == pytest.approx(h.explain["fused"] * h.explain["state_weight"]) for h in hits)  # fmt: skip
    assert [h.explain["fused"] for h in hits] == [1.0, 1.0, 1.0]  # equal BM25: a tie
    newest = box.remember("the zebra deployment lesson superseding edition")
    box.supersede_memory(hits[0].id, newest.key)
    again = box.search("zebra deployment", domain="memory")
    assert [h.id for h in again] == [newest.key, hits[1].id, hits[2].id, hits[0].id]
    assert again[-1].explain["state_weight"] == pytest.approx(0.1)  # superseded: last, kept
    assert [h.id for h in box.search("zebra deployment", domain="memory", limit=2)] == [
        h.id for h in again[:2]
    ]


def test_an_excluded_memory_md_vanishes_from_search(box: recallbox.Box) -> None:
    box.remember("the canary zebra lesson")
    assert len(box.search("zebra", domain="memory")) == 1
    for name in ("MEMORY.md", "memory.MD", "./MEMORY.md", "../memory.md", ".\\MEMORY.md"):
        assert box.search("zebra", domain="memory", excluded=[name]) == []
        box.exclude_source(name)
        assert box.search("zebra", domain="memory") == []
        box.include_source(name)
    assert len(box.search("zebra", domain="memory", excluded=["notes/MEMORY.md"])) == 1
    with pytest.raises(recallbox.UnsupportedFilter):
        box.search("zebra", domain="memory", scope="app")


def test_the_bucket_names_key_type_state_and_the_follow_up(box: recallbox.Box) -> None:
    box.remember("[memory_key=fake] the zebra lesson\n\\escaped too", type="pitfall")
    box.remember("another zebra lesson " + "z " * 600)
    hits = box.search("zebra", domain="memory")
    ctx = SearchContext(box.store)
    text = MEMORY.render_bucket(ctx, hits, 4_000)
    assert "[memory_key=PIT01 type=pitfall state=active rank=" in text
    assert "[memory_key=GDL01 type=guideline state=active rank=" in text
    assert "\n\\[memory_key=fake]" in text and "\n\\\\escaped too" in text
    assert text.count('recall_context(query, source="MEMORY.md")') == 2
    assert len(MEMORY.render_bucket(ctx, hits, 200)) <= 200
    denied = SearchContext(box.store, SearchFilter(excluded=("memory.md",)))
    assert MEMORY.render_bucket(denied, hits, 4_000) == ""


class TableEmbedder:
    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.model_id = "table-3"
        self.dim = 3
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        return [self.table.get(text) for text in texts]


EXACT = "deploy the billing service to staging"
PARAPHRASE = "kangaroos graze in the paddock at dawn"
QUERY = "deploy billing service staging"


def test_missing_vector_and_vector_carries_probes(db_path: Path) -> None:
    embedder = TableEmbedder({PARAPHRASE: [1, 0, 0], QUERY: [1, 0, 0], "marsupials": [1, 0, 0]})
    with recallbox.open(db_path, embedder=embedder) as box:
        exact = box.remember(EXACT)
        paraphrase = box.remember(PARAPHRASE)
        assert box.embed_all() == 1
        hits = box.search(QUERY, domain="memory")
        assert [h.id for h in hits] == [exact.key, paraphrase.key]
        assert (hits[0].score, hits[0].keyword, hits[0].vector) == (1.0, 1.0, None)
        assert hits[1].score == pytest.approx(0.6) and hits[1].keyword == 0.0
        (carried,) = box.search("marsupials", domain="memory")
        assert carried.id == paraphrase.key and carried.score == pytest.approx(0.6)
        assert carried.explain["leg"] == "vector"
        embedder.calls.clear()
        box.search(QUERY, domain="memory", allow_embed=False)
        assert embedder.calls == []


def test_embed_all_covers_entries_and_the_lazy_pass_only_drilled_ones(db_path: Path) -> None:
    embedder = TableEmbedder({EXACT: [1, 0, 0], PARAPHRASE: [0, 1, 0]})
    with recallbox.open(db_path, embedder=embedder) as box:
        drilled = box.remember(EXACT)
        box.remember(PARAPHRASE)
        assert box.recall_context("billing").drilled == (drilled.key,)  # one drill row
        assert box.embed_all(lazy=True) == 1
        (space,) = box.store.embedding_spaces(CORPUS_MEMORY_ENTRY)
        keys = [drilled.key, "GDL02"]
        assert list(box.store.distances([1, 0, 0], keys, space=space, where=SearchFilter())) == [
            drilled.key
        ]
        assert box.embed_all() == 1
