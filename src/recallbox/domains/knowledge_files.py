"""The file-system side of ``sync_directory`` (DESIGN §2, §4): which files, and their text.

* **Which files.** Every regular file under the sync root whose name ends in ``.md``,
  ``.markdown`` or ``.txt`` (any case), in sorted order. Names starting with ``.`` (``.git``,
  ``.venv``, ``.notes.md``) are skipped, files and directories alike; symbolic links to
  directories are not followed (no cycles), links to files are read.
* **Source names** are the path relative to the sync root, ``/``-separated (``docs/deploy.md``).
* **Reading** never raises: a file that cannot be opened (permissions, a broken link, a race
  with a delete), anything but a regular file (a FIFO would block), a binary file (a NUL byte), a file that is not UTF-8, or a file over
  :data:`KNOWLEDGE_MAX_FILE_BYTES` is returned as a :class:`~recallbox.types.SkippedFile` with
  its reason, and the sync counts it. A UTF-8 byte-order mark is dropped; ``\\r\\n`` and a lone
  ``\\r`` become ``\\n`` (so line numbers are the ones an editor shows); then the text is
  normalised like every stored text (``recallbox.text.normalize``).
* **Splitting.** Markdown files split by heading (``recallbox.text.markdown``); ``.txt`` files
  are one section each.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from recallbox.domains.privacy import file_identity
from recallbox.text.markdown import MarkdownSection, split_markdown, split_plain_text
from recallbox.text.normalize import normalize_text
from recallbox.types import SkippedFile

#: File name endings that are synced (compared case-insensitively).
MARKDOWN_SUFFIXES: tuple[str, ...] = (".md", ".markdown")
PLAIN_TEXT_SUFFIXES: tuple[str, ...] = (".txt",)
KNOWLEDGE_SUFFIXES: tuple[str, ...] = MARKDOWN_SUFFIXES + PLAIN_TEXT_SUFFIXES
#: A larger file is skipped ("over the size limit").
KNOWLEDGE_MAX_FILE_BYTES = 10 * 1024 * 1024

REASON_UNREADABLE = "unreadable"
REASON_BINARY = "binary (holds a NUL byte)"
REASON_NOT_UTF8 = "not UTF-8"
REASON_TOO_LARGE = "over the size limit"
REASON_NOT_REGULAR = "not a regular file"


@dataclass(frozen=True, slots=True)
class KnowledgeFile:
    """A candidate file: its source name (relative, ``/``-separated) and its path."""

    source: str
    path: Path


@dataclass(frozen=True, slots=True)
class Document:
    """A file's decoded text, with its file identity (``"<device>:<inode>"``) for privacy."""

    source: str
    text: str
    identity: str | None = None


@dataclass(frozen=True, slots=True)
class WalkResult:
    """The candidate files under a root, and the directories that could not be listed."""

    files: tuple[KnowledgeFile, ...]
    skipped: tuple[SkippedFile, ...] = ()


def is_knowledge_name(name: str) -> bool:
    """True for a synced file name (``notes.MD``), False for a hidden one."""
    return not name.startswith(".") and name.casefold().endswith(KNOWLEDGE_SUFFIXES)


def is_plain_text(source: str) -> bool:
    """True for a ``.txt`` source: one section, no heading split."""
    return source.casefold().endswith(PLAIN_TEXT_SUFFIXES)


def source_name(root: Path, path: Path) -> str:
    """The source name of ``path`` under ``root``: relative, ``/``-separated."""
    return path.relative_to(root).as_posix()


def walk_knowledge_files(root: str | os.PathLike[str]) -> WalkResult:
    """The synced files under ``root`` in source order (see the module docstring)."""
    base = Path(root)
    files: list[KnowledgeFile] = []
    skipped: list[SkippedFile] = []

    def on_error(error: OSError) -> None:
        where = Path(error.filename) if error.filename else base
        name = source_name(base, where) if where != base else "."
        skipped.append(SkippedFile(name + "/", f"{REASON_UNREADABLE}: {error.strerror}"))

    for current, dirs, names in os.walk(base, onerror=on_error, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        here = Path(current)
        files.extend(
            KnowledgeFile(source_name(base, here / name), here / name)
            for name in sorted(names)
            if is_knowledge_name(name)
        )
    files.sort(key=lambda f: f.source)
    return WalkResult(tuple(files), tuple(skipped))


def decode_document(data: bytes) -> str | None:
    """The normalised text of a file's bytes, or ``None`` when they are not UTF-8 text."""
    if b"\x00" in data:
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    return normalize_text(text.replace("\r\n", "\n").replace("\r", "\n"))


def _skip_reason(data: bytes) -> str:
    return REASON_BINARY if b"\x00" in data else REASON_NOT_UTF8


def read_knowledge_file(
    file: KnowledgeFile, *, max_bytes: int = KNOWLEDGE_MAX_FILE_BYTES
) -> Document | SkippedFile:
    """The file's :class:`Document`, or why it was skipped; never raises."""
    try:
        if not stat.S_ISREG(file.path.stat().st_mode):
            return SkippedFile(file.source, REASON_NOT_REGULAR)  # a FIFO would block open()
        with file.path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                return SkippedFile(file.source, f"{REASON_TOO_LARGE} ({size} > {max_bytes} bytes)")
            data = handle.read(max_bytes + 1)
    except OSError as error:
        return SkippedFile(file.source, f"{REASON_UNREADABLE}: {error.strerror or error}")
    if len(data) > max_bytes:  # it grew while we read it
        return SkippedFile(file.source, f"{REASON_TOO_LARGE} (> {max_bytes} bytes)")
    text = decode_document(data)
    if text is None:
        return SkippedFile(file.source, _skip_reason(data))
    return Document(file.source, text, file_identity(file.path))


def split_document(source: str, text: str) -> list[MarkdownSection]:
    """The sections of a document: by heading, or one section for a ``.txt`` source."""
    return split_plain_text(text) if is_plain_text(source) else split_markdown(text)


def iter_documents(
    root: str | os.PathLike[str], *, max_bytes: int = KNOWLEDGE_MAX_FILE_BYTES
) -> Iterator[Document | SkippedFile]:
    """Every synced file under ``root`` read, in source order: a document or a skip."""
    walk = walk_knowledge_files(root)
    yield from walk.skipped
    for file in walk.files:
        yield read_knowledge_file(file, max_bytes=max_bytes)
