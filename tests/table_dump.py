"""A dump of every table of a recallbox SQLite file, to prove a verb wrote nothing (but the hit-log).

Read through the standard library's ``sqlite3`` (read-only URI), so the Box under test keeps
its own connections. Virtual tables (FTS5, sqlite-vec) are skipped; their shadow tables are
ordinary tables and are dumped.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

#: The hit-log's tables: the one thing a read-only verb may write.
HIT_LOG_TABLES = frozenset({"hit_log", "hit_log_state", "hit_log_watermarks"})


def dump_tables(path: Path, *, skip: frozenset[str] = HIT_LOG_TABLES) -> dict[str, list[tuple]]:
    """``{table: every row, sorted}`` of every ordinary table but ``skip``."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [
            str(name)
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
            if name not in skip and not str(sql or "").upper().startswith("CREATE VIRTUAL")
        ]
        return {
            name: sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall(), key=repr)
            for name in names
        }
    finally:
        conn.close()


def hit_log_rows(path: Path) -> list[tuple]:
    """Every hit-log row: (domain, layer, target_id, drilled, verb, query)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT domain, layer, target_id, drilled, verb, query FROM hit_log ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
