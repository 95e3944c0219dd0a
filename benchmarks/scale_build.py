"""Building (and caching) the databases of ``benchmarks/scale.py``.

A history is written once per size through the public API (``append_many``, ``append``,
``compact``) into ``<workdir>/scale-<size>-v<DATA_VERSION>.db``; the time spent in each verb is
the ingest measurement. A ``.meta.json`` beside it records what was built and marks each stage
done (``built``, ``embedded``, ``exported``), so a rerun reuses a finished database and resumes
after the last finished stage.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import apsw
import scale_data as data

import recallbox

PROGRESS_EVERY = 0.05  # print progress every 5 % of the history
EXPORT_NAME = "scale-{size}-v{version}.export.txt"
HASH_DIM = 256


def db_path(workdir: Path, size: int) -> Path:
    return workdir / f"scale-{size}-v{data.DATA_VERSION}.db"


def meta_path(db: Path) -> Path:
    return db.with_suffix(".meta.json")


def load_meta(db: Path) -> dict[str, Any]:
    path = meta_path(db)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def save_meta(db: Path, meta: dict[str, Any]) -> None:
    meta_path(db).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


def _rate(count: int, seconds: float) -> float:
    return round(count / seconds, 1) if seconds > 0 else 0.0


def _written(db: Path) -> int:
    """Rows already in ``db`` (messages and compaction summaries): a build resumes after them."""
    if not db.exists():
        return 0
    with recallbox.open(db):  # recovers the WAL of an interrupted build
        pass
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    count = int(conn.execute("SELECT count(*) FROM messages").fetchone()[0])
    conn.close()
    return count


def _plant_a_id(db: Path) -> str:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    row = conn.execute(  # the plant is in the oldest thread: the scan stops early
        "SELECT uid FROM messages WHERE instr(content, ?) > 0 ORDER BY id LIMIT 1", (data.PLANT_A,)
    ).fetchone()
    conn.close()
    return str(row[0]) if row else ""


def build(db: Path, size: int) -> dict[str, Any]:
    """Write the ``size``-message history into ``db`` and time each verb.

    Each step is one transaction, so an interrupted build resumes after the last step it
    finished (the history is regenerated and the written prefix skipped); the ingest figures
    of a resumed build cover the part written by the last run (``resumed_after``).
    """
    skip = _written(db)
    corpus = data.Corpus()
    seconds = {"many": 0.0, "single": 0.0, "compact": 0.0}
    cpu = {"many": 0.0, "single": 0.0, "compact": 0.0}
    counts = {"many": 0, "single": 0, "compact": 0}
    calls = {"many": 0, "single": 0, "compact": 0}
    plant_a_id = ""
    started, started_cpu = time.perf_counter(), time.process_time()
    generating = generating_cpu = 0.0  # making the history (not the store's work)
    next_report = PROGRESS_EVERY * (1 + skip // max(1, int(PROGRESS_EVERY * size)))
    channels: set[str] = set()
    writer = data.Writer(corpus, size)
    steps = data.history(writer)
    skipped = 0
    with recallbox.open(db) as box:
        while True:
            at, at_cpu = time.perf_counter(), time.thread_time()
            step = next(steps, None)
            generating += time.perf_counter() - at
            generating_cpu += time.thread_time() - at_cpu
            if step is None:
                break
            channels.add(step.channel)
            if skipped < skip:
                skipped += len(step.items) if step.kind != "compact" else 1
                continue
            at, at_cpu = time.perf_counter(), time.thread_time()
            if step.kind == "many":
                written = box.append_many(step.channel, step.items)
                if not plant_a_id:
                    plant_a_id = next((m.id for m in written if data.PLANT_A in m.content), "")
            elif step.kind == "single":
                message = box.append(step.channel, **step.items[0])
                if not plant_a_id and data.PLANT_A in message.content:
                    plant_a_id = message.id
            else:
                box.compact(step.channel, step.summary)
            seconds[step.kind] += time.perf_counter() - at
            cpu[step.kind] += time.thread_time() - at_cpu
            counts[step.kind] += len(step.items) if step.kind != "compact" else 1
            calls[step.kind] += 1
            done = counts["many"] + counts["single"] + skip
            if done >= next_report * size:
                print(
                    f"  [{size:,}] {done:,} messages in {time.perf_counter() - started:.0f} s",
                    flush=True,
                )
                next_report += PROGRESS_EVERY
        written_at = time.perf_counter()
        backlog = box.store.indexer.pending()
        box.store.indexer.drain()  # the literal index catches up (the background thread helps)
        caught_up = time.perf_counter()
    total = time.perf_counter() - started
    process_cpu = time.process_time() - started_cpu
    store_seconds = caught_up - started - generating
    written_messages = counts["many"] + counts["single"]
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    stored = int(conn.execute(
        "SELECT count(*) FROM messages WHERE kind != 'compaction_summary'").fetchone()[0])  # fmt: skip
    conn.close()
    return {
        "size": size,
        "data_version": data.DATA_VERSION,
        "messages": stored,
        "threads": len(channels),
        "compactions": counts["compact"],
        "plant_a_message_id": plant_a_id or _plant_a_id(db),
        "resumed_after": skip,
        "plant_b_messages": data.plant_b_messages(size),
        "identifiers": writer.identifiers,
        "decoys": writer.decoys,
        "build_seconds": round(total, 1),
        "ingest": {
            "append_many": {
                "messages": counts["many"],
                "calls": calls["many"],
                "seconds": round(seconds["many"], 2),
                "cpu_seconds": round(cpu["many"], 2),
                "messages_per_s": _rate(counts["many"], seconds["many"]),
                "messages_per_cpu_s": _rate(counts["many"], cpu["many"]),
            },
            "append": {
                "messages": counts["single"],
                "seconds": round(seconds["single"], 2),
                "cpu_seconds": round(cpu["single"], 2),
                "messages_per_s": _rate(counts["single"], seconds["single"]),
                "messages_per_cpu_s": _rate(counts["single"], cpu["single"]),
            },
            "compact": {
                "calls": counts["compact"],
                "seconds": round(seconds["compact"], 2),
                "cpu_seconds": round(cpu["compact"], 2),
                "per_s": _rate(counts["compact"], seconds["compact"]),
                "per_cpu_s": _rate(counts["compact"], cpu["compact"]),
            },
            "literal_index": {
                "backlog_when_writes_ended": backlog,
                "catch_up_seconds": round(caught_up - written_at, 1),
                "write_and_index_seconds": round(store_seconds, 1),
                "messages_per_s_all_indexed": _rate(written_messages, store_seconds),
            },
            # Every thread of the process (the writer and the background literal indexer),
            # the generator's own CPU taken out: what one message costs with all its indexes.
            "all_indexed": {
                "generation_seconds": round(generating, 1),
                "generation_cpu_seconds": round(generating_cpu, 1),
                "process_cpu_seconds": round(process_cpu - generating_cpu, 1),
                "messages_per_process_cpu_s": _rate(
                    written_messages, process_cpu - generating_cpu
                ),
            },
        },
        "built": True,
    }


def embed(db: Path) -> dict[str, Any]:
    """Give every message a hashing-embedder vector (``embed_all``) and time it."""
    started = time.perf_counter()
    with recallbox.open(db, embedder="hash") as box:
        count = box.embed_all()
    seconds = time.perf_counter() - started
    return {
        "vectors": count,
        "embed_seconds": round(seconds, 1),
        "embed_per_s": _rate(count, seconds),
    }


# The searchable messages of DESIGN §3.2 in search order (the naive baselines read them).
SEARCHABLE_SQL = (
    "SELECT m.uid, t.channel, g.number, m.seq, m.role, m.content, m.tool_calls, m.args_text "
    "FROM messages m JOIN threads t ON t.id = m.thread_id "
    "JOIN generations g ON g.id = m.generation_id "
    "WHERE m.kind = 'message' AND m.model_visible = 1 AND m.pending = 0 "
    "AND m.superseded_by IS NULL AND t.quarantined = 0 "
    "ORDER BY t.last_activity DESC, t.id DESC, g.number DESC, m.seq ASC"
)


def export_text(db: Path, out: Path) -> dict[str, Any]:
    """One line per searchable message (content and argument text, newlines as spaces): the
    file ``grep -F`` and ripgrep search."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    lines = 0
    with out.open("w", encoding="utf-8", errors="surrogatepass") as fh:
        for row in conn.execute(SEARCHABLE_SQL):
            text = f"{row[0]}\t{row[5]} {row[7]}".replace("\n", " ").replace("\r", " ")
            fh.write(text + "\n")
            lines += 1
    conn.close()
    return {"export_lines": lines, "export_bytes": out.stat().st_size, "exported": True}


def ensure(workdir: Path, size: int, *, vectors: bool = True) -> tuple[Path, dict[str, Any]]:
    """The cached database of ``size`` messages (built, embedded and exported as needed)."""
    workdir.mkdir(parents=True, exist_ok=True)
    db = db_path(workdir, size)
    meta = load_meta(db)
    if not meta.get("built") or not db.exists():
        print(f"[{size:,}] building {db}", flush=True)
        meta = build(db, size)
        save_meta(db, meta)
    if vectors and not meta.get("embedded"):
        print(f"[{size:,}] embedding (hashing embedder)", flush=True)
        meta.update(embed(db), embedded=True)
        save_meta(db, meta)
    export = workdir / EXPORT_NAME.format(size=size, version=data.DATA_VERSION)
    if not meta.get("exported") or not export.exists():
        print(f"[{size:,}] exporting text for grep", flush=True)
        meta.update(export_text(db, export))
        save_meta(db, meta)
    meta["export_path"] = str(export)
    return db, meta
