"""Source exclusion: normalised names and file identity (DESIGN §5)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import recallbox
from recallbox import InvalidArgument
from recallbox.domains.privacy import file_identity, normalize_source_name


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
    assert box.policy().excluded_sources == ("session-a.jsonl",)
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
