"""The grammar registry: which file extensions are which language, and their tree-sitter parsers.

Grammars come from the per-language wheels of the ``code`` extra (``tree-sitter-python``,
``-javascript``, ``-typescript`` with ``language_typescript()`` and ``language_tsx()``, ``-go``,
``-rust``), each of which ships its compiled grammar; ``tree-sitter-language-pack`` is never
used because it downloads grammars at run time. Everything loads lazily, on the first parser
asked for: importing this module imports no tree-sitter. A missing ``tree-sitter`` raises
:class:`~recallbox.errors.DependencyMissing` naming the extra; a missing grammar wheel only
makes :func:`parser_for` return ``None``, and the indexer skips and counts that language's files.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from recallbox.errors import DependencyMissing

if TYPE_CHECKING:
    from tree_sitter import Parser

CODE_EXTRA_HINT = "pip install 'recallbox[code]'"


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """One language: its name, file extensions and where its grammar comes from."""

    name: str
    extensions: tuple[str, ...]
    grammar_module: str
    grammar_function: str


LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec("python", (".py", ".pyi"), "tree_sitter_python", "language"),
    LanguageSpec(
        "javascript", (".js", ".jsx", ".mjs", ".cjs"), "tree_sitter_javascript", "language"
    ),
    LanguageSpec(
        "typescript", (".ts", ".mts", ".cts"), "tree_sitter_typescript", "language_typescript"
    ),
    LanguageSpec("tsx", (".tsx",), "tree_sitter_typescript", "language_tsx"),
    LanguageSpec("go", (".go",), "tree_sitter_go", "language"),
    LanguageSpec("rust", (".rs",), "tree_sitter_rust", "language"),
)
LANGUAGE_NAMES: tuple[str, ...] = tuple(spec.name for spec in LANGUAGES)
_BY_EXTENSION = {extension: spec for spec in LANGUAGES for extension in spec.extensions}
_BY_NAME = {spec.name: spec for spec in LANGUAGES}
#: Every extension some grammar handles (the walker's candidate filter).
CODE_EXTENSIONS: frozenset[str] = frozenset(_BY_EXTENSION)


def language_for_path(path: str) -> LanguageSpec | None:
    """The language of a file by its extension (case-insensitive), or ``None``."""
    return _BY_EXTENSION.get(os.path.splitext(path)[1].lower())


def require_tree_sitter() -> None:
    """Check that the ``tree-sitter`` bindings are importable.

    Raises:
        DependencyMissing: they are not (the message names the ``code`` extra).
    """
    _tree_sitter()


def parser_for(language: str) -> Parser | None:
    """A tree-sitter parser for ``language``, or ``None`` when its grammar is not installed.

    Parsers are cached per language (one process, one thread at a time: tree-sitter parsers
    are not shared across threads).

    Raises:
        DependencyMissing: ``tree-sitter`` itself is not installed.
        KeyError: ``language`` is not one of :data:`LANGUAGE_NAMES`.
    """
    spec = _BY_NAME[language]
    tree_sitter = _tree_sitter()
    grammar = _grammar(spec.grammar_module, spec.grammar_function)
    if grammar is None:
        return None
    return _parser(language, tree_sitter, grammar)


def installed_languages() -> tuple[str, ...]:
    """The languages whose grammar wheel is importable."""
    return tuple(
        spec.name for spec in LANGUAGES if _grammar(spec.grammar_module, spec.grammar_function)
    )


@cache
def _tree_sitter() -> object:
    try:
        return importlib.import_module("tree_sitter")
    except ImportError as exc:
        raise DependencyMissing(f"code indexing needs tree-sitter: {CODE_EXTRA_HINT}") from exc


@cache
def _grammar(module: str, function: str) -> object | None:
    try:
        loader = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError):
        return None
    grammar: object = loader()
    return grammar


_PARSERS: dict[str, Parser] = {}


def _parser(language: str, tree_sitter: object, grammar: object) -> Parser:
    parser = _PARSERS.get(language)
    if parser is None:
        ts_language = tree_sitter.Language(grammar)  # type: ignore[attr-defined]
        parser = tree_sitter.Parser(ts_language)  # type: ignore[attr-defined]
        _PARSERS[language] = parser
    return parser


__all__ = [
    "CODE_EXTENSIONS",
    "CODE_EXTRA_HINT",
    "LANGUAGES",
    "LANGUAGE_NAMES",
    "LanguageSpec",
    "installed_languages",
    "language_for_path",
    "parser_for",
    "require_tree_sitter",
]
