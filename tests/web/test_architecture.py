"""The inspector's boundaries, checked on its source: it reads only the public API, writes no
SQL, and its templates never turn stored text into markup."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

WEB = Path(__file__).resolve().parents[2] / "src" / "recallbox" / "web"
#: What web/ may import from recallbox: the public API and its own package (config: entrypoint).
ALLOWED_RECALLBOX = {"recallbox", "recallbox.types", "recallbox.errors", "recallbox.web"}
ENTRYPOINT_EXTRA = {"serve.py": {"recallbox.config"}}
THIRD_PARTY = {"starlette", "jinja2", "uvicorn", "anyio"}
SQL = re.compile(r"\bSELECT\b.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_web_imports_only_the_public_api() -> None:
    offenders = []
    for path in sorted(WEB.rglob("*.py")):
        allowed = ALLOWED_RECALLBOX | ENTRYPOINT_EXTRA.get(path.name, set())
        for name in _imports(path):
            top = name.split(".")[0]
            if top == "recallbox":
                if not (name in allowed or name.startswith("recallbox.web.")):
                    offenders.append((path.name, name))
            elif top not in sys.stdlib_module_names and top not in THIRD_PARTY:
                offenders.append((path.name, name))
    assert offenders == []


def test_web_has_no_sql_and_no_markup_escape_hatch() -> None:
    for path in sorted(WEB.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert not SQL.search(source), path.name
        assert "Markup(" not in source and "autoescape=False" not in source, path.name


def test_templates_keep_stored_text_as_text_and_fit_the_csp() -> None:
    templates = sorted((WEB / "templates").glob("*.html"))
    assert len(templates) >= 8
    for path in templates:
        text = path.read_text(encoding="utf-8")
        assert "|safe" not in text.replace(" ", ""), path.name
        assert "autoescape" not in text, path.name
        assert "<script" not in text and " style=" not in text, path.name  # CSP: no inline
        assert not re.search(r"\son[a-z]+=", text), path.name
