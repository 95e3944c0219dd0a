"""The repository walker: gitignore (nested, info/exclude), symlinks, binary, minified, sizes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recallbox.code.walk import (
    MINIFIED_MAX_LINE_BYTES,
    classify_content,
    walk_repository,
)
from recallbox.errors import InvalidArgument


def write(root: Path, rel: str, text: str | bytes = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def fake_git(root: Path, exclude: str = "") -> None:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (root / ".git" / "info" / "exclude").write_text(exclude, encoding="utf-8")


def paths(result_files: tuple[object, ...]) -> list[str]:
    return [item.path for item in result_files]  # type: ignore[attr-defined]


def test_nested_gitignore_negation_and_info_exclude(tmp_path: Path) -> None:
    fake_git(tmp_path, exclude="secret.py\n")
    write(tmp_path, ".gitignore", "*.log.py\ngenerated_*/\n")
    write(tmp_path, "app.py")
    write(tmp_path, "secret.py")
    write(tmp_path, "debug.log.py")
    write(tmp_path, "generated_api/client.py")
    write(tmp_path, "pkg/.gitignore", "local.py\n!keep.log.py\n")
    write(tmp_path, "pkg/local.py")
    write(tmp_path, "pkg/keep.log.py")
    write(tmp_path, "pkg/mod.py")
    write(tmp_path, "other/local.py")  # the nested rule applies below pkg/ only
    result = walk_repository(tmp_path)
    assert paths(result.files) == [
        ".gitignore", "app.py", "other/local.py", "pkg/.gitignore", "pkg/keep.log.py", "pkg/mod.py",
    ]
    assert sorted((s.path, s.reason) for s in result.skipped) == [
        ("debug.log.py", "gitignored"),
        ("generated_api/", "gitignored"),
        ("pkg/local.py", "gitignored"),
        ("secret.py", "gitignored"),
    ]
    assert result.skipped_counts() == {"gitignored": 4}


def test_ignored_directory_is_not_entered(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "out_dir/\n!out_dir/keep.py\n")
    write(tmp_path, "out_dir/keep.py")
    result = walk_repository(tmp_path, extensions={".py"})
    assert paths(result.files) == []
    assert [(s.path, s.reason) for s in result.skipped] == [("out_dir/", "gitignored")]


def test_enclosing_repository_rules_apply_to_a_subdirectory(tmp_path: Path) -> None:
    fake_git(tmp_path)
    write(tmp_path, ".gitignore", "src/skip.py\n")
    write(tmp_path, "src/keep.py")
    write(tmp_path, "src/skip.py")
    result = walk_repository(tmp_path / "src", extensions={".py"})
    assert paths(result.files) == ["keep.py"]
    assert [(s.path, s.reason) for s in result.skipped] == [("skip.py", "gitignored")]
    assert result.repository is not None


def test_root_ignored_by_its_repository_is_walked_as_a_plain_folder(tmp_path: Path) -> None:
    fake_git(tmp_path)
    write(tmp_path, ".gitignore", ".env/\n")
    write(tmp_path, ".env/lib/pkg/mod.py")
    result = walk_repository(tmp_path / ".env" / "lib" / "pkg", extensions={".py"})
    assert paths(result.files) == ["mod.py"]
    assert result.repository is None


def test_vendored_and_build_directories_and_vcs(tmp_path: Path) -> None:
    write(tmp_path, "node_modules/react/index.js")
    write(tmp_path, "vendor/lib.go")
    write(tmp_path, "build/out.py")
    write(tmp_path, "__pycache__/m.py")
    write(tmp_path, ".git/hooks/pre-commit.py")
    write(tmp_path, "src/main.py")
    result = walk_repository(tmp_path, extensions={".py", ".js", ".go"})
    assert paths(result.files) == ["src/main.py"]
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("__pycache__/", "generated"),
        ("build/", "generated"),
        ("node_modules/", "vendored"),
        ("vendor/", "vendored"),
    ]


def test_symlinks_are_never_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "leak.py")
    root = tmp_path / "repo"
    write(root, "real.py")
    os.symlink(outside, root / "escape_dir")
    os.symlink(outside / "leak.py", root / "escape.py")
    os.symlink(root / "real.py", root / "alias.py")
    os.symlink(root, root / "loop")
    result = walk_repository(root, extensions={".py"})
    assert paths(result.files) == ["real.py"]
    assert sorted((s.path, s.reason) for s in result.skipped) == [
        ("alias.py", "symlink"),
        ("escape.py", "symlink_outside"),
        ("escape_dir", "symlink_outside"),
        ("loop", "symlink"),
    ]


def test_size_minified_and_generated_names(tmp_path: Path) -> None:
    write(tmp_path, "big.py", "x = 1\n" * 100)
    write(tmp_path, "small.py")
    write(tmp_path, "app.min.js", "var a=1;")
    write(tmp_path, "api_pb2.py")
    write(tmp_path, "types.generated.ts", "export type A = 1;\n")
    result = walk_repository(tmp_path, extensions={".py", ".js", ".ts"}, max_file_bytes=100)
    assert paths(result.files) == ["small.py"]
    assert sorted((s.path, s.reason) for s in result.skipped) == [
        ("api_pb2.py", "generated"),
        ("app.min.js", "minified"),
        ("big.py", "too_large"),
        ("types.generated.ts", "generated"),
    ]
    assert result.skipped_counts() == {"too_large": 1, "minified": 1, "generated": 2}


def test_classify_content() -> None:
    assert classify_content(b"def f():\n    return 1\n") is None
    assert classify_content(b"\x7fELF\x00\x00binary") == "binary"
    assert classify_content(b"// Code generated by protoc-gen-go. DO NOT EDIT.\npackage x\n") == "generated"
    assert classify_content(b"# @generated by tool\nx = 1\n") == "generated"
    assert classify_content(b"var a=" + b"1+" * 400 + b"1;") == "minified"
    long_line = b"x = '" + b"a" * (MINIFIED_MAX_LINE_BYTES + 1) + b"'\n"
    assert classify_content(long_line + b"y = 1\n" * 200) == "minified"


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        walk_repository(tmp_path / "missing")
