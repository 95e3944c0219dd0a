"""Where a directory's git repository is, and which commit its work tree is at, without git.

The code index records the commit it was built from (issue #11 item 2). Reading ``.git``
directly keeps indexing free of a subprocess and works where git is not installed: ``HEAD``
is either a commit id or ``ref: refs/heads/<branch>``, and a branch is a loose file under
``refs/`` or a line of ``packed-refs``. A linked work tree's ``.git`` is a file
``gitdir: <path>`` whose directory names the shared one in ``commondir``. When the files do
not answer (a reftable repository, a ref missing from both places), ``git rev-parse HEAD`` is
asked if git is on ``PATH``; otherwise the commit is ``None`` and mtimes are the fallback.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

GIT_TIMEOUT_SECONDS = 5.0
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


@dataclass(frozen=True, slots=True)
class GitRepository:
    """A git work tree: its top directory, its git directory and the shared (common) one."""

    work_tree: Path
    git_dir: Path
    common_dir: Path


def find_repository(start: Path) -> GitRepository | None:
    """The git repository containing ``start`` (a directory), or ``None``."""
    current = start.resolve()
    for directory in (current, *current.parents):
        dot_git = directory / ".git"
        if dot_git.is_dir():
            return GitRepository(directory, dot_git, _common_dir(dot_git))
        if dot_git.is_file():
            git_dir = _gitdir_from_file(dot_git)
            if git_dir is not None:
                return GitRepository(directory, git_dir, _common_dir(git_dir))
    return None


def head_commit(repository: GitRepository) -> str | None:
    """The commit id ``HEAD`` points at, or ``None`` (an unborn branch, an unreadable ref)."""
    commit = _read_head(repository)
    if commit is None:
        commit = _rev_parse(repository.work_tree)
    return commit


def _read_head(repository: GitRepository) -> str | None:
    head = _read_text(repository.git_dir / "HEAD")
    if head is None:
        return None
    if _COMMIT.fullmatch(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head.removeprefix("ref:").strip()
    for base in (repository.git_dir, repository.common_dir):
        loose = _read_text(base / ref)
        if loose is not None and _COMMIT.fullmatch(loose):
            return loose
    return _packed_ref(repository.common_dir / "packed-refs", ref)


def _packed_ref(path: Path, ref: str) -> str | None:
    text = _read_text(path)
    if text is None:
        return None
    for line in text.splitlines():
        commit, _, name = line.partition(" ")
        if name == ref and _COMMIT.fullmatch(commit):
            return commit
    return None


def _rev_parse(work_tree: Path) -> str | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(work_tree), "rev-parse", "--verify", "-q", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and _COMMIT.fullmatch(commit) else None


def _gitdir_from_file(dot_git: Path) -> Path | None:
    text = _read_text(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    git_dir = Path(text.removeprefix("gitdir:").strip())
    if not git_dir.is_absolute():
        git_dir = dot_git.parent / git_dir
    return git_dir if git_dir.is_dir() else None


def _common_dir(git_dir: Path) -> Path:
    common = _read_text(git_dir / "commondir")
    if common is None:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None


__all__ = ["GitRepository", "find_repository", "head_commit"]
