"""Layering rules (STYLE §2), checked on the import graph with ast."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "recallbox"
DRIVERS = {"apsw", "sqlite3", "sqlite_vec", "psycopg", "pgvector"}


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_drivers_only_inside_their_backend() -> None:
    offenders = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC).as_posix()
        used = {name.split(".")[0] for name in imports_of(path)} & DRIVERS
        allowed = set()
        if rel.startswith("storage/sqlite/"):
            allowed = {"apsw", "sqlite_vec"}
        elif rel.startswith("storage/postgres/"):
            allowed = {"psycopg", "pgvector"}
        if used - allowed:
            offenders.append((rel, sorted(used - allowed)))
    assert offenders == []


def test_domain_and_ranking_code_never_touch_storage_backends() -> None:
    for folder in ("domains", "ranking", "text"):
        for path in (SRC / folder).rglob("*.py"):
            for name in imports_of(path):
                assert not name.startswith("recallbox.storage.sqlite"), (path, name)
                assert not name.startswith("recallbox.cli"), (path, name)


def test_entrypoints_do_not_import_backends() -> None:
    for name in ("cli.py", "mcp_server.py"):
        path = SRC / name
        if path.exists():
            assert not any(i.startswith("recallbox.storage.sqlite") for i in imports_of(path))
