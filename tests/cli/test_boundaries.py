"""The CLI package is a thin edge (STYLE §2): it imports the API, types, errors and config, never
a backend or a domain, and nothing heavy at module level (so `--version` stays fast)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

CLI = Path(__file__).resolve().parents[2] / "src" / "recallbox" / "cli"
FORBIDDEN = (
    "apsw",
    "sqlite_vec",
    "psycopg",
    "recallbox.storage",
    "recallbox.domains",
    "recallbox.importers",
    "recallbox.search",
    "recallbox.embed_pass",
    "recallbox.ranking",
    "recallbox.text",
)
LIGHT_AT_IMPORT = (
    "click",
    "recallbox.cli",
    "recallbox.errors",
    "recallbox.types",
    "recallbox.config",
)


def imports(tree: ast.AST) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def module_level_imports(tree: ast.Module) -> list[str]:
    """Imports that run when the module is imported (not in functions, not TYPE_CHECKING)."""
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.extend(imports(node))
    return names


def test_the_cli_imports_no_backend_and_no_domain() -> None:
    offenders = [
        (path.name, name)
        for path in CLI.rglob("*.py")
        for name in imports(ast.parse(path.read_text(encoding="utf-8")))
        if name.startswith(FORBIDDEN)
    ]
    assert offenders == []


def test_module_level_imports_are_light() -> None:
    stdlib = sys.stdlib_module_names | {"__future__"}
    offenders = []
    for path in CLI.rglob("*.py"):
        for name in module_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            top = name.split(".")[0]
            if top in stdlib or name == "recallbox" or name.startswith(LIGHT_AT_IMPORT):
                continue
            offenders.append((path.relative_to(CLI).as_posix(), name))
    assert offenders == []
