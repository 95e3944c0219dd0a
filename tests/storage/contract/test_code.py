"""CodeStore: writing an index run, the bookkeeping reads, the gated search reads, and the
generic keyword index and vectors over the code corpus."""

from __future__ import annotations

from dataclasses import replace

import pytest

import recallbox
from recallbox.storage.base import CORPUS_CODE_SYMBOL, EVERYTHING, LexicalQuery, SearchFilter, Store
from recallbox.storage.values_code import CodeEdgeFix, CodeIndexWrite

from .code_world import HELPER, LEAK, MAIN, OTHER, RUN, SCOPE, build, file_write, key
from .helpers import embed

NEEDLE = LexicalQuery((("needle",),))


@pytest.fixture
def store(store: Store) -> Store:
    build(store)
    return store


def test_an_index_run_is_recorded_per_scope(store: Store) -> None:
    scopes = store.code_scopes()
    assert [(s.name, s.root, s.commit, s.files) for s in scopes] == [
        (SCOPE, "/nowhere/app", "abc123", 3),
        (OTHER, "/nowhere/other", None, 1),
    ]
    app = scopes[0]
    assert (app.symbols, app.edges) == (3 + 4, 5)  # a module symbol per file
    assert app.indexed_at.tzinfo is not None


def test_the_graph_holds_every_file_symbol_and_edge(store: Store) -> None:
    graph = store.code_graph(SCOPE)
    assert [g.file.path for g in graph] == ["app/core.py", "app/main.py", "app/secret.py"]
    core = graph[0]
    assert (core.file.source, core.file.language, core.file.hash) == ("app/core.py", "python", "h1")
    assert [s.symbol_id for s in core.symbols] == ["app/core.py", RUN, HELPER]
    assert core.edges == ()  # imports and extends only; calls come separately
    calls = store.code_call_edges(SCOPE)
    assert [(e.ordinal, e.source_id, e.target_id) for e in calls["app/main.py"]] == [
        (0, MAIN, RUN), (1, MAIN, LEAK), (2, MAIN, None),
    ]  # fmt: skip
    assert calls["app/main.py"][1].target_last == "leak"
    named = store.code_call_edges(SCOPE, names=["run"])
    assert {path: [e.ordinal for e in edges] for path, edges in named.items()} == {
        "app/main.py": [0], "app/secret.py": [0],
    }  # fmt: skip
    assert store.code_graph("nope") == [] and store.code_call_edges("nope") == {}


def test_call_edges_by_name_or_by_a_part_of_their_target(store: Store) -> None:
    def ordinals(**filters: list[str]) -> dict[str, list[int]]:
        found = store.code_call_edges(SCOPE, **filters)
        return {path: [e.ordinal for e in edges] for path, edges in found.items()}

    # Targets: core.py "helper"; secret.py "core.run"; main.py "core.run", "secret.leak", "print".
    assert ordinals(mentions=["core."]) == {"app/main.py": [0], "app/secret.py": [0]}
    assert ordinals(mentions=["Core", "Run"]) == {}  # a case-sensitive substring
    assert ordinals(mentions=["t.le", "rin"]) == {"app/main.py": [1, 2]}
    assert ordinals(names=["helper"], mentions=["secret"]) == {
        "app/core.py": [0], "app/main.py": [1],
    }  # either filter  # fmt: skip
    assert ordinals(names=["run"], mentions=["run"]) == ordinals(names=["run"])
    assert ordinals(mentions=[]) == {} and ordinals(names=[], mentions=[]) == {}
    assert ordinals(mentions=[""]) == ordinals()  # the empty string is in every name
    assert store.code_call_edges(OTHER, mentions=["run"]) == {}  # other's run has no calls


def test_file_counts_agree_with_the_graph(store: Store) -> None:
    for scope in (SCOPE, OTHER):
        graph = store.code_graph(scope)
        assert store.code_file_counts(scope) == [(g.file, len(g.symbols)) for g in graph]
    assert [count for _, count in store.code_file_counts(SCOPE)] == [3, 2, 2]  # module symbols too
    assert store.code_file_counts("nope") == []
    store.write_code_index(CodeIndexWrite(SCOPE, "/nowhere/app", None, deleted=("app/secret.py",)))
    assert [f.path for f, _ in store.code_file_counts(SCOPE)] == ["app/core.py", "app/main.py"]


def test_symbol_rows_carry_the_file_stamp_and_the_visible_callers(store: Store) -> None:
    rows = store.code_symbol_rows([key(RUN), key(RUN, OTHER), key("nope"), "garbage"], where=EVERYTHING)
    assert sorted(rows) == sorted([key(RUN), key(RUN, OTHER)])
    run = rows[key(RUN)]
    assert (run.scope, run.symbol_id, run.name, run.kind, run.path) == (SCOPE, RUN, "run", "function", "app/core.py")
    assert (run.start_line, run.end_line, run.language) == (1, 2, "python")
    assert (run.signature, run.doc) == ("def run(task)", "run the needle alpha task")
    assert run.snippet.startswith("def run(task):")
    assert (run.root, run.file_hash, run.file_size, run.file_mtime_ns) == ("/nowhere/app", "h1", 10, 1)
    assert run.callers == 2  # leak and main
    assert rows[key(RUN, OTHER)].callers == 0
    scoped = store.code_symbol_rows([key(RUN), key(RUN, OTHER)], where=SearchFilter(scope=OTHER))
    assert list(scoped) == [key(RUN, OTHER)]
    assert store.code_symbol_rows([], where=EVERYTHING) == {}


def test_name_lookup_and_calls(store: Store) -> None:
    assert store.code_name_matches("run", where=EVERYTHING, limit=10) == [key(RUN), key(RUN, OTHER)]
    assert store.code_name_matches("run", where=EVERYTHING, limit=1) == [key(RUN)]
    assert store.code_name_matches("run", where=SearchFilter(scope=OTHER), limit=5) == [key(RUN, OTHER)]
    assert store.code_name_matches("", where=EVERYTHING, limit=5) == []
    incoming = store.code_calls([key(RUN), key("nope")], incoming=True, where=EVERYTHING, limit=10)
    assert incoming == {key(RUN): [key(MAIN), key(LEAK)]}  # by file, then line
    assert store.code_calls([key(RUN)], incoming=True, where=EVERYTHING, limit=1) == {
        key(RUN): [key(MAIN)]
    }
    outgoing = store.code_calls([key(MAIN)], incoming=False, where=EVERYTHING, limit=10)
    assert outgoing == {key(MAIN): [key(RUN), key(LEAK)]}  # resolved calls only
    assert store.code_calls([key(HELPER)], incoming=False, where=EVERYTHING, limit=10) == {
        key(HELPER): []
    }


def test_keyword_and_vectors_over_the_code_corpus(store: Store) -> None:
    ranked = store.keyword_ranked(CORPUS_CODE_SYMBOL, NEEDLE, where=EVERYTHING, limit=10)
    assert sorted(i for i, _ in ranked) == sorted([key(RUN), key(LEAK)])
    scoped = store.keyword_ranked(
        CORPUS_CODE_SYMBOL, LexicalQuery((("run",),)), where=SearchFilter(scope=OTHER), limit=10
    )
    assert [i for i, _ in scoped] == [key(RUN, OTHER)]
    with pytest.raises(recallbox.UnsupportedFilter):
        store.keyword_ranked(CORPUS_CODE_SYMBOL, NEEDLE, where=SearchFilter(channel="x"), limit=5)
    assert store.corpus_size(CORPUS_CODE_SYMBOL) == 7 + 2
    space = embed(store, CORPUS_CODE_SYMBOL)
    assert space.count == 4 + 1  # signature or docstring: every function
    near = store.nearest([1.0, 0.0], space=space, where=EVERYTHING, limit=2)
    assert sorted(i for i, _ in near) == sorted([key(RUN), key(LEAK)])
    inside = store.nearest([1.0, 0.0], space=space, where=SearchFilter(scope=OTHER), limit=5)
    assert [i for i, _ in inside] == [key(RUN, OTHER)]  # the scope filters inside the index
    unknown = store.nearest([1.0, 0.0], space=space, where=SearchFilter(scope="nope"), limit=5)
    assert unknown == []
    assert set(store.distances([1.0, 0.0], [key(RUN), key(MAIN)], space=space, where=EVERYTHING)) == {
        key(RUN), key(MAIN)
    }  # fmt: skip


def test_a_rewrite_keeps_unchanged_symbols_and_their_vectors(store: Store) -> None:
    space = embed(store, CORPUS_CODE_SYMBOL)
    assert store.count_embed_targets(space) == 0
    rewritten = file_write(
        "app/core.py",
        [("run", "run the needle alpha task"), ("helper", "now documented"), ("added", "new")],
        digest="h2",
    )
    store.write_code_index(CodeIndexWrite(SCOPE, "/nowhere/app", "def456", files=(rewritten,)))
    targets = store.embed_targets(space, after=0, limit=10)
    assert sorted(t.id for t in targets) == sorted([key(HELPER), key("app/core.py::added")])
    assert store.code_call_edges(SCOPE).get("app/core.py") is None  # its edges were replaced
    run = store.code_symbol_rows([key(RUN)], where=EVERYTHING)[key(RUN)]
    assert run.file_hash == "h2" and store.code_scopes()[0].commit == "def456"


def test_deleting_restamping_and_fixing_edges(store: Store) -> None:
    space = embed(store, CORPUS_CODE_SYMBOL)
    before = space.count
    moved = replace(store.code_graph(SCOPE)[0].file, size=99, mtime_ns=5, identity="1:1")
    store.write_code_index(
        CodeIndexWrite(
            SCOPE,
            "/elsewhere/app",
            None,
            deleted=("app/secret.py", "app/never-indexed.py"),
            restamped=(moved,),
            fixes=(CodeEdgeFix("app/main.py", 2, HELPER, "name-only"),),
        )
    )
    assert [g.file.path for g in store.code_graph(SCOPE)] == ["app/core.py", "app/main.py"]
    assert store.code_symbol_rows([key(LEAK)], where=EVERYTHING) == {}
    assert store.code_graph(SCOPE)[0].file == moved
    fixed = store.code_call_edges(SCOPE)["app/main.py"]
    assert [(e.ordinal, e.target_id, e.confidence) for e in fixed][2] == (2, HELPER, "name-only")
    assert store.code_calls([key(MAIN)], incoming=False, where=EVERYTHING, limit=9) == {
        key(MAIN): [key(RUN), key(HELPER)]
    }  # the edge to the deleted leak stays stored, and leads nowhere
    after = next(s for s in store.embedding_spaces(CORPUS_CODE_SYMBOL) if s.id == space.id)
    assert after.count == before - 1
    assert store.code_scopes()[0].root == "/elsewhere/app"
