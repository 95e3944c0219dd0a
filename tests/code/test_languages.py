"""The grammar registry: lazy loading, a missing extra, a missing grammar."""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.code.conftest import FIXTURES

from recallbox.code import languages, parse_repository
from recallbox.code.extract import extract_file
from recallbox.errors import DependencyMissing


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    def clear() -> None:
        languages._tree_sitter.cache_clear()
        languages._grammar.cache_clear()
        languages._PARSERS.clear()

    clear()
    yield
    clear()


def test_extensions_map_to_languages() -> None:
    assert {
        name: (spec.name if (spec := languages.language_for_path(name)) else None)
        for name in ("a.py", "b.PYI", "c.js", "d.mjs", "e.jsx", "f.ts", "g.tsx", "h.go", "i.rs", "j.md")
    } == {
        "a.py": "python", "b.PYI": "python", "c.js": "javascript", "d.mjs": "javascript",
        "e.jsx": "javascript", "f.ts": "typescript", "g.tsx": "tsx", "h.go": "go", "i.rs": "rust",
        "j.md": None,
    }


def test_every_grammar_of_the_code_extra_is_installed() -> None:
    assert languages.installed_languages() == languages.LANGUAGE_NAMES


def test_missing_tree_sitter_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, fresh_registry: None, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter", None)  # import now raises ImportError
    with pytest.raises(DependencyMissing, match=r"pip install 'recallbox\[code\]'"):
        languages.require_tree_sitter()
    with pytest.raises(DependencyMissing, match=r"recallbox\[code\]"):
        parse_repository(tmp_path)


def test_a_language_without_its_grammar_is_skipped_and_counted(
    monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    monkeypatch.setitem(sys.modules, "tree_sitter_go", None)
    assert languages.parser_for("go") is None
    assert "go" not in languages.installed_languages()
    report = parse_repository(FIXTURES / "go_repo").report
    assert report.files_seen == 3
    assert report.files_parsed == 0
    assert report.languages_skipped == {"go": 3}
    assert report.skipped == {"grammar_missing": 3}
    with pytest.raises(DependencyMissing, match="no tree-sitter grammar for go"):
        extract_file("a.go", b"package a\n", "go")


def test_the_code_extra_is_grammar_wheels_never_the_downloading_language_pack() -> None:
    root = Path(__file__).resolve().parents[2]
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["code"]
    names = {re.split(r"[<>=!~\[; ]", dependency, maxsplit=1)[0] for dependency in extra}
    wheels = {"tree-sitter-python", "tree-sitter-javascript", "tree-sitter-typescript", "tree-sitter-go", "tree-sitter-rust"}
    assert wheels <= names and not any("language-pack" in name for name in names)
    importing = [
        path.name
        for path in (root / "src" / "recallbox").rglob("*.py")
        if re.search(r"^\s*(import|from)\s+tree_sitter_language_pack", path.read_text(), re.MULTILINE)
    ]
    assert importing == []
    # The registry asks each wheel for its grammar (``language_typescript``/``language_tsx`` too).
    assert set(languages.LANGUAGE_NAMES) >= {"python", "javascript", "typescript", "tsx", "go", "rust"}
