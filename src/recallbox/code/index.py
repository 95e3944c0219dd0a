"""Walk, read, classify and parse a repository: everything ``box.index_code`` needs but storage.

:func:`parse_repository` is the whole pipeline for one root. Given the ``{path: hash}`` map of
the previous index, it parses only the files whose hash changed and lists the deleted ones;
the caller stores the new :class:`~recallbox.code.types.FileIndex` records, drops the deleted
files, then runs :func:`~recallbox.code.resolve.resolve_edges` over all the scope's files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recallbox.code.extract import extract_file
from recallbox.code.gitmeta import head_commit
from recallbox.code.incremental import FileChanges, FileStamp, diff_hashes, file_hash
from recallbox.code.languages import (
    CODE_EXTENSIONS,
    language_for_path,
    parser_for,
    require_tree_sitter,
)
from recallbox.code.types import CodeIndexReport, FileFailure, FileIndex, SkippedFile
from recallbox.code.walk import MAX_CODE_FILE_BYTES, WalkedFile, classify_content, walk_repository

#: Called after each file with (files done, files to do, path).
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class ParsedRepository:
    """The parsed (new or changed) files, what changed, and the run's report.

    ``stamps`` holds every source file present now (hash, size, mtime, identity), parsed or
    not; ``sources`` the bytes of the parsed files (what symbol excerpts are cut from).
    """

    files: tuple[FileIndex, ...]
    changes: FileChanges
    report: CodeIndexReport
    stamps: dict[str, FileStamp] = field(default_factory=dict)
    sources: dict[str, bytes] = field(default_factory=dict)


def parse_repository(
    root: Path,
    *,
    scope: str | None = None,
    previous: Mapping[str, str] | None = None,
    stamps: Mapping[str, FileStamp] | None = None,
    max_file_bytes: int = MAX_CODE_FILE_BYTES,
    progress: Progress | None = None,
) -> ParsedRepository:
    """Parse the source files of ``root`` that are new or changed since the last index.

    Args:
        root: the repository (or any directory) to index.
        scope: the project name recorded in the report (default: the root directory's name).
        previous: ``{path: hash}`` of the files indexed last time (``None`` for a first index;
            taken from ``stamps`` when only they are given).
        stamps: what the last index recorded per file; a file whose size and mtime still match
            its stamp is taken as unchanged without being read (as ``git status`` does).
        max_file_bytes: files larger than this are skipped as ``too_large``.
        progress: called as each file is done (read and found unchanged or skipped, or parsed).

    Returns:
        The new :class:`FileIndex` records (``report.symbols``/``edges`` count only these),
        the diff against ``previous`` and the report.

    Raises:
        DependencyMissing: ``tree-sitter`` is not installed.
        InvalidArgument: ``root`` is not a directory.
    """
    require_tree_sitter()
    known = dict(stamps or {})
    before = dict(previous) if previous is not None else {p: s.hash for p, s in known.items()}
    walked = walk_repository(root, extensions=CODE_EXTENSIONS, max_file_bytes=max_file_bytes)
    skipped = list(walked.skipped)
    missing: Counter[str] = Counter()
    contents: dict[str, tuple[WalkedFile, bytes, str]] = {}
    current: dict[str, FileStamp] = {}
    total = len(walked.files)
    done = 0
    for item in walked.files:
        stamp = known.get(item.path)
        if (
            stamp is not None
            and stamp.same_stat(item.size, item.mtime_ns)
            and _parser_of(item.path)
        ):
            current[item.path] = FileStamp(
                item.path, stamp.hash, item.size, item.mtime_ns, item.identity
            )
        else:
            entry = _read(walked.root, item, missing, skipped)
            if entry is not None:
                digest = file_hash(entry[1])
                current[item.path] = FileStamp(
                    item.path, digest, item.size, item.mtime_ns, item.identity
                )
                if before.get(item.path) != digest:
                    contents[item.path] = entry
                    continue
        done += 1
        if progress is not None:
            progress(done, total, item.path)
    changes = diff_hashes(before, {path: stamp.hash for path, stamp in current.items()})
    parsed: list[FileIndex] = []
    for path in changes.to_parse:
        item, data, language = contents[path]
        parsed.append(extract_file(path, data, language, mtime_ns=item.mtime_ns))
        done += 1
        if progress is not None:
            progress(done, total, path)
    report = CodeIndexReport(
        root=str(walked.root),
        scope=scope or walked.root.name,
        files_seen=total,
        files_parsed=len(parsed),
        files_unchanged=len(changes.unchanged),
        files_deleted=len(changes.deleted),
        symbols=sum(len(file.symbols) for file in parsed),
        edges=sum(len(file.edges) for file in parsed),
        skipped=dict(Counter(item.reason for item in skipped)),
        skipped_files=tuple(skipped),
        failed=tuple(FileFailure(file.path, file.error) for file in parsed if file.error),
        languages=dict(Counter(file.language for file in parsed)),
        languages_skipped=dict(missing),
        commit=head_commit(walked.repository) if walked.repository is not None else None,
    )
    sources = {path: contents[path][1] for path in changes.to_parse}
    return ParsedRepository(tuple(parsed), changes, report, current, sources)


def _parser_of(path: str) -> bool:
    """Whether the file's language has a grammar installed (else it is skipped, not kept)."""
    spec = language_for_path(path)
    return spec is not None and parser_for(spec.name) is not None


def _read(
    root: Path, item: WalkedFile, missing: Counter[str], skipped: list[SkippedFile]
) -> tuple[WalkedFile, bytes, str] | None:
    spec = language_for_path(item.path)
    if spec is None:
        return None
    if parser_for(spec.name) is None:
        missing[spec.name] += 1
        skipped.append(SkippedFile(item.path, "grammar_missing", spec.name))
        return None
    try:
        data = (root / item.path).read_bytes()
    except OSError as exc:
        skipped.append(SkippedFile(item.path, "unreadable", str(exc)))
        return None
    reason = classify_content(data)
    if reason is not None:
        skipped.append(SkippedFile(item.path, reason))
        return None
    return item, data, spec.name


__all__ = ["ParsedRepository", "Progress", "parse_repository"]
