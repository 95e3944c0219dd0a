"""Walk a repository for the code index: which files are source, and why the others are not.

Rules, in the order they are applied to each directory entry:

1. ``.git``, ``.hg`` and ``.svn`` are never entered and never reported.
2. A symbolic link is never followed: one whose target lies outside the root is skipped as
   ``symlink_outside``, one inside as ``symlink`` (its target is indexed under its own path, so
   nothing is indexed twice and no link can make the walk loop).
3. A path matched by a ``.gitignore`` (the root's, a nested one, or one of an enclosing
   repository's between its top and the root) or by ``.git/info/exclude`` is ``gitignored``.
   As in git, the deepest ``.gitignore`` with a matching pattern decides, the last matching
   pattern within a file wins, ``!`` re-includes, and an ignored directory is not entered, so
   nothing below it can be re-included. When the root itself is ignored by its enclosing
   repository (indexing an installed package inside a virtualenv), that repository's rules are
   not applied: the caller asked for that directory by name.
4. A directory named as vendored (``node_modules``, ``vendor``, ``.venv``, ...) or as build
   output (``dist``, ``build``, ``target``, ``__pycache__``, ...) is not entered.
5. A file whose extension no grammar handles is not a candidate (not reported).
6. A file over ``max_file_bytes``, named as minified (``*.min.js``) or generated
   (``*_pb2.py``, ``*.pb.go``, ``*.generated.*``) is skipped by name, before it is read.

:func:`classify_content` then checks what only the bytes show (binary, minified, a "generated,
do not edit" header); the indexer calls it on the bytes it reads anyway.

Gitignore matching uses ``pathspec`` (``GitIgnoreSpec``): git's pattern language has enough
corner cases (``**``, anchoring by an inner ``/``, directory-only patterns, escaped ``!`` and
``#``, trailing-space rules) that a small, pure-Python, well-tested matcher beats a home-grown
one; the nesting and precedence between files (above) is done here.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from recallbox.code.gitmeta import GitRepository, find_repository
from recallbox.code.types import SkippedFile, SkipReason
from recallbox.errors import DependencyMissing, InvalidArgument

#: Files larger than this are skipped as ``too_large`` (generated tables, data blobs).
MAX_CODE_FILE_BYTES = 1_000_000
#: A NUL byte in the first this-many bytes marks a file as binary.
BINARY_SNIFF_BYTES = 8_192
#: A "generated" header is looked for in the first this-many bytes.
GENERATED_SNIFF_BYTES = 2_048
#: A file whose mean line is longer than this (bytes) is minified.
MINIFIED_MEAN_LINE_BYTES = 300
#: A file with a line longer than this (bytes) is minified.
MINIFIED_MAX_LINE_BYTES = 10_000

VCS_DIRS = frozenset({".git", ".hg", ".svn"})
VENDORED_DIRS = frozenset(
    {
        "node_modules",
        "bower_components",
        "jspm_packages",
        "vendor",
        "third_party",
        "third-party",
        "site-packages",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "Pods",
    }
)
GENERATED_DIRS = frozenset(
    {
        "__pycache__",
        "dist",
        "build",
        "target",
        "out",
        ".next",
        ".nuxt",
        ".svelte-kit",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".gradle",
        "coverage",
        ".eggs",
    }
)
MINIFIED_NAMES = ("*.min.js", "*.min.mjs", "*.min.cjs", "*-min.js", "*.bundle.js")
GENERATED_NAMES = (
    "*_pb2.py",
    "*_pb2.pyi",
    "*_pb2_grpc.py",
    "*.pb.go",
    "*_pb.js",
    "*_pb.ts",
    "*.generated.*",
    "*_generated.*",
    "*.g.dart",
)
_GENERATED_HEADER = re.compile(
    rb"(?i)(?:code generated\b.{0,80}\bdo not edit|@generated\b"
    rb"|auto-?generated\b.{0,80}\bdo not (?:edit|modify))"
)


@dataclass(frozen=True, slots=True)
class WalkedFile:
    """A candidate source file: its path relative to the root (``/``-separated), size, mtime
    and file identity (``"<device>:<inode>"``, shared by hard links)."""

    path: str
    size: int
    mtime_ns: int
    identity: str | None = None


@dataclass(frozen=True, slots=True)
class WalkResult:
    """The candidate files (sorted by path) and everything skipped, with the reason."""

    root: Path
    files: tuple[WalkedFile, ...]
    skipped: tuple[SkippedFile, ...]
    repository: GitRepository | None

    def skipped_counts(self) -> dict[str, int]:
        """How many entries were skipped, by reason."""
        return dict(Counter(item.reason for item in self.skipped))


@dataclass(frozen=True, slots=True)
class _Rules:
    base: str  # directory of the .gitignore, relative to the ignore base, "" for the top
    spec: _Spec


class _Spec:
    """One gitignore file's patterns (a thin wrapper so pathspec stays a lazy import)."""

    def __init__(self, lines: Sequence[str]) -> None:
        try:
            import pathspec
        except ImportError as exc:  # pragma: no cover - the code extra installs it
            raise DependencyMissing(
                "code indexing needs pathspec: pip install 'recallbox[code]'"
            ) from exc
        self._spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def decides(self, path: str) -> bool | None:
        """True (ignored), False (re-included by ``!``) or None (no pattern matches)."""
        return self._spec.check_file(path).include


def walk_repository(
    root: Path,
    *,
    extensions: Collection[str] | None = None,
    max_file_bytes: int = MAX_CODE_FILE_BYTES,
) -> WalkResult:
    """Find the source files under ``root`` (see the module docstring for the rules).

    Args:
        root: the directory to index.
        extensions: the file extensions that are candidates (``".py"``, ...), lower case;
            ``None`` accepts every file.
        max_file_bytes: files larger than this are skipped as ``too_large``.

    Returns:
        The candidate files sorted by path, and the skipped entries in walk order.

    Raises:
        InvalidArgument: ``root`` is not a directory.
    """
    root = Path(root)
    if not root.is_dir():
        raise InvalidArgument(f"not a directory: {root}")
    real_root = root.resolve()
    repository, prefix, rules = _enclosing_rules(real_root)
    files: list[WalkedFile] = []
    skipped: list[SkippedFile] = []
    stack: list[tuple[Path, str, tuple[_Rules, ...]]] = [(real_root, "", rules)]
    while stack:
        directory, rel_dir, inherited = stack.pop()
        local = _join(prefix, rel_dir)
        own = _load_rules(directory / ".gitignore", local)
        active = (*inherited, own) if own is not None else inherited
        subdirs: list[tuple[Path, str, tuple[_Rules, ...]]] = []
        entries = _entries(directory)
        if entries is None:
            skipped.append(SkippedFile(rel_dir + "/", "unreadable"))
            continue
        for entry in entries:
            if entry.name in VCS_DIRS:
                continue
            rel = _join(rel_dir, entry.name)
            reason = _entry_reason(entry, real_root, _join(prefix, rel), active)
            if reason is not None:
                suffix = "/" if entry.is_dir(follow_symlinks=False) else ""
                skipped.append(SkippedFile(rel + suffix, reason))
                continue
            if entry.is_dir(follow_symlinks=False):
                subdirs.append((Path(entry.path), rel, active))
                continue
            walked = _file_candidate(entry, rel, extensions, max_file_bytes, skipped)
            if walked is not None:
                files.append(walked)
        stack.extend(reversed(subdirs))
    files.sort(key=lambda item: item.path)
    return WalkResult(real_root, tuple(files), tuple(skipped), repository)


def classify_content(data: bytes) -> SkipReason | None:
    """Why a file's bytes are not indexable source (``binary``, ``minified``, ``generated``), or None."""
    if b"\0" in data[:BINARY_SNIFF_BYTES]:
        return "binary"
    if _GENERATED_HEADER.search(data[:GENERATED_SNIFF_BYTES]):
        return "generated"
    lines = data.count(b"\n") + 1
    if len(data) / lines > MINIFIED_MEAN_LINE_BYTES:
        return "minified"
    if (
        len(data) > MINIFIED_MAX_LINE_BYTES
        and max(map(len, data.split(b"\n"))) > MINIFIED_MAX_LINE_BYTES
    ):
        return "minified"
    return None


def _entry_reason(
    entry: os.DirEntry[str], real_root: Path, ignore_path: str, rules: tuple[_Rules, ...]
) -> SkipReason | None:
    """Why a directory entry is left out, or ``None`` to keep it."""
    is_dir = entry.is_dir(follow_symlinks=False)
    if _ignored(ignore_path, is_dir, rules):
        return "gitignored"
    if entry.is_symlink():
        return "symlink" if _inside(Path(entry.path), real_root) else "symlink_outside"
    if is_dir and entry.name in VENDORED_DIRS:
        return "vendored"
    if is_dir and entry.name in GENERATED_DIRS:
        return "generated"
    return None


def _file_candidate(
    entry: os.DirEntry[str],
    rel: str,
    extensions: Collection[str] | None,
    max_file_bytes: int,
    skipped: list[SkippedFile],
) -> WalkedFile | None:
    if not entry.is_file(follow_symlinks=False):
        return None  # a socket, a fifo, a device
    if extensions is not None and os.path.splitext(entry.name)[1].lower() not in extensions:
        return None
    lowered = entry.name.lower()
    if any(fnmatch.fnmatchcase(lowered, pattern) for pattern in MINIFIED_NAMES):
        skipped.append(SkippedFile(rel, "minified"))
        return None
    if any(fnmatch.fnmatchcase(lowered, pattern) for pattern in GENERATED_NAMES):
        skipped.append(SkippedFile(rel, "generated"))
        return None
    try:
        stat = entry.stat(follow_symlinks=False)
    except OSError as exc:
        skipped.append(SkippedFile(rel, "unreadable", str(exc)))
        return None
    if stat.st_size > max_file_bytes:
        skipped.append(SkippedFile(rel, "too_large", f"{stat.st_size} bytes"))
        return None
    return WalkedFile(rel, stat.st_size, stat.st_mtime_ns, f"{stat.st_dev}:{stat.st_ino}")


def _enclosing_rules(real_root: Path) -> tuple[GitRepository | None, str, tuple[_Rules, ...]]:
    """The enclosing repository, the root's path inside it and the rules above the root."""
    repository = find_repository(real_root)
    if repository is None:
        return None, "", ()
    work_tree = repository.work_tree.resolve()
    prefix = real_root.relative_to(work_tree).as_posix() if real_root != work_tree else ""
    rules: list[_Rules] = []
    exclude = _load_rules(repository.common_dir / "info" / "exclude", "")
    if exclude is not None:
        rules.append(exclude)
    if prefix:
        parts = prefix.split("/")
        for depth in range(len(parts)):
            base = "/".join(parts[:depth])
            own = _load_rules(work_tree / base / ".gitignore", base)
            if own is not None:
                rules.append(own)
            if _ignored("/".join(parts[: depth + 1]), True, tuple(rules)):
                return None, "", ()  # the root itself is ignored: index it as a plain folder
    return repository, prefix, tuple(rules)


def _ignored(path: str, is_dir: bool, rules: tuple[_Rules, ...]) -> bool:
    for rule in reversed(rules):
        if rule.base and not path.startswith(rule.base + "/"):
            continue
        local = path[len(rule.base) + 1 :] if rule.base else path
        decided = rule.spec.decides(local + "/" if is_dir else local)
        if decided is not None:
            return decided
    return False


def _load_rules(path: Path, base: str) -> _Rules | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    lines = text.splitlines()
    return _Rules(base, _Spec(lines)) if lines else None


def _entries(directory: Path) -> list[os.DirEntry[str]] | None:
    try:
        with os.scandir(directory) as iterator:
            return sorted(iterator, key=lambda entry: entry.name)
    except OSError:
        return None


def _inside(link: Path, real_root: Path) -> bool:
    try:
        target = link.resolve()
    except (OSError, RuntimeError):
        return False
    return target == real_root or real_root in target.parents


def _join(head: str, tail: str) -> str:
    return f"{head}/{tail}" if head and tail else head or tail


__all__ = [
    "BINARY_SNIFF_BYTES",
    "GENERATED_DIRS",
    "GENERATED_NAMES",
    "GENERATED_SNIFF_BYTES",
    "MAX_CODE_FILE_BYTES",
    "MINIFIED_MAX_LINE_BYTES",
    "MINIFIED_MEAN_LINE_BYTES",
    "MINIFIED_NAMES",
    "VENDORED_DIRS",
    "WalkResult",
    "WalkedFile",
    "classify_content",
    "walk_repository",
]
