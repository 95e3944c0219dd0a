"""Hashes, the changed-files diff, staleness, and the commit read from .git without git."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from recallbox.code.gitmeta import find_repository, head_commit
from recallbox.code.incremental import FileStamp, diff_hashes, file_hash, stale_files

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40
MAPS = st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from(["h1", "h2", "h3"]), max_size=8)


def test_file_hash_is_sha256_hex() -> None:
    assert file_hash(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_diff_hashes_example() -> None:
    changes = diff_hashes({"a.py": "1", "b.py": "2", "c.py": "3"}, {"a.py": "1", "b.py": "9", "d.py": "4"})
    assert (changes.added, changes.changed, changes.deleted, changes.unchanged) == (
        ("d.py",), ("b.py",), ("c.py",), ("a.py",),
    )
    assert changes.to_parse == ("b.py", "d.py")


@given(MAPS, MAPS)
def test_diff_hashes_partitions_both_maps(previous: dict[str, str], current: dict[str, str]) -> None:
    changes = diff_hashes(previous, current)
    assert sorted((*changes.added, *changes.changed, *changes.unchanged)) == sorted(current)
    assert sorted((*changes.deleted, *changes.changed, *changes.unchanged)) == sorted(previous)
    assert all(previous[path] == current[path] for path in changes.unchanged)
    assert all(previous[path] != current[path] for path in changes.changed)


def test_stale_files_by_stat_then_hash(tmp_path: Path) -> None:
    stamps = []
    for name in ("same.py", "touched.py", "edited.py", "gone.py"):
        path = tmp_path / name
        path.write_bytes(b"x = 1\n")
        stat = path.stat()
        stamps.append(FileStamp(name, file_hash(b"x = 1\n"), stat.st_size, stat.st_mtime_ns))
    later = stamps[0].mtime_ns + 5_000_000_000
    os.utime(tmp_path / "touched.py", ns=(later, later))
    (tmp_path / "edited.py").write_bytes(b"x = 2\n")
    os.utime(tmp_path / "edited.py", ns=(later, later))
    (tmp_path / "gone.py").unlink()
    assert stale_files(tmp_path, stamps) == ["edited.py", "gone.py"]


def make_git(root: Path, head: str) -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n", encoding="utf-8")
    return git


def test_head_on_a_loose_branch(tmp_path: Path) -> None:
    git = make_git(tmp_path, "ref: refs/heads/main")
    (git / "refs" / "heads" / "main").write_text(COMMIT_A + "\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    repository = find_repository(tmp_path / "sub")
    assert repository is not None and repository.work_tree == tmp_path.resolve()
    assert head_commit(repository) == COMMIT_A


def test_head_on_a_packed_branch_and_detached(tmp_path: Path) -> None:
    git = make_git(tmp_path, "ref: refs/heads/dev")
    (git / "packed-refs").write_text(
        f"# pack-refs with: peeled fully-peeled sorted\n{COMMIT_A} refs/heads/main\n{COMMIT_B} refs/heads/dev\n",
        encoding="utf-8",
    )
    repository = find_repository(tmp_path)
    assert repository is not None and head_commit(repository) == COMMIT_B
    (git / "HEAD").write_text(COMMIT_A + "\n", encoding="utf-8")
    assert head_commit(repository) == COMMIT_A


def test_head_of_a_linked_worktree(tmp_path: Path) -> None:
    main = tmp_path / "main"
    common = make_git(main, "ref: refs/heads/main")
    (common / "refs" / "heads" / "feature").write_text(COMMIT_B + "\n", encoding="utf-8")
    linked_dir = common / "worktrees" / "feature"
    linked_dir.mkdir(parents=True)
    (linked_dir / "HEAD").write_text("ref: refs/heads/feature\n", encoding="utf-8")
    (linked_dir / "commondir").write_text("../..\n", encoding="utf-8")
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {linked_dir}\n", encoding="utf-8")
    repository = find_repository(tree)
    assert repository is not None
    assert repository.common_dir == common.resolve()
    assert head_commit(repository) == COMMIT_B


def test_outside_a_repository_and_an_unborn_branch(tmp_path: Path) -> None:
    assert find_repository(tmp_path) is None
    make_git(tmp_path, "ref: refs/heads/main")  # no commit yet: the ref does not exist
    repository = find_repository(tmp_path)
    assert repository is not None and head_commit(repository) is None
