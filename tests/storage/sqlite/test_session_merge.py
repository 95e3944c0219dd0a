"""Merging a session thread into another (#17, migration 11) on today's storage (#14): the moved
messages are in the literal index under their new keys (thread, seq), and every generation of
the merged thread is still the seq range from its ``first_seq`` to the next one's."""

from __future__ import annotations

import bisect
from pathlib import Path

import recallbox
from recallbox.storage.base import LiteralQuery, SearchFilter
from recallbox.storage.sqlite.session_merge import merge_thread
from recallbox.storage.sqlite.store import SQLiteStore

TARGET_LINES = 3


def test_a_merged_thread_is_indexed_under_its_new_keys_and_keeps_generation_ranges(
    tmp_path: Path,
) -> None:
    with recallbox.open(tmp_path / "m.db") as box:
        store = box.store
        assert isinstance(store, SQLiteStore)
        for i in range(TARGET_LINES):
            box.append("target", "user", f"target line {i}")
        walrus = box.append("source", "user", "first generation walrus").id
        box.compact("source", "summary of the source")
        narwhal = box.append("source", "user", "second generation narwhal").id
        store.indexer.drain()  # everything indexed under its old key
        with store.pool.transaction() as conn:
            ids = {str(c): int(i) for i, c in conn.execute("SELECT id, channel FROM threads")}
            merge_thread(conn, ids["source"], "source", ids["target"], "target")
        store.indexer.drain()
        assert box.doctor().healthy
        for term, message_id in (("walrus", walrus), ("narwhal", narwhal)):
            found = store.literal_candidates(
                LiteralQuery(term, False), where=SearchFilter(channel="target"), limit=10
            )
            assert [m.id for m in found] == [message_id]
        with store.pool.reading() as conn:
            generations = conn.execute(
                "SELECT first_seq, number FROM generations WHERE thread_id = ? ORDER BY number",
                (ids["target"],),
            ).fetchall()
            messages = conn.execute(
                "SELECT m.seq, g.number FROM messages m JOIN generations g "
                "ON g.id = m.generation_id WHERE m.thread_id = ?",
                (ids["target"],),
            ).fetchall()
    firsts = [int(first) for first, _ in generations]
    assert [int(n) for _, n in generations] == [1, 2] and firsts == sorted(firsts)
    for seq, number in messages:
        assert generations[bisect.bisect_right(firsts, int(seq)) - 1][1] == number, seq
