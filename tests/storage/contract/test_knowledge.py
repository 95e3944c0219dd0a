"""KnowledgeStore: documents written by section, kept when removed, read through the gate."""

from __future__ import annotations

import pytest

import recallbox
from recallbox.storage.base import (
    CORPUS_SECTION,
    EVERYTHING,
    LexicalQuery,
    SearchFilter,
    Store,
)

from .helpers import document, embed, remove_document

RUNBOOK = """# Runbook

## Deploy
make deploy ENV=staging

## Rollback
make rollback ENV=staging restores the previous image
"""
NEEDLE = LexicalQuery((("rollback",),))


def ranked(store: Store, query: LexicalQuery, where: SearchFilter = EVERYTHING) -> list[str]:
    return [i for i, _ in store.keyword_ranked(CORPUS_SECTION, query, where=where, limit=50)]


def test_a_document_is_written_by_section_and_planned_against(store: Store) -> None:
    assert store.document_sections(None, "runbook.md") == []
    deploy, rollback = document(store, "runbook.md", RUNBOOK, root="/notes")
    assert (deploy.heading, deploy.lines, deploy.scope) == ("Deploy", (1, 5), None)
    assert (rollback.heading, rollback.lines) == ("Rollback", (6, 7))
    assert (
        rollback.content == "## Rollback\nmake rollback ENV=staging restores the previous image\n"
    )
    assert deploy.id != rollback.id and deploy.id.startswith("s_")
    stored = store.document_sections(None, "runbook.md")
    assert [(s.id, s.heading, s.start_line, s.end_line, s.removed) for s in stored] == [
        (deploy.id, "Deploy", 1, 5, False),
        (rollback.id, "Rollback", 6, 7, False),
    ]
    assert [s.content_hash for s in stored] == [deploy.content_hash, rollback.content_hash]
    assert store.document_sources(None, "/notes") == ["runbook.md"]
    assert store.document_sources("other", "/notes") == [] == store.document_sources(None, "/x")
    assert ranked(store, NEEDLE) == [rollback.id]


def test_an_edit_keeps_ids_and_a_removal_keeps_the_row_out_of_the_index(store: Store) -> None:
    deploy, rollback = document(store, "runbook.md", RUNBOOK)
    edited = RUNBOOK.replace("restores the previous image", "restores the last good tag")
    again = document(store, "runbook.md", edited)
    assert [s.id for s in again] == [deploy.id, rollback.id]
    assert again[1].content_hash != rollback.content_hash
    assert ranked(store, LexicalQuery((("image",),))) == []
    assert ranked(store, LexicalQuery((("tag",),))) == [rollback.id]
    only_deploy = document(store, "runbook.md", RUNBOOK.split("## Rollback")[0])
    assert [s.id for s in only_deploy] == [deploy.id]
    assert [(s.id, s.removed) for s in store.document_sections(None, "runbook.md")] == [
        (deploy.id, False),
        (rollback.id, True),
    ]
    assert ranked(store, NEEDLE) == [] and store.section_rows([rollback.id], where=EVERYTHING) == {}
    restored = document(store, "runbook.md", edited)  # the same text comes back: the same row
    assert [s.id for s in restored] == [deploy.id, rollback.id]
    assert ranked(store, NEEDLE) == [rollback.id]
    assert remove_document(store, "runbook.md") == []
    assert store.knowledge_sources(where=EVERYTHING) == []
    assert all(s.removed for s in store.document_sections(None, "runbook.md"))


def test_section_rows_and_sources_read_scopes_plus_the_global_library(store: Store) -> None:
    (shared,) = document(store, "shared.md", "## Rollback\nglobal rollback notes\n")
    (mine,) = document(store, "mine.md", "## Rollback\nproject rollback notes\n", scope="P")
    (theirs,) = document(store, "theirs.md", "## Rollback\nother rollback notes\n", scope="Q")
    ids = [shared.id, mine.id, theirs.id, "s_unknown"]
    rows = store.section_rows(ids, where=EVERYTHING)
    assert sorted(rows) == sorted(ids[:3])
    row = rows[mine.id]
    assert (row.source, row.scope, row.heading, row.start_line, row.end_line) == (
        "mine.md",
        "P",
        "Rollback",
        1,
        2,
    )
    assert (row.heading_line, row.content, row.content_hash) == (1, mine.content, mine.content_hash)
    in_p = SearchFilter(scope="P")
    assert sorted(store.section_rows(ids, where=in_p)) == sorted([shared.id, mine.id])
    assert sorted(ranked(store, NEEDLE, in_p)) == sorted([shared.id, mine.id])
    assert store.knowledge_sources(where=EVERYTHING) == ["mine.md", "shared.md", "theirs.md"]
    assert store.knowledge_sources(where=in_p) == ["mine.md", "shared.md"]
    assert store.document_sections("P", "mine.md")[0].id == mine.id
    assert store.document_sections(None, "mine.md") == []


def test_source_scope_gives_the_document_s_bm25_statistics(store: Store) -> None:
    deploy, rollback = document(store, "runbook.md", RUNBOOK)
    document(store, "other.md", "## Rollback\nrollback rollback rollback\n")
    scope = store.source_scope("runbook.md", NEEDLE, where=EVERYTHING)
    assert scope is not None
    assert (scope.rows, scope.df) == (2, (1,))  # the document is the corpus
    (found,) = scope.matches
    assert found.id == rollback.id and found.freqs == (2,)  # heading and body
    make = LexicalQuery((("make",), ("staging",)))
    both = store.source_scope("runbook.md", make, where=EVERYTHING)
    assert both is not None and both.df == (2, 2) and len(both.matches) == 2
    assert both.tokens == sum(m.length for m in both.matches)
    empty = store.source_scope("runbook.md", LexicalQuery(), where=EVERYTHING)
    assert empty is not None and (empty.rows, empty.matches) == (2, ())
    assert store.source_scope("nope.md", NEEDLE, where=EVERYTHING) is None
    document(store, "runbook.md", RUNBOOK.split("## Rollback")[0])
    after = store.source_scope("runbook.md", NEEDLE, where=EVERYTHING)
    assert after is not None and (after.rows, after.matches) == (1, ())  # removed: not counted
    assert deploy.id in {s.id for s in store.document_sections(None, "runbook.md")}


def test_knowledge_sources_by_basename(store: Store) -> None:
    for source in ("a/Plan.md", "b/plan.md", "plan.txt", "c/other.md"):
        document(store, source, "## X\nwords\n")
    assert store.knowledge_sources(where=EVERYTHING, name="plan.md") == ["a/Plan.md", "b/plan.md"]
    assert store.knowledge_sources(where=EVERYTHING, name="nope.md") == []
    assert len(store.knowledge_sources(where=EVERYTHING)) == 4


def test_sections_have_vectors_and_refuse_a_channel(store: Store) -> None:
    document(store, "a.md", "## One\nalpha text\n\n## Two\nbeta text\n")
    assert store.corpus_size(CORPUS_SECTION) == 2
    space = embed(store, CORPUS_SECTION)
    assert space.count == 2
    (near,) = store.nearest([1.0, 0.0], space=space, where=EVERYTHING, limit=1)
    assert store.section_rows([near[0]], where=EVERYTHING)[near[0]].heading == "One"
    with pytest.raises(recallbox.UnsupportedFilter):
        store.keyword_ranked(CORPUS_SECTION, NEEDLE, where=SearchFilter(channel="c"), limit=5)
    with pytest.raises(recallbox.UnsupportedFilter):
        store.nearest([1.0, 0.0], space=space, where=SearchFilter(channel="c"), limit=5)


def test_a_removed_section_needs_no_vector(store: Store) -> None:
    document(store, "a.md", "## One\nalpha text\n\n## Two\nbeta text\n")
    space = embed(store, CORPUS_SECTION)
    (one,) = document(store, "a.md", "## One\nalpha text\n\n")
    found = store.nearest([0.0, 1.0], space=space, where=EVERYTHING, limit=5)
    assert [i for i, _ in found] == [one.id]  # the removed "Two" was nearer
    assert store.count_embed_targets(space) == 0
