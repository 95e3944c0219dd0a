"""PolicyStore and the visibility rule: a denied thread is invisible to every read of a search.

Every read that serves a search is checked against every way of denying a thread: quarantine,
a stored exclusion of its source (by name, by file identity) and a per-call exclusion
(``SearchFilter.excluded``). The allowed thread's rows must come through untouched. The same
holds for knowledge documents (denied by basename, by path, by file identity, per call) and
for memory entries (denied as a whole by an exclusion of ``MEMORY.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

import recallbox
from recallbox.storage.base import (
    CORPUS_CODE_SYMBOL,
    CORPUS_MEMORY_ENTRY,
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    EVERYTHING,
    EmbeddingSpace,
    LexicalQuery,
    LiteralQuery,
    SearchFilter,
    Store,
    chunk_id,
)

from . import code_world
from .helpers import (
    DENIALS,
    DOCUMENT_DENIALS,
    add,
    chunk,
    deny,
    deny_document,
    document,
    embed,
    entry,
    remember_rows,
    row,
    stored,
)

NEEDLE = LexicalQuery((("needle",),))


@dataclass
class World:
    store: Store
    ops: list[str]
    secret: list[str]
    messages: EmbeddingSpace
    chunks: EmbeddingSpace


@pytest.fixture
def world(store: Store) -> World:
    ops = [m.id for m in add(store, "ops", "needle alpha one", "needle alpha two")]
    secret = [m.id for m in add(store, "secret", "needle alpha hidden", "needle alpha more")]
    chunk(store, "ops")
    chunk(store, "secret")
    return World(
        store, ops, secret, embed(store, CORPUS_MESSAGE), embed(store, CORPUS_TRANSCRIPT_CHUNK)
    )


def test_the_policy_is_stored_and_reported(store: Store) -> None:
    store.ensure_thread("ops", None)
    assert store.thread_allowed("ops") and not store.thread_allowed("nope")
    store.set_quarantined("ops", True)
    store.set_thread_source("dev", "Notes.md", None)
    store.set_source_excluded("notes.md", True, "1:2")
    store.set_source_excluded("notes.md", True)  # again, without identity: the identity stays
    policy = store.policy()
    assert policy.quarantined == ("ops",) and policy.excluded_sources == ("notes.md",)
    assert not store.thread_allowed("ops")
    thread = store.get_thread("ops")
    assert thread is not None and thread.quarantined
    store.set_quarantined("ops", False)
    store.set_source_excluded("notes.md", False)
    assert store.thread_allowed("ops") and store.policy().excluded_sources == ()
    with pytest.raises(recallbox.NotFound):
        store.set_quarantined("nope", True)


def test_an_exclusion_matches_by_name_or_by_identity(store: Store) -> None:
    store.set_thread_source("a", "a.jsonl", "9:1")
    store.set_thread_source("b", "b.jsonl", None)
    store.set_source_excluded("renamed.jsonl", True, "9:1")
    assert not store.thread_allowed("a") and store.thread_allowed("b")
    store.set_source_excluded("b.jsonl", True)
    assert not store.thread_allowed("b")


@pytest.mark.parametrize("how", DENIALS)
def test_a_denied_thread_is_invisible_to_every_search_read(world: World, how: str) -> None:
    store, ops, secret = world.store, world.ops, world.secret
    where = deny(store, "secret", how)
    both = [*ops, *secret]
    chunk_ids = [chunk_id("ops", 1), chunk_id("secret", 1)]
    for term in ("needle", "ne"):
        found = store.literal_candidates(
            LiteralQuery(term, True), where=where, limit=100, recent=10
        )
        assert sorted(m.id for m in found) == sorted(ops)
    for corpus, expected in ((CORPUS_MESSAGE, ops), (CORPUS_TRANSCRIPT_CHUNK, chunk_ids[:1])):
        ranked = store.keyword_ranked(corpus, NEEDLE, where=where, limit=100)
        assert sorted(i for i, _ in ranked) == sorted(expected)
        secret_scope = replace(where, channel="secret")
        assert store.keyword_scope(corpus, NEEDLE, where=secret_scope) is None
        assert store.keyword_scope(corpus, NEEDLE, where=replace(where, channel="ops"))
    for space, ids, expected in (
        (world.messages, both, ops),
        (world.chunks, chunk_ids, chunk_ids[:1]),
    ):
        near = store.nearest([1.0, 0.0], space=space, where=where, limit=10)
        assert sorted(i for i, _ in near) == sorted(expected)
        assert sorted(store.distances([1.0, 0.0], ids, space=space, where=where)) == sorted(
            expected
        )
        assert (
            store.nearest([1.0, 0.0], space=space, where=replace(where, channel="secret"), limit=5)
            == []
        )
    assert sorted(store.search_rows(both, where=where)) == sorted(ops)
    assert list(store.chunk_rows(chunk_ids, where=where)) == chunk_ids[:1]
    assert store.session_window(secret[0], 5, where=where) == []
    assert [m.id for m in store.session_window(ops[0], 5, where=where)] == ops
    if stored(how):
        assert store.readable_history("secret") == []
        assert [m.id for m in store.readable_history("ops")] == ops
        assert store.readable_message(secret[0]) is None
        assert store.transcript_chunk("secret", 1, 0) is None
        assert not store.thread_allowed("secret")
        for space in (world.messages, world.chunks):
            store.put_embeddings(space, [])  # nothing to write is fine
        assert store.readable_message(ops[0]) is not None


@pytest.mark.parametrize("how", [d for d in DENIALS if stored(d)])
def test_a_denied_text_is_never_handed_to_an_embedder(store: Store, how: str) -> None:
    add(store, "secret", "needle alpha hidden")
    allowed = add(store, "ops", "needle alpha shown")[0]
    chunk(store, "ops")
    chunk(store, "secret")
    deny(store, "secret", how)
    for corpus, expected in ((CORPUS_MESSAGE, [allowed.id]), (CORPUS_TRANSCRIPT_CHUNK, ["ops@1"])):
        space = store.ensure_embedding_space(corpus, "m", 2)
        assert [t.id for t in store.embed_targets(space, after=0, limit=10)] == expected
        assert store.count_embed_targets(space) == 1


@pytest.mark.parametrize("how", DENIALS)
def test_a_denial_committed_after_the_candidates_were_taken_still_holds(
    store: Store, how: str
) -> None:
    """The privacy race of #9: the lazy part of the literal stream applies the rule again."""
    add(store, "secret", *(f"needle {i}" for i in range(200)))
    where = EVERYTHING if stored(how) else SearchFilter(excluded=("secret.jsonl",))
    stream = store.literal_candidates(LiteralQuery("needle", True), where=where, limit=1000)
    deny(store, "secret", how)
    assert [m.id for m in stream] == []


def test_an_unsupported_filter_is_refused_not_dropped(world: World) -> None:
    scoped = SearchFilter(scope="project")
    store = world.store
    with pytest.raises(recallbox.UnsupportedFilter):
        store.keyword_ranked(CORPUS_MESSAGE, NEEDLE, where=scoped, limit=5)
    with pytest.raises(recallbox.UnsupportedFilter):
        store.literal_candidates(LiteralQuery("needle", True), where=scoped, limit=5)
    with pytest.raises(recallbox.UnsupportedFilter):
        store.nearest([1.0, 0.0], space=world.messages, where=scoped, limit=5)


# -- documents and memory entries (#10) -------------------------------------------------------
@pytest.mark.parametrize("how", DOCUMENT_DENIALS)
def test_a_denied_document_is_invisible_to_every_search_read(store: Store, how: str) -> None:
    (shown,) = document(store, "public/notes.md", "## Alpha\nneedle alpha shown\n")
    (hidden,) = document(
        store, "private/secret.md", "## Alpha\nneedle alpha hidden\n", identity="7:42"
    )
    space = embed(store, CORPUS_SECTION)
    where = deny_document(store, how)
    ids = [shown.id, hidden.id]
    assert [i for i, _ in store.keyword_ranked(CORPUS_SECTION, NEEDLE, where=where, limit=9)] == [
        shown.id
    ]
    assert [i for i, _ in store.nearest([1.0, 0.0], space=space, where=where, limit=9)] == [
        shown.id
    ]
    assert list(store.distances([1.0, 0.0], ids, space=space, where=where)) == [shown.id]
    assert list(store.section_rows(ids, where=where)) == [shown.id]
    assert store.knowledge_sources(where=where) == ["public/notes.md"]
    assert store.knowledge_sources(where=where, name="secret.md") == []
    assert store.source_scope("private/secret.md", NEEDLE, where=where) is None
    public = store.source_scope("public/notes.md", NEEDLE, where=where)
    assert public is not None and [m.id for m in public.matches] == [shown.id]
    if how.startswith("excluded") and not how.endswith("call"):
        fresh = store.ensure_embedding_space(CORPUS_SECTION, "other", 2)
        assert [t.id for t in store.embed_targets(fresh, after=0, limit=9)] == [shown.id]


def test_a_path_exclusion_denies_that_document_only(store: Store) -> None:
    document(store, "a/secret.md", "## A\nneedle one\n")
    document(store, "b/secret.md", "## B\nneedle two\n")
    document(store, "deep/a/secret.md", "## C\nneedle three\n")
    store.set_source_excluded("a/secret.md", True)
    assert store.knowledge_sources(where=EVERYTHING) == ["b/secret.md"]
    store.set_source_excluded("a/secret.md", False)
    assert len(store.knowledge_sources(where=SearchFilter(excluded=("a/secret.md",)))) == 1


@pytest.mark.parametrize("stored_denial", [True, False])
def test_an_exclusion_of_memory_md_denies_every_entry(store: Store, stored_denial: bool) -> None:
    remember_rows(store, entry("PIT01", "needle alpha"), entry("PRI01", "needle beta"))
    space = embed(store, CORPUS_MEMORY_ENTRY)
    where = EVERYTHING
    if stored_denial:
        store.set_source_excluded("memory.md", True)
    else:
        where = SearchFilter(excluded=("memory.md",))
    keys = ["PIT01", "PRI01"]
    assert store.keyword_ranked(CORPUS_MEMORY_ENTRY, NEEDLE, where=where, limit=9) == []
    assert store.nearest([1.0, 0.0], space=space, where=where, limit=9) == []
    assert store.distances([1.0, 0.0], keys, space=space, where=where) == {}
    assert store.memory_rows(keys, where=where) == {} and store.visible_memory(where=where) == []
    assert not store.memory_allowed(where=where)


def test_the_readable_history_is_what_a_model_may_read(store: Store) -> None:
    kept = add(store, "t", "first", "second")
    add(store, "t", "queued", pending=True)
    add(store, "t", "hidden", model_visible=False)
    add(store, "t", "event", role="system", kind="machine_event")
    gone = add(store, "t", "replaced")[0]
    store.set_superseded(gone.id, kept[0].id)
    summary = store.append("t", [row("the summary", role="system", kind="compaction_summary")])[0]
    later = add(store, "t", "after the compaction")
    history = store.readable_history("t")
    assert [m.id for m in history] == [kept[0].id, kept[1].id, summary.id, later[0].id]
    assert [m.generation for m in history] == [1, 1, 2, 2]
    assert store.readable_history("nope") == []


CODE_DENIALS = ("excluded name", "excluded path", "excluded identity", "excluded for the call")


def deny_code_file(store: Store, how: str) -> SearchFilter:
    """Deny ``app/secret.py`` one way; returns the filter a search must then pass."""
    if how == "excluded name":
        store.set_source_excluded("secret.py", True)
    elif how == "excluded path":
        store.set_source_excluded("other/secret.py", True)  # another file of that name: no effect
        store.set_source_excluded("app/secret.py", True)
    elif how == "excluded identity":
        store.set_source_excluded("renamed.py", True, code_world.SECRET_IDENTITY)
    else:
        return SearchFilter(excluded=("app/secret.py",))
    return EVERYTHING


@pytest.mark.parametrize("how", CODE_DENIALS)
def test_a_denied_code_file_is_invisible_to_every_search_read(store: Store, how: str) -> None:
    code_world.build(store)
    space = embed(store, CORPUS_CODE_SYMBOL)
    where = deny_code_file(store, how)
    run, leak, main = (code_world.key(s) for s in (code_world.RUN, code_world.LEAK, code_world.MAIN))
    ranked = store.keyword_ranked(CORPUS_CODE_SYMBOL, NEEDLE, where=where, limit=10)
    assert [i for i, _ in ranked] == [run]
    near = store.nearest([1.0, 0.0], space=space, where=where, limit=10)
    assert leak not in {i for i, _ in near} and run in {i for i, _ in near}
    assert set(store.distances([1.0, 0.0], [run, leak], space=space, where=where)) == {run}
    rows = store.code_symbol_rows([run, leak, main], where=where)
    assert sorted(rows) == sorted([run, main])
    assert rows[run].callers == 1  # main; the denied leak is not counted
    assert store.code_name_matches("leak", where=where, limit=5) == []
    assert store.code_calls([run], incoming=True, where=where, limit=10) == {run: [main]}
    assert store.code_calls([main], incoming=False, where=where, limit=10) == {main: [run]}
    assert store.code_calls([leak], incoming=False, where=where, limit=10) == {}
    if how != "excluded for the call":
        fresh = store.ensure_embedding_space(CORPUS_CODE_SYMBOL, "another", 2)
        targets = store.embed_targets(fresh, after=0, limit=50)
        assert leak not in {t.id for t in targets} and run in {t.id for t in targets}
        assert store.count_embed_targets(fresh) == len(targets)
