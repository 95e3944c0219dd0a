"""Query plans the speed of a search depends on (#14, #21): checked with EXPLAIN QUERY PLAN on a
real file, so a schema or SQL change that loses them fails here rather than in a benchmark."""

from __future__ import annotations

from pathlib import Path

import recallbox
from recallbox.storage.sqlite.corpora import MESSAGES
from recallbox.storage.sqlite.episodes import _HEADS_SQL, _SPAN_ROWS_SQL
from recallbox.storage.sqlite.store import SQLiteStore
from recallbox.storage.sqlite.visibility import THREAD_ALLOWED_SQL


def test_episode_breaks_read_the_generation_index_alone(db_path: Path) -> None:
    # created_at lies after content in a message row: reading it from the table walks a long
    # message's overflow pages, so the breaks must come from the covering index (migration 13)
    with recallbox.open(db_path) as box:
        box.append("t", "user", "hello")
        store: SQLiteStore = box.store  # type: ignore[assignment]
        with store.pool.reading() as conn:
            plan = conn.execute(
                "EXPLAIN QUERY PLAN " + _SPAN_ROWS_SQL.format(gate=THREAD_ALLOWED_SQL),
                ('[["g", 1, 2]]',),
            ).fetchall()
    steps = [str(row[3]) for row in plan]
    assert any("COVERING INDEX messages_by_generation" in s for s in steps), steps


def test_candidate_heads_take_time_and_hash_from_the_index(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.append("t", "user", "hello")
        store: SQLiteStore = box.store  # type: ignore[assignment]
        with store.pool.reading() as conn:
            plan = conn.execute(
                "EXPLAIN QUERY PLAN " + _HEADS_SQL.format(narrow=""), (40, '["m_x"]')
            ).fetchall()
    steps = [str(row[3]) for row in plan]
    assert any(s.startswith("SEARCH x USING COVERING INDEX messages_by_generation") for s in steps)


def test_a_message_vector_is_fresh_by_the_hash_in_the_index(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.append("t", "user", "hello")
        store: SQLiteStore = box.store  # type: ignore[assignment]
        with store.pool.reading() as conn:
            plan = conn.execute(
                f"EXPLAIN QUERY PLAN SELECT m.id FROM messages m WHERE {MESSAGES.fresh_vector}",
                (1,),
            ).fetchall()
    steps = [str(row[3]) for row in plan]
    assert any(s.startswith("SEARCH x USING COVERING INDEX messages_by_generation") for s in steps)
