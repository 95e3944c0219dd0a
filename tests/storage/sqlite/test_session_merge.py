"""Merging a session thread into another (#17, migration 11) on today's storage (#14): the moved
messages are in the literal index under their new keys (thread, seq), every generation of
the merged thread is still the seq range from its ``first_seq`` to the next one's, and the
vectors of the moved messages and dropped chunks go with their bookkeeping (``doctor`` stays
healthy; the next embedding pass embeds them again, under the new thread)."""

from __future__ import annotations

import bisect
import json
from pathlib import Path

import recallbox
from recallbox.storage.base import LiteralQuery, SearchFilter
from recallbox.storage.sqlite.session_merge import merge_thread
from recallbox.storage.sqlite.store import SQLiteStore

TARGET_LINES = 3
TURNS = 4
"""Turns of each generated Claude Code transcript (a prompt and an answer each)."""


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


def _transcript(path: Path, session: str, word: str) -> None:
    """A Claude Code transcript of :data:`TURNS` turns in session ``session``."""
    lines, parent = [], None
    for t in range(TURNS):
        for role, uid in (("user", f"{word}{t}u"), ("assistant", f"{word}{t}a")):
            text = f"{word} turn {t} says {role} things about the deploy"
            content = text if role == "user" else [{"type": "text", "text": text}]
            record = {"parentUuid": parent, "isSidechain": False, "sessionId": session,
                      "type": role, "uuid": uid, "timestamp": f"2026-01-01T00:00:{t:02d}Z",
                      "message": {"role": role, "content": content}}  # fmt: skip
            lines.append(json.dumps(record))
            parent = uid
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_merge_of_embedded_threads_leaves_no_orphan_vector(tmp_path: Path) -> None:
    for session, word in (("source", "walrus"), ("target", "narwhal")):
        _transcript(tmp_path / f"{session}.jsonl", session, word)
    with recallbox.open(tmp_path / "v.db", embedder="hash") as box:
        store = box.store
        assert isinstance(store, SQLiteStore)
        box.import_transcripts(
            "claude-code", [tmp_path / "source.jsonl", tmp_path / "target.jsonl"]
        )
        assert box.embed_all() > 0 and box.doctor().healthy
        with store.pool.reading() as conn:
            ids = {str(c): int(i) for i, c in conn.execute("SELECT id, channel FROM threads")}
            chunks = conn.execute(
                "SELECT count(*) FROM transcript_chunks WHERE thread_id = ?",
                (ids["claude-code:source"],),
            ).fetchone()[0]
        assert chunks > 0  # the source's chunks had vectors too
        with store.pool.transaction() as conn:
            merge_thread(
                conn,
                ids["claude-code:source"],
                "claude-code:source",
                ids["claude-code:target"],
                "claude-code:target",
            )
        report = box.doctor()
        assert report.healthy, [i.detail for i in report.indexes if not i.healthy]
        assert box.embed_all() == 2 * TURNS  # the moved messages, embedded again
        assert box.doctor().healthy
        found = box.search("walrus", channel="claude-code:target", allow_embed=True)
        assert found and all(h.channel == "claude-code:target" for h in found)
