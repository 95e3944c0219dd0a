"""The contract suite covers every protocol member and stays backend-agnostic."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from recallbox.storage.base import PROTOCOLS, protocol_members

HERE = Path(__file__).parent
#: What would tie the suite to one backend: a driver, SQL, SQLite or FTS5 syntax, files.
FORBIDDEN = re.compile(
    r"apsw|sqlite|psycopg|\bSELECT\b|\bINSERT\b|\bPRAGMA\b|\bMATCH\b|\bbm25\(|tmp_path|\.db\b",
    re.IGNORECASE,
)


def _sources() -> dict[str, str]:
    return {
        path.name: path.read_text(encoding="utf-8")
        for path in sorted(HERE.glob("*.py"))
        if path.name != Path(__file__).name
    }


def test_every_protocol_member_is_exercised() -> None:
    used: set[str] = set()
    for text in _sources().values():
        used.update(n.attr for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Attribute))
    wanted = {name for protocol in PROTOCOLS for name in protocol_members(protocol)}
    assert wanted - used == set()


def test_the_suite_knows_no_backend() -> None:
    offenders = {
        name: sorted({m.group(0) for m in FORBIDDEN.finditer(text)})
        for name, text in _sources().items()
        if FORBIDDEN.search(text)
    }
    assert offenders == {}
