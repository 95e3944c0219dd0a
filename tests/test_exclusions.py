"""Exclusions kept by their normalised path, and per-call ``excluded=`` on ``search``
(DESIGN §5 "Matching a source"). The document and code-file gates arrive with their domains;
here the thread gate and the shared SQL of the document/file gate are exercised."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

import recallbox
from backends import execute
from recallbox import InvalidArgument
from recallbox.domains.privacy import file_identity
from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite.schema import LATEST_VERSION
from recallbox.storage.sqlite.visibility import narrowing, source_allowed_sql


def _thread_from(box: recallbox.Box, channel: str, source: str, identity: str | None) -> None:
    box.append(channel, "user", f"the canary of {channel} lives here")
    box.store.set_thread_source(channel, source, identity)


def _channels(box: recallbox.Box, **kwargs: object) -> set[str]:
    hits = box.search("canary", allow_embed=False, **kwargs)  # type: ignore[arg-type]
    return {hit.channel or "" for hit in hits}


def test_a_path_exclusion_is_kept_whole_and_denies_threads_by_basename(
    box: recallbox.Box,
) -> None:
    _thread_from(box, "imp:a", "a.jsonl", None)
    _thread_from(box, "imp:b", "b.jsonl", None)
    box.exclude_source("./Projects\\X/A.jsonl")
    box.exclude_source("projects/y/a.jsonl")  # same basename, another exclusion
    assert box.policy().excluded_sources == ("projects/x/a.jsonl", "projects/y/a.jsonl")
    assert _channels(box) == {"imp:b"}
    box.include_source("projects/x/a.jsonl")
    assert _channels(box) == {"imp:b"}  # the other path still names a.jsonl
    box.include_source("PROJECTS/Y/a.jsonl")
    assert box.policy().excluded_sources == ()
    assert _channels(box) == {"imp:a", "imp:b"}


def test_per_call_excluded_adds_to_the_stored_policy(box: recallbox.Box, tmp_path: Path) -> None:
    original = tmp_path / "c.jsonl"
    original.write_text("{}", encoding="utf-8")
    link = tmp_path / "linked.jsonl"
    os.link(original, link)
    _thread_from(box, "imp:a", "a.jsonl", None)
    _thread_from(box, "imp:b", "b.jsonl", None)
    _thread_from(box, "imp:c", "linked.jsonl", file_identity(link))
    _thread_from(box, "live", "", None)
    assert _channels(box) == {"imp:a", "imp:b", "imp:c", "live"}
    assert _channels(box, excluded=["dir/A.JSONL"]) == {"imp:b", "imp:c", "live"}
    assert _channels(box, excluded=[str(original)]) == {"imp:a", "imp:b", "live"}  # hard link
    box.exclude_source("b.jsonl")
    assert _channels(box, excluded=["a.jsonl"]) == {"imp:c", "live"}  # only adds
    assert box.policy().excluded_sources == ("b.jsonl",)  # the call stored nothing


@pytest.mark.parametrize("bad", ["secrets.md", [3], [""], ["/"], 7])
def test_a_bad_excluded_is_refused(box: recallbox.Box, bad: object) -> None:
    with pytest.raises(InvalidArgument):
        box.search("canary", excluded=bad)  # type: ignore[arg-type]


def test_an_exclusion_made_before_paths_were_kept_is_lifted_by_its_path(
    db_path: Path,
) -> None:
    with recallbox.open(db_path) as box:
        _thread_from(box, "imp:a", "a.jsonl", None)
        # as migration 4 leaves a pre-path row: stored under its basename only
        execute(
            box,
            "INSERT INTO excluded_sources (exclusion, name, path, identity, added_at) "
            "VALUES ('a.jsonl', 'a.jsonl', NULL, NULL, '2026-01-01T00:00:00+00:00')",
        )
    with recallbox.open(db_path) as box:
        assert _channels(box) == set()
        box.include_source("/home/u/sessions/a.jsonl")
        assert _channels(box) == {"imp:a"}


def test_migration_4_keeps_old_exclusions(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.exclude_source("old.jsonl")
        assert box.store.schema_version() == LATEST_VERSION
        assert box.policy().excluded_sources == ("old.jsonl",)


DOCS = [  # (normalised source path, file identity)
    ("notes/secrets.md", None),
    ("team/notes/secrets.md", None),
    ("secrets.md", None),
    ("other/secrets.md.bak", None),
    ("notes/plan.md", "9:9"),
    ("mynotes/secrets.md", None),
]


@pytest.mark.parametrize(
    ("exclusion", "identity", "suffix", "denied"),
    [
        ("secrets.md", None, True, {0, 1, 2, 5}),  # no '/': every basename match
        ("notes/secrets.md", None, True, {0, 1}),  # equal, or ends with '/' + it
        ("notes/secrets.md", None, False, {0}),  # code files: equal only
        ("plan.md", None, True, {4}),
        ("x/unrelated.md", "9:9", True, {4}),  # a hard link, whatever its name
    ],
)
def test_the_document_and_file_gate(
    exclusion: str, identity: str | None, suffix: bool, denied: set[int]
) -> None:
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE TABLE excluded_sources (exclusion TEXT PRIMARY KEY, name TEXT NOT NULL, "
        "path TEXT, identity TEXT, added_at TEXT NOT NULL)"
    )
    conn.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, path TEXT, name TEXT, ident TEXT)")
    for i, (path, ident) in enumerate(DOCS):
        conn.execute(
            "INSERT INTO docs VALUES (?, ?, ?, ?)", (i, path, path.rsplit("/", 1)[-1], ident)
        )
    conn.execute(
        "INSERT INTO excluded_sources VALUES (?, ?, ?, ?, '')",
        (
            exclusion,
            exclusion.rsplit("/", 1)[-1],
            exclusion if "/" in exclusion else None,
            identity,
        ),
    )
    allowed_sql = source_allowed_sql("d.name", "d.path", "d.ident", suffix=suffix)
    allowed = {int(r[0]) for r in conn.execute(f"SELECT id FROM docs d WHERE {allowed_sql}")}
    assert set(range(len(DOCS))) - allowed == denied
    # the same exclusion given per call (excluded=) denies the same rows
    where = SearchFilter(excluded=(exclusion,), excluded_identities=(identity,) if identity else ())
    clause = narrowing(
        where,
        channel_sql=None,
        source_sql="d.name",
        path_sql="d.path",
        identity_sql="d.ident",
        suffix=suffix,
    )
    rows = conn.execute(f"SELECT id FROM docs d WHERE 1{clause.sql}", clause.params)
    assert set(range(len(DOCS))) - {int(r[0]) for r in rows} == denied
