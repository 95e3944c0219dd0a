"""A dump of every table of a recallbox SQLite file, to prove a verb wrote nothing (but the hit-log).

Read through a read-only apsw connection of its own, so the Box under test keeps its
connections. Never the standard library's ``sqlite3``: a second SQLite library in the same
process does not see the first one's POSIX locks, so closing its connection can truncate the
WAL index (``-shm``) under the Box's live mapping — a SIGBUS in the Box's background indexer. Virtual tables (FTS5, sqlite-vec) are skipped; their shadow tables are
ordinary tables and are dumped.
"""

from __future__ import annotations

from pathlib import Path

import apsw

#: The hit-log's tables: the one thing a read-only verb may write.
HIT_LOG_TABLES = frozenset({"hit_log", "hit_log_state", "hit_log_watermarks"})


def dump_tables(path: Path, *, skip: frozenset[str] = HIT_LOG_TABLES) -> dict[str, list[tuple]]:
    """``{table: every row, sorted}`` of every ordinary table but ``skip``."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
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
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(
            "SELECT domain, layer, target_id, drilled, verb, query FROM hit_log ORDER BY id"
        ).fetchall()
    finally:
        conn.close()
