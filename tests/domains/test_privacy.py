"""Source exclusion: normalised names and file identity (DESIGN §5)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import recallbox
from recallbox import InvalidArgument
from recallbox.domains.privacy import (
    file_identity,
    knowledge_source_denied,
    knowledge_source_excluded,
    memory_excluded,
    normalize_source_name,
    normalize_source_path,
)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Secrets.MD", "secrets.md"),
        ("./docs/Secrets.md", "secrets.md"),
        ("..\\Docs\\SECRETS.md", "secrets.md"),
        ("/abs/path/notes.md/", "notes.md"),
    ],
)
def test_normalize_source_name(name: str, expected: str) -> None:
    assert normalize_source_name(name) == expected


@pytest.mark.parametrize("bad", ["", "/", "./", ".."])
def test_bad_source_names(bad: str) -> None:
    with pytest.raises(InvalidArgument):
        normalize_source_name(bad)


def test_exclude_include_and_hard_links(box: recallbox.Box, tmp_path: Path) -> None:
    original = tmp_path / "session-a.jsonl"
    original.write_text("{}", encoding="utf-8")
    link = tmp_path / "other-name.jsonl"
    os.link(original, link)
    box.store.set_thread_source("imported:a", "other-name.jsonl", file_identity(link))
    box.store.set_thread_source("imported:b", "unrelated.jsonl", None)
    assert box.store.thread_allowed("imported:a")
    box.exclude_source(str(original))
    # the exclusion is kept as its normalised path; thread sources match its basename
    assert box.policy().excluded_sources == (normalize_source_path(str(original)),)
    assert not box.store.thread_allowed("imported:a")  # same inode, different name
    assert box.store.thread_allowed("imported:b")
    box.exclude_source("./UNRELATED.JSONL")
    assert not box.store.thread_allowed("imported:b")
    box.include_source("unrelated.jsonl")
    box.include_source(str(original))
    assert box.store.thread_allowed("imported:a") and box.store.thread_allowed("imported:b")
    assert box.policy().excluded_sources == ()


def test_quarantine_denies_and_unknown_is_denied(box: recallbox.Box) -> None:
    box.append("t", "user", "x")
    assert box.store.thread_allowed("t")
    box.quarantine("t")
    assert not box.store.thread_allowed("t")
    assert not box.store.thread_allowed("never")


# -- knowledge and memory sources (#10)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("./Docs\\Guide/./Secrets.MD", "docs/guide/secrets.md"),
        ("../../a/b.md", "a/b.md"),
        ("..\\notes.md", "notes.md"),
        ("/abs//x.md/", "abs/x.md"),
        ("MEMORY.md", "memory.md"),
    ],
)
def test_normalize_source_path(name: str, expected: str) -> None:
    assert normalize_source_path(name) == expected


@pytest.mark.parametrize(
    "exclusion",
    [
        "secrets.md",
        "SECRETS.MD",
        "./secrets.md",
        "../secrets.md",
        "docs/secrets.md",
        "docs\\Secrets.md",
        "./DOCS/secrets.md",
        "team/docs/secrets.md",
        "..\\team\\docs\\secrets.md",
    ],
)
def test_every_spelling_of_an_exclusion_denies_the_document(exclusion: str) -> None:
    assert knowledge_source_excluded("team/docs/secrets.md", exclusion)


@pytest.mark.parametrize(
    "exclusion", ["other.md", "xdocs/secrets.md", "other/team/docs/secrets.md", "secrets"]
)
def test_exclusions_that_do_not_match(exclusion: str) -> None:
    assert not knowledge_source_excluded("team/docs/secrets.md", exclusion)


def test_memory_md_denotes_the_memory_entries() -> None:
    for name in ["MEMORY.md", "memory.MD", "./MEMORY.md", "..\\Memory.md"]:
        assert memory_excluded([name])
        assert knowledge_source_excluded("notes/MEMORY.md", name)  # and every such basename
    assert not memory_excluded(["notes/MEMORY.md", "other.md"])
    assert not memory_excluded([])


def test_hard_links_are_denied_by_identity(tmp_path: Path) -> None:
    original = tmp_path / "secret.md"
    original.write_text("x", encoding="utf-8")
    os.link(original, tmp_path / "innocent.md")
    identity = file_identity(tmp_path / "innocent.md")
    assert identity is not None and identity == file_identity(original)
    assert knowledge_source_denied("innocent.md", identity, ["secret.md"], {identity})
    assert not knowledge_source_denied("innocent.md", identity, ["secret.md"], set())
    assert knowledge_source_denied("a/secret.md", None, ["secret.md"])
