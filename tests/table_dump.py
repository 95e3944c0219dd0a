"""A dump of every table of a recallbox database, to prove a verb wrote nothing (but the hit-log).

Both backends: a SQLite file (a ``Path``) is read through a read-only apsw connection of its
own, so the Box under test keeps its connections — never the standard library's ``sqlite3``: a
second SQLite library in the same process does not see the first one's POSIX locks, so closing
its connection can truncate the WAL index (``-shm``) under the Box's live mapping (a SIGBUS in
the Box's background indexer). Virtual tables (FTS5, sqlite-vec) are skipped; their shadow
tables are ordinary tables and are dumped. A PostgreSQL database (a ``postgresql://`` URL) is
read through a psycopg connection of its own: every table of its schema, the keyword
statistics and the vector tables included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import apsw
import psycopg

#: The hit-log's tables: the one thing a read-only verb may write.
HIT_LOG_TABLES = frozenset({"hit_log", "hit_log_state", "hit_log_watermarks"})
_HIT_LOG_SQL = "SELECT domain, layer, target_id, drilled, verb, query FROM hit_log ORDER BY id"

Location = Path | str


def _sorted(rows: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in rows), key=repr)


def dump_tables(
    location: Location, *, skip: frozenset[str] = HIT_LOG_TABLES
) -> dict[str, list[tuple[Any, ...]]]:
    """``{table: every row, sorted}`` of every ordinary table but ``skip``."""
    if isinstance(location, str) and "://" in location:
        with psycopg.connect(location, autocommit=True) as pg:
            names = [
                str(r[0])
                for r in pg.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "ORDER BY tablename"
                ).fetchall()
                if str(r[0]) not in skip
            ]
            return {
                name: _sorted(pg.execute(f'SELECT * FROM "{name}"').fetchall()) for name in names
            }
    conn = apsw.Connection(str(location), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [
            str(name)
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
            if name not in skip and not str(sql or "").upper().startswith("CREATE VIRTUAL")
        ]
        return {name: _sorted(conn.execute(f'SELECT * FROM "{name}"').fetchall()) for name in names}
    finally:
        conn.close()


def hit_log_rows(location: Location) -> list[tuple[Any, ...]]:
    """Every hit-log row: (domain, layer, target_id, drilled, verb, query); ``drilled`` as 0/1."""
    if isinstance(location, str) and "://" in location:
        with psycopg.connect(location, autocommit=True) as pg:
            rows = pg.execute(_HIT_LOG_SQL).fetchall()
        return [(d, layer, t, int(drilled), verb, q) for d, layer, t, drilled, verb, q in rows]
    conn = apsw.Connection(str(location), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(r) for r in conn.execute(_HIT_LOG_SQL).fetchall()]
    finally:
        conn.close()
