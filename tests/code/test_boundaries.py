"""The parsing layer stays pure: no storage, no SQL drivers, no tree-sitter at import time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CODE = Path(__file__).resolve().parents[2] / "src" / "recallbox" / "code"
FORBIDDEN = ("recallbox.storage", "recallbox.box", "recallbox.cli", "apsw", "sqlite3", "sqlite_vec", "psycopg")


def test_code_package_imports_no_storage_or_driver() -> None:
    offenders = []
    for path in CODE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            )
            offenders += [(path.name, n) for n in names if n.startswith(FORBIDDEN)]
    assert offenders == []


def test_importing_the_package_loads_no_tree_sitter_or_pathspec() -> None:
    probe = "import sys, recallbox.code; print(sorted(m for m in sys.modules if m.startswith(('tree_sitter', 'pathspec'))))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
