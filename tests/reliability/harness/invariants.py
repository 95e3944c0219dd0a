"""What must hold in a store after a crash, a fault or a concurrent run.

:func:`check_store` returns a list of problems (empty: healthy):

* the database opens through ``recallbox.open`` and ``doctor`` is healthy (the
  ``('integrity-check', 1)`` of every FTS table, the heal probe, the row counts);
* ``PRAGMA integrity_check`` is ``ok``;
* no half-written write: each thread's ``seq`` runs gap-free to ``next_seq - 1``, its
  generations are numbered 1..n, every generation after the first opens with its compaction
  summary, only the last is open;
* vector/text agreement: each embedding space's bookkeeping rows and its ``vec0`` rows name the
  same rowids, and every rowid is a stored message or chunk;
* every acknowledged message and generation exists, with its marker, in its thread.

The structural checks read the file through apsw directly (read-only): they verify what
``doctor`` does not check yet, and must not depend on the code under test. On a PostgreSQL
store (a ``postgresql://`` URL) they run through psycopg, the same checks but
``integrity_check`` (the server keeps its own pages consistent).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import apsw
import psycopg
import sqlite_vec

import recallbox
from backends import is_postgres
from reliability.harness import corpus

OWNER_TABLES = {"message": "messages", "transcript_chunk": "transcript_chunks"}
RO_BUSY_MS = 10_000
"""The raw checks' busy timeout: a process that is closing (its last checkpoint) can hold the
file for a moment, as for any reader."""
MARKER = re.compile(r"\bw[0-9a-z]+x\d+\b")


def _ro(db: Path) -> apsw.Connection:
    conn = apsw.Connection(
        f"file:{db}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    conn.setbusytimeout(RO_BUSY_MS)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    return conn


def structure_problems(db: Path | str) -> list[str]:
    """The raw structural checks (see the module docstring)."""
    if is_postgres(db):
        return _pg_structure_problems(str(db))
    problems: list[str] = []
    conn = _ro(Path(db))
    try:
        verdict = [r[0] for r in conn.execute("PRAGMA integrity_check")]
        if verdict != ["ok"]:
            problems.append(f"integrity_check: {verdict[:3]}")
        for tid, channel, next_seq, count, lo, hi in conn.execute(
            "SELECT t.id, t.channel, t.next_seq, count(m.id), min(m.seq), max(m.seq) "
            "FROM threads t LEFT JOIN messages m ON m.thread_id = t.id GROUP BY t.id"
        ):
            if count and (lo != 1 or hi != count or next_seq != hi + 1):
                problems.append(
                    f"{channel}: seq {lo}..{hi} over {count} messages, next_seq {next_seq}"
                )
            numbers = [
                r[0]
                for r in conn.execute(
                    "SELECT number FROM generations WHERE thread_id = ? ORDER BY number", (tid,)
                )
            ]
            if numbers != list(range(1, len(numbers) + 1)):
                problems.append(f"{channel}: generations numbered {numbers[:10]}")
            open_ = conn.execute(
                "SELECT count(*) FROM generations WHERE thread_id = ? AND closed_at IS NULL", (tid,)
            ).fetchone()[0]
            if open_ != 1:
                problems.append(f"{channel}: {open_} open generations")
            for number, first_kind in conn.execute(
                "SELECT g.number, (SELECT m.kind FROM messages m WHERE m.generation_id = g.id "
                "ORDER BY m.seq LIMIT 1) FROM generations g WHERE g.thread_id = ? AND g.number > 1",
                (tid,),
            ):
                if first_kind != "compaction_summary":
                    problems.append(f"{channel}: generation {number} opens with {first_kind}")
        for space, owner in conn.execute("SELECT id, owner FROM embedding_spaces"):
            booked = {
                r[0]
                for r in conn.execute(
                    "SELECT target_rowid FROM embeddings WHERE space_id = ?", (space,)
                )
            }
            table = f"vec_space_{space}"
            exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
            if exists is None:
                if booked:
                    problems.append(f"space {space}: {len(booked)} bookkept vectors, no {table}")
                continue
            stored = {r[0] for r in conn.execute(f"SELECT rowid FROM {table}")}
            if booked != stored:
                problems.append(
                    f"space {space}: {len(booked - stored)} bookkept without a vector, "
                    f"{len(stored - booked)} vectors without bookkeeping"
                )
            targets = OWNER_TABLES.get(owner)
            if targets:
                orphans = conn.execute(
                    f"SELECT count(*) FROM embeddings e WHERE e.space_id = ? AND NOT EXISTS "
                    f"(SELECT 1 FROM {targets} x WHERE x.id = e.target_rowid)",
                    (space,),
                ).fetchone()[0]
                if orphans:
                    problems.append(f"space {space}: {orphans} vectors of missing {targets} rows")
    finally:
        conn.close()
    return problems


def _pg_structure_problems(url: str) -> list[str]:
    """:func:`structure_problems` on PostgreSQL (one read-only snapshot)."""
    problems: list[str] = []
    with psycopg.connect(url) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        for channel, next_seq, count, lo, hi, numbers, open_, firsts in conn.execute(
            "SELECT t.channel, t.next_seq, count(m.id), min(m.seq), max(m.seq), "
            "(SELECT array_agg(g.number ORDER BY g.number) FROM generations g "
            " WHERE g.thread_id = t.id), "
            "(SELECT count(*) FROM generations g WHERE g.thread_id = t.id AND g.closed_at IS NULL), "
            "(SELECT array_agg(ARRAY[g.number::text, (SELECT m2.kind FROM messages m2 "
            "  WHERE m2.generation_id = g.id ORDER BY m2.seq LIMIT 1)] ORDER BY g.number) "
            " FROM generations g WHERE g.thread_id = t.id AND g.number > 1) "
            "FROM threads t LEFT JOIN messages m ON m.thread_id = t.id GROUP BY t.id"
        ).fetchall():
            if count and (lo != 1 or hi != count or next_seq != hi + 1):
                problems.append(
                    f"{channel}: seq {lo}..{hi} over {count} messages, next_seq {next_seq}"
                )
            numbers = list(numbers or [])
            if numbers != list(range(1, len(numbers) + 1)):
                problems.append(f"{channel}: generations numbered {numbers[:10]}")
            if open_ != 1:
                problems.append(f"{channel}: {open_} open generations")
            for number, first_kind in firsts or []:
                if first_kind != "compaction_summary":
                    problems.append(f"{channel}: generation {number} opens with {first_kind}")
        spaces = conn.execute("SELECT id, owner FROM embedding_spaces").fetchall()
        for space, owner in spaces:
            booked = {
                r[0]
                for r in conn.execute(
                    "SELECT target_rowid FROM embeddings WHERE space_id = %s", (space,)
                )
            }
            table = f"vec_space_{space}"
            exists = conn.execute("SELECT to_regclass(%s)", (table,)).fetchone()
            if exists is None or exists[0] is None:
                if booked:
                    problems.append(f"space {space}: {len(booked)} bookkept vectors, no {table}")
                continue
            stored = {r[0] for r in conn.execute(f"SELECT target_id FROM {table}")}
            if booked != stored:
                problems.append(
                    f"space {space}: {len(booked - stored)} bookkept without a vector, "
                    f"{len(stored - booked)} vectors without bookkeeping"
                )
            targets = OWNER_TABLES.get(owner)
            if targets:
                row = conn.execute(
                    f"SELECT count(*) FROM embeddings e WHERE e.space_id = %s AND NOT EXISTS "
                    f"(SELECT 1 FROM {targets} x WHERE x.id = e.target_rowid)",
                    (space,),
                ).fetchone()
                if row and row[0]:
                    problems.append(f"space {space}: {row[0]} vectors of missing {targets} rows")
    return problems


def distinct_acks(acks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``acks`` without repeats: a sync or an index acknowledges every section or symbol on
    disk after each run, so the same write is acknowledged once per run (checked once)."""
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    for ack in acks:
        key = repr(sorted(ack.items()))
        if key not in seen:
            seen.add(key)
            out.append(ack)
    return out


def ack_problems(box: recallbox.Box, acks: list[dict[str, Any]]) -> list[str]:
    """Every acknowledged message and generation is in the store."""
    problems: list[str] = []
    generations: dict[str, set[str]] = {}
    seen: dict[str, Any] = {}
    for ack in distinct_acks(acks):
        if ack.get("kind") == "message":
            try:
                message = box.message(ack["id"])
            except recallbox.NotFound:
                problems.append(f"acknowledged message {ack['id']} ({ack['marker']}) is lost")
                continue
            if message.channel != ack["channel"] or not message.content.startswith(ack["marker"]):
                problems.append(f"acknowledged message {ack['id']} holds other content")
        elif ack.get("kind") in CURATED_ACKS:
            problems += CURATED_ACKS[ack["kind"]](box, ack, seen)
        elif ack.get("kind") == "generation":
            channel = ack["channel"]
            if channel not in generations:
                generations[channel] = {g.id for g in box.generations(channel)}
            if ack["id"] not in generations[channel]:
                problems.append(f"acknowledged generation {ack['id']} of {channel} is lost")
    return problems


def _memory_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    if "memories" not in seen:  # read once per check: a check writes nothing meanwhile
        seen["memories"] = {e.key: e for e in box.memories()}
    entry = seen["memories"].get(ack["id"])
    if entry is None or not entry.body.startswith(ack["marker"]):
        return [f"acknowledged memory entry {ack['id']} ({ack['marker']}) is lost"]
    return []


def _output_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    try:
        text = box.expand(ack["id"])
    except recallbox.NotFound:
        return [f"acknowledged tool output {ack['id']} ({ack['marker']}) is lost"]
    return [] if ack["marker"] in text else [f"tool output {ack['id']} holds other text"]


def _section_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    hits = box.search(ack["marker"], domain="knowledge", limit=3, allow_embed=False)
    if any(ack["marker"] in hit.text for hit in hits):
        return []
    return [f"acknowledged section {ack['marker']} of {ack['id']} is lost"]


def _symbol_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    hits = box.search(ack["marker"], domain="code", limit=3, allow_embed=False)
    if any(ack["marker"] in hit.id for hit in hits):
        return []
    return [f"acknowledged symbol {ack['marker']} of {ack['id']} is lost"]


def _hooked_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    """A hook that returned imported its transcript's turns so far: every prompt is there."""
    heads = {m.content.split(" ", 1)[0] for m in box.messages(ack["channel"])}
    missing = [t for t in range(ack["turns"]) if corpus.marker("cq", t) not in heads]
    if missing:
        return [f"{ack['channel']}: turns {missing[:5]} of an acknowledged hook call are lost"]
    return []


def _decay_ack(box: recallbox.Box, ack: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    """Decay never deletes: every entry an acknowledged run moved is still there."""
    if "memories" not in seen:
        seen["memories"] = {e.key: e for e in box.memories()}
    gone = [key for key, _ in ack["transitions"] if key not in seen["memories"]]
    return [f"decay {ack['day']} moved {gone[:5]}, now missing"] if gone else []


CURATED_ACKS = {
    "memory": _memory_ack,
    "output": _output_ack,
    "section": _section_ack,
    "symbol": _symbol_ack,
    "hooked": _hooked_ack,
    "decay": _decay_ack,
}
"""How an acknowledged write of the other domains is found again."""
WRITTEN_ACKS = ("message", "generation", *CURATED_ACKS)
"""The acknowledgement kinds that stand for a write (progress and read records do not)."""


def duplicate_problems(box: recallbox.Box) -> list[str]:
    """No writer's marker is stored twice (a write applied twice)."""
    counts: Counter[str] = Counter()
    for thread in box.threads():
        for message in box.messages(thread.channel):
            head = message.content.split(" ", 1)[0]
            if MARKER.fullmatch(head):
                counts[head] += 1
    return [f"{marker} stored {n} times" for marker, n in counts.items() if n > 1]


def order_problems(box: recallbox.Box, acks: list[dict[str, Any]]) -> list[str]:
    """A writer's acknowledged messages in one thread have increasing ``seq``, in ack order."""
    problems: list[str] = []
    last: dict[str, int] = {}
    for ack in acks:
        if ack.get("kind") != "message":
            continue
        seq = box.message(ack["id"]).seq
        if seq <= last.get(ack["channel"], 0):
            problems.append(f"{ack['marker']} has seq {seq} after {last[ack['channel']]}")
        last[ack["channel"]] = seq
    return problems


def check_store(db: Path | str, acks: list[dict[str, Any]], *, unique: bool = True) -> list[str]:
    """Every generic invariant (see the module docstring); ``unique`` adds the duplicate check."""
    try:
        box = recallbox.open(db)
    except Exception as exc:  # the first invariant: the file opens
        return [f"the database does not open: {type(exc).__name__}: {exc}"]
    with box:
        report = box.doctor()
        problems = [
            f"doctor: {index.table} unhealthy ({index})"
            for index in report.indexes
            if not index.healthy
        ]
        problems += ack_problems(box, acks)
        if unique:
            problems += duplicate_problems(box)
    return problems + structure_problems(db)
