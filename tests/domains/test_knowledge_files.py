"""The file side of sync_directory: which files, reading with skip reasons (#10 item 1)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recallbox.domains.knowledge_files import (
    REASON_BINARY,
    REASON_NOT_REGULAR,
    REASON_NOT_UTF8,
    REASON_TOO_LARGE,
    REASON_UNREADABLE,
    Document,
    KnowledgeFile,
    decode_document,
    iter_documents,
    read_knowledge_file,
    split_document,
    walk_knowledge_files,
)
from recallbox.domains.privacy import file_identity
from recallbox.types import SkippedFile


def write(root: Path, rel: str, data: bytes | str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_walk_picks_knowledge_files_in_source_order(tmp_path: Path) -> None:
    for rel in [
        "b.md",
        "a/z.markdown",
        "a/notes.TXT",
        "C.Md",
        "image.png",
        "code.py",
        ".hidden.md",
        ".git/HEAD.md",
        "sub/.venv/x.md",
        "sub/deep/y.md",
    ]:
        write(tmp_path, rel, "x")
    (tmp_path / "loop").symlink_to(tmp_path, target_is_directory=True)
    walk = walk_knowledge_files(tmp_path)
    assert [f.source for f in walk.files] == [
        "C.Md",
        "a/notes.TXT",
        "a/z.markdown",
        "b.md",
        "sub/deep/y.md",
    ]
    assert walk.skipped == ()
    assert all(f.path == tmp_path / f.source for f in walk.files)


def test_reading_skips_with_reasons_and_never_raises(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", "\ufeff## A\r\nline\rnext\x00"[:-1] + "\x07")
    write(tmp_path, "binary.md", b"## A\x00\x01")
    write(tmp_path, "latin1.md", "caf\xe9".encode("latin-1"))
    write(tmp_path, "big.md", "x" * 101)
    (tmp_path / "broken.md").symlink_to(tmp_path / "missing.md")
    got = {
        d.source: d
        for d in (
            read_knowledge_file(f, max_bytes=100) for f in walk_knowledge_files(tmp_path).files
        )
    }
    assert got["ok.md"] == Document("ok.md", "## A\nline\nnext ", file_identity(tmp_path / "ok.md"))
    assert got["binary.md"] == SkippedFile("binary.md", REASON_BINARY)
    assert got["latin1.md"] == SkippedFile("latin1.md", REASON_NOT_UTF8)
    assert got["big.md"] == SkippedFile("big.md", f"{REASON_TOO_LARGE} (101 > 100 bytes)")
    broken = got["broken.md"]
    assert isinstance(broken, SkippedFile) and broken.reason.startswith(REASON_UNREADABLE)


def test_unreadable_file_and_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Permissions cannot be relied on (the suite may run as root): the OS refusal is simulated.
    secret = write(tmp_path, "secret.md", "## A\n")
    write(tmp_path, "locked/inner.md", "x")
    real_open, real_scandir = Path.open, os.scandir

    def deny_open(self: Path, *args: object, **kwargs: object) -> object:
        if self == secret:
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)  # type: ignore[call-overload]

    def deny_scandir(path: object) -> object:
        if Path(str(path)) == tmp_path / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "open", deny_open)
    monkeypatch.setattr(os, "scandir", deny_scandir)
    results = list(iter_documents(tmp_path))
    assert [r for r in results if isinstance(r, SkippedFile)] == [
        SkippedFile("locked/", f"{REASON_UNREADABLE}: Permission denied"),
        SkippedFile("secret.md", f"{REASON_UNREADABLE}: Permission denied"),
    ]


def test_special_files_are_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # opening a FIFO would block the sync
    (result,) = list(iter_documents(tmp_path))
    assert result == SkippedFile("pipe.md", REASON_NOT_REGULAR)


def test_decode_and_split(tmp_path: Path) -> None:
    assert decode_document(b"a\r\n\r\nb\rc") == "a\n\nb\nc"
    assert decode_document(b"\xff") is None and decode_document(b"a\x00") is None
    assert [s.heading for s in split_document("x.md", "## A\n## B\n")] == ["A", "B"]
    assert [s.heading for s in split_document("x.TXT", "## A\n## B\n")] == [None]
    file = KnowledgeFile("x.md", tmp_path / "x.md")
    assert isinstance(read_knowledge_file(file), SkippedFile)  # vanished between walk and read
