"""Where ingest time goes, and what each change buys (#14 item 2), on the scale history.

The first ``--messages`` messages of the scale history (``scale_data``) are written into a
fresh SQLite file per variant, and messages/s is reported per variant, interleaved and
repeated (``--repeats``) so machine noise hits every variant alike:

* ``api_many`` / ``api_single`` — the shipped ``append_many`` / ``append`` (the reference);
* ``sql_rows`` — the same rows and schema, written by one prototype transaction: batched
  ``executemany``, no re-read of inserted rows (the store already has every value);
* ``seg_null`` — as ``sql_rows``, with ``content_seg`` stored as ``''`` where it equals
  ``content`` (no table rebuild needed: the column stays NOT NULL) and the ranked FTS index
  reading ``CASE content_seg WHEN '' THEN content ELSE content_seg END`` through a view;
* ``no_trigram`` / ``no_fts`` — as ``sql_rows`` without the trigram index / without either
  index (what the indexes cost);
* ``thread_full`` — as ``seg_null``, with the literal index replaced by the contentless
  ``detail=full`` trigram index keyed by ``thread_id << 32 | seq`` over searchable rows (the
  recommended literal index, ``scale_options.py``);
* ``single_sql`` — one prototype transaction per message (what a single ``append`` can reach).

Usage: ``python benchmarks/scale_ingest.py --messages 3000 --repeats 2`` (and ``--profile``
for a cProfile of ``append_many``). Writes ``benchmarks/results/scale_ingest.json``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402
import scale_data as data  # noqa: E402

import recallbox  # noqa: E402
from recallbox.domains.messages import build_row_from_mapping  # noqa: E402
from recallbox.storage.sqlite.rows import (  # noqa: E402
    GENERATION_ID_PREFIX,
    MESSAGE_ID_PREFIX,
    content_hash,
    dump_json,
    format_time,
    new_id,
)
from recallbox.storage.sqlite.schema import MESSAGES_FTS, MESSAGES_TRGM  # noqa: E402
from recallbox.text.cjk import segment  # noqa: E402

RESULTS = HERE / "results" / "scale_ingest.json"
SEARCHABLE = "new.kind = 'message' AND new.model_visible = 1 AND new.pending = 0"

INSERT = (
    "INSERT INTO messages (uid, thread_id, generation_id, seq, role, kind, content, content_seg, "
    "args_text, raw_content, tool_calls, tool_calls_raw, tool_call_id, model_visible, pending, "
    "created_at, metadata, content_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    "?, ?)"
)


def steps(messages: int) -> list[data.Step]:
    """The first ``messages`` messages of the scale history (writes in order, compactions kept)."""
    writer = data.Writer(data.Corpus(), messages)
    return list(data.history(writer))


def drop_triggers(conn: apsw.Connection, index: str) -> None:
    for trigger in (f"{index}_ai", f"{index}_ad", f"{index}_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")


def prepare(path: Path, variant: str) -> None:
    """A fresh database with the schema of ``variant``."""
    recallbox.open(path).close()
    conn = apsw.Connection(str(path))
    if variant in ("no_trigram", "no_fts", "thread_full"):
        drop_triggers(conn, MESSAGES_TRGM.name)
    if variant == "no_fts":
        drop_triggers(conn, MESSAGES_FTS.name)
    if variant in ("seg_null", "thread_full"):
        drop_triggers(conn, MESSAGES_FTS.name)
        conn.execute(
            "CREATE VIEW messages_fts_source AS SELECT id, CASE content_seg WHEN '' THEN "
            "content ELSE content_seg END AS content_seg FROM messages"
        )
        conn.execute(
            "CREATE TRIGGER messages_fts_ai AFTER INSERT ON messages BEGIN "
            "INSERT INTO messages_fts(rowid, content_seg) "
            "VALUES (new.id, CASE new.content_seg WHEN '' THEN new.content "
            "ELSE new.content_seg END); END"
        )
    if variant == "thread_full":
        conn.execute(
            "CREATE VIRTUAL TABLE lit_full USING fts5(content, args_text, content='', "
            "contentless_delete=1, tokenize='trigram', detail='full')"
        )
        conn.execute(
            f"CREATE TRIGGER lit_full_ai AFTER INSERT ON messages WHEN {SEARCHABLE} BEGIN "
            "INSERT INTO lit_full(rowid, content, args_text) "
            "VALUES ((new.thread_id << 32) | new.seq, new.content, new.args_text); END"
        )
    conn.close()


class SqlWriter:
    """The prototype write path: one ``executemany`` per batch, no re-read."""

    def __init__(self, path: Path, seg_null: bool) -> None:
        self.conn = apsw.Connection(str(path))
        self.conn.setbusytimeout(30_000)
        self.conn.execute("PRAGMA journal_mode = WAL")
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.seg_null = seg_null
        self.threads: dict[str, list[int]] = {}  # channel -> [thread id, generation id, seq]

    def _thread(self, channel: str) -> list[int]:
        state = self.threads.get(channel)
        if state is None:
            now = format_time(data.START_TIME)
            self.conn.execute(
                "INSERT INTO threads (channel, created_at, last_activity) VALUES (?, ?, ?)",
                (channel, now, now),
            )
            tid = int(self.conn.last_insert_rowid())
            self.conn.execute(
                "INSERT INTO generations (uid, thread_id, number, opened_at) VALUES (?, ?, 1, ?)",
                (new_id(GENERATION_ID_PREFIX), tid, now),
            )
            state = self.threads[channel] = [tid, int(self.conn.last_insert_rowid()), 1, 1]
        return state

    def write(self, channel: str, items: list[dict[str, Any]], compact: str = "") -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        state = self._thread(channel)
        if compact:
            items = [{"role": "system", "kind": "compaction_summary", "content": compact}]
        rows = [build_row_from_mapping(item) for item in items]
        values = []
        latest = ""
        for row in rows:
            if row.opens_generation:
                state[2] += 1
                self.conn.execute(
                    "INSERT INTO generations (uid, thread_id, number, opened_at) "
                    "VALUES (?, ?, ?, ?)",
                    (new_id(GENERATION_ID_PREFIX), state[0], state[2], format_time(row.created_at)),
                )
                state[1] = int(self.conn.last_insert_rowid())
            seg = segment(row.content)
            created = format_time(row.created_at)
            latest = max(latest, created)
            values.append(
                (
                    new_id(MESSAGE_ID_PREFIX), state[0], state[1], state[3], row.role, row.kind,
                    row.content, "" if self.seg_null and seg == row.content else seg,
                    row.args_text, None,
                    dump_json(row.tool_calls) if row.tool_calls is not None else None,
                    row.tool_calls_raw, row.tool_call_id, int(row.model_visible),
                    int(row.pending), created, dump_json(row.metadata),
                    content_hash(row.content, row.args_text),
                )
            )  # fmt: skip
            state[3] += 1
        self.conn.executemany(INSERT, values)
        self.conn.execute(
            "UPDATE threads SET next_seq = ?, last_activity = max(last_activity, ?) WHERE id = ?",
            (state[3], latest, state[0]),
        )
        self.conn.execute("COMMIT")


def run_variant(variant: str, plan: list[data.Step], workdir: Path) -> dict[str, Any]:
    path = workdir / f"{variant}.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    prepare(path, variant)
    count = sum(len(s.items) for s in plan)
    started = time.perf_counter()
    cpu = time.process_time()
    if variant.startswith("api_"):
        with recallbox.open(path) as box:
            for step in plan:
                if step.kind == "compact":
                    box.compact(step.channel, step.summary)
                elif variant == "api_single":
                    for item in step.items:
                        box.append(step.channel, **item)
                else:
                    box.append_many(step.channel, step.items)
    else:
        writer = SqlWriter(path, seg_null=variant in ("seg_null", "thread_full"))
        for step in plan:
            if step.kind == "compact":
                writer.write(step.channel, [], compact=step.summary)
            elif variant == "single_sql":
                for item in step.items:
                    writer.write(step.channel, [item])
            else:
                writer.write(step.channel, step.items)
        writer.conn.close()
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    return {
        "messages_per_s": round(count / seconds, 1),
        "messages_per_cpu_s": round(count / cpu, 1),
        "file_bytes": path.stat().st_size,
    }


VARIANTS = (
    "api_many", "api_single", "sql_rows", "seg_null", "no_trigram", "no_fts", "thread_full",
    "single_sql",
)  # fmt: skip


def profile(plan: list[data.Step], workdir: Path) -> str:
    path = workdir / "profile.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    profiler = cProfile.Profile()
    with recallbox.open(path) as box:
        profiler.enable()
        for step in plan:
            if step.kind == "many":
                box.append_many(step.channel, step.items)
        profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(18)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=3_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    plan = steps(args.messages)
    workdir = Path(tempfile.mkdtemp(prefix="recallbox-ingest-"))
    if args.profile:
        print(profile(plan, workdir))
        return
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(args.repeats):
        for variant in args.variants.split(","):
            runs.setdefault(variant, []).append(run_variant(variant, plan, workdir))
            print(variant, runs[variant][-1], flush=True)
    report = {
        "benchmark": "scale_ingest",
        "messages": args.messages,
        "repeats": args.repeats,
        "metric": "messages/s written, wall and CPU (median of repeats), file bytes",
        "variants": {
            v: {
                "messages_per_s": statistics.median(r["messages_per_s"] for r in rs),
                "messages_per_cpu_s": statistics.median(r["messages_per_cpu_s"] for r in rs),
                "file_bytes": rs[-1]["file_bytes"],
            }
            for v, rs in runs.items()
        },
    }
    args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(report["variants"], indent=1))


if __name__ == "__main__":
    main()
