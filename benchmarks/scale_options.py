"""Measured options for a complete literal search (#14 item 1), on a copy of a scale database.

Each option is a prototype ``literal_candidates`` (the store's half of ``search_memory``): the
very same result assembly (``recallbox.domains.threads.search_literal``) runs over it, and its
answers are compared with the complete naive scan, so "complete" is checked, not assumed.

Options:

* ``current`` — the shipped path: trigram ``detail=none``, every trigram ANDed, a doclist set,
  a 5 000-candidate cap per pass.
* ``none_uncapped`` — the same index and plan with no cap: what completeness costs without a
  new index.
* ``rarest`` — ``detail=none``, only the :data:`RAREST_TRIGRAMS` rarest trigrams (document
  counts from ``fts5vocab``), no cap.
* ``full_phrase`` — a second trigram index with ``detail=full``: the whole term as one phrase
  (exact substring candidates up to case folding), no cap; few candidates are sorted through a
  covering order index, many are walked generation by generation newest first with
  ``rowid BETWEEN`` (stopping once the caller is done).

**A record, pinned to its commit.** The prototypes call the store's internals as they were at
commit ``328e528``, where ``benchmarks/results/scale_options.json`` was written; later commits
reshaped them (the option kept ships as ``storage/sqlite/literal_plan.py``). Run it from that
commit: ``git worktree add /tmp/options 328e528`` and the usage below inside it; on a newer
tree it stops with that advice.

Usage: ``python benchmarks/scale_options.py --db COPY.db [--build] [--options a,b]``; ``--build``
adds the ``detail=full`` index and the order index to COPY.db (timed, sized with ``dbstat``).
Writes ``benchmarks/results/scale_options.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE)]

import apsw  # noqa: E402
import scale_baselines as base  # noqa: E402
import scale_data as data  # noqa: E402
from scale import CAP_NOTES, Timings, summary  # noqa: E402

from recallbox.domains.threads import search_literal  # noqa: E402
from recallbox.storage.base import CandidateStream, SearchableMessage  # noqa: E402
from recallbox.storage.sqlite import literal  # noqa: E402
from recallbox.storage.sqlite.connection import ConnectionPool  # noqa: E402
from recallbox.storage.sqlite.fts import quote_phrase  # noqa: E402

PINNED_COMMIT = "328e528"  # where benchmarks/results/scale_options.json was written

RESULTS = HERE / "results" / "scale_options.json"
RAREST_TRIGRAMS = 3
SORT_MAX = 20_000  # exact candidates above this many are walked in order instead of sorted
CHUNK = 64

BUILD_SQL = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS messages_trgm_full USING fts5(content, args_text, "
    "content='messages', content_rowid='id', tokenize='trigram', detail='full')",
    "INSERT INTO messages_trgm_full(messages_trgm_full) VALUES ('rebuild')",
    # rowid -> search order and the §3.2 flags, without reading a message row
    "CREATE INDEX IF NOT EXISTS messages_order ON messages (id, thread_id, generation_id, seq) "
    "WHERE kind = 'message' AND model_visible = 1 AND pending = 0 AND superseded_by IS NULL",
    "CREATE INDEX IF NOT EXISTS messages_gen_ids ON messages (generation_id, id)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS trgm_vocab USING fts5vocab(messages_trgm, 'row')",
]

ROWS_SQL = (
    f"SELECT {literal.ROW_COLUMNS} FROM {literal.SEARCH_FROM} WHERE m.id IN ({{marks}}) "
    "AND m.kind = 'message' AND m.model_visible = 1 AND m.pending = 0 "
    "AND m.superseded_by IS NULL"
)


def build(db: Path) -> dict[str, Any]:
    conn = apsw.Connection(str(db))
    out: dict[str, Any] = {}
    for sql in BUILD_SQL:
        started = time.perf_counter()
        conn.execute(sql)
        out[sql.split("(")[0][:60]] = round(time.perf_counter() - started, 1)
    conn.close()
    return out


def table_sizes(db: Path) -> dict[str, int]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    sizes: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        for prefix in (
            "messages_trgm_full",
            "messages_trgm",
            "messages_order",
            "messages_gen_ids",
            "lit_full",
            "lit_none",
            "messages_fts",
            "messages",
        ):
            if str(name).startswith(prefix):
                sizes[prefix] = sizes.get(prefix, 0) + int(size)
                break
    conn.close()
    return sizes


class OptionStore:
    """A prototype store: ``literal_candidates`` by one option; rows read in chunks."""

    def __init__(self, db: Path, option: str) -> None:
        self.pool = ConnectionPool(str(db))
        self.option = option
        self.candidates = 0  # rows read and rechecked (the cost that scales with false hits)

    def _rows(self, ids: Iterator[int]) -> Iterator[SearchableMessage]:
        while chunk := list(islice(ids, CHUNK)):
            sql = ROWS_SQL.format(marks=", ".join("?" * len(chunk)))
            with self.pool.reading() as conn:
                by_id = {r[0]: r for r in conn.execute(sql, chunk).fetchall()}
            self.candidates += len(chunk)
            for rowid in chunk:
                if rowid in by_id:
                    yield literal._row(by_id[rowid])

    def literal_candidates(
        self, term: str, *, channel: str | None, case_sensitive: bool, limit: int, recent: int = 0
    ) -> CandidateStream:
        if self.option == "current":
            return literal.literal_candidates(
                self.pool, term, channel=channel, case_sensitive=case_sensitive, limit=limit,
                recent=recent,
            )  # fmt: skip
        stream = CandidateStream()
        if len(term) < literal.TRIGRAM_CHARS:
            return literal.literal_candidates(
                self.pool, term, channel=channel, case_sensitive=case_sensitive, limit=limit,
                recent=recent,
            )  # fmt: skip
        if self.option == "none_uncapped":
            ids = literal.ordered_candidate_ids(
                self.pool, term, channel=channel, limit=10**9, stream=stream
            )
            stream.rows = literal._filtered_rows(self.pool, term, case_sensitive, ids)
            return stream
        if self.option == "rarest":
            stream.rows = self._rows(self._sorted_or_walked(self._rarest(term), channel))
            return stream
        stream.rows = self._rows(self._full(term, channel))
        return stream

    # -- rarest trigrams on detail=none ----------------------------------------------------
    def _rarest(self, term: str) -> list[int]:
        folded = term.lower()
        grams = list(dict.fromkeys(folded[i : i + 3] for i in range(len(folded) - 2)))
        with self.pool.reading() as conn:
            counts = {
                g: int(r[0]) if (r := conn.execute(
                    "SELECT doc FROM trgm_vocab WHERE term = ?", (g,)).fetchone()) else 0
                for g in grams
            }  # fmt: skip
        rare = sorted(grams, key=lambda g: counts[g])[:RAREST_TRIGRAMS]
        match = " AND ".join(quote_phrase(g) for g in rare)
        with self.pool.reading() as conn:
            return [
                int(r[0])
                for r in conn.execute(
                    "SELECT rowid FROM messages_trgm WHERE messages_trgm MATCH ?", (match,)
                )
            ]

    # -- detail=full phrase ----------------------------------------------------------------
    def _full(self, term: str, channel: str | None) -> Iterator[int]:
        match = quote_phrase(term)
        with self.pool.reading() as conn:
            try:
                ids = [
                    int(r[0])
                    for r in conn.execute(
                        "SELECT rowid FROM messages_trgm_full WHERE messages_trgm_full MATCH ?",
                        (match,),
                    )
                ]
            except apsw.SQLError:
                return iter(())
        return self._sorted_or_walked(ids, channel, match)

    def _sorted_or_walked(
        self, ids: list[int], channel: str | None, match: str | None = None
    ) -> Iterator[int]:
        if not ids:
            return iter(())
        if len(ids) <= SORT_MAX or match is None:
            return iter(self._sorted(ids, channel))
        return self._walk(match, channel)

    def _sorted(self, ids: list[int], channel: str | None) -> list[int]:
        where = literal.THREAD_ALLOWED_SQL
        params: list[Any] = [json.dumps(ids)]
        if channel is not None:
            where += " AND t.channel = ?"
            params.append(channel)
        sql = (
            "SELECT o.id FROM json_each(?) j CROSS JOIN messages o INDEXED BY messages_order "
            "ON o.id = j.value AND o.kind = 'message' AND o.model_visible = 1 "
            "AND o.pending = 0 AND o.superseded_by IS NULL "
            "JOIN threads t ON t.id = o.thread_id JOIN generations g ON g.id = o.generation_id "
            f"WHERE {where} ORDER BY t.last_activity DESC, t.id DESC, g.number DESC, o.seq"
        )
        with self.pool.reading() as conn:
            return [int(r[0]) for r in conn.execute(sql, params)]

    def _walk(self, match: str, channel: str | None) -> Iterator[int]:
        gens_sql = (
            "SELECT g.id, (SELECT min(id) FROM messages WHERE generation_id = g.id), "
            "(SELECT max(id) FROM messages WHERE generation_id = g.id) "
            f"FROM generations g JOIN threads t ON t.id = g.thread_id WHERE {literal.THREAD_ALLOWED_SQL}"
        )
        params: list[Any] = []
        if channel is not None:
            gens_sql += " AND t.channel = ?"
            params.append(channel)
        gens_sql += " ORDER BY t.last_activity DESC, t.id DESC, g.number DESC"
        with self.pool.reading() as conn:
            gens = conn.execute(gens_sql, params).fetchall()
        for gen_id, low, high in gens:
            if low is None:
                continue
            with self.pool.reading() as conn:
                ids = [
                    int(r[0])
                    for r in conn.execute(
                        "SELECT f.rowid FROM messages_trgm_full f CROSS JOIN messages o "
                        "INDEXED BY messages_order ON o.id = f.rowid AND o.kind = 'message' "
                        "AND o.model_visible = 1 AND o.pending = 0 AND o.superseded_by IS NULL "
                        "WHERE messages_trgm_full MATCH ? AND f.rowid BETWEEN ? AND ? "
                        "AND o.generation_id = ? ORDER BY o.seq",
                        (match, low, high, gen_id),
                    )
                ]
            yield from ids


def run(
    db: Path, meta_path: Path, options: list[str], naive: base.NaiveStore, passes: int
) -> dict[str, Any]:
    meta = json.loads(meta_path.read_text())
    mix = data.query_mix(int(meta["size"]), int(meta["identifiers"]))
    queries = [q.text for q in mix] + [data.PLANT_A, data.PLANT_B]
    expected = {q: search_literal(naive, q, None) for q in queries}  # type: ignore[arg-type]
    stress_db = db.parent / f"scale-stress-v{data.DATA_VERSION}.db"
    results: dict[str, Any] = {}
    for option in options:
        store = V3Store(db, option[3:]) if option.startswith("v3_") else OptionStore(db, option)
        search = {"full_v2": search_literal_v2}.get(option, search_literal)
        _threads.match_spans = _ORIGINAL_MATCH_SPANS
        if option.startswith("v3_"):
            search = search_literal_v3
        if "+fast" in option:
            _threads.match_spans = fast_match_spans  # both sides: the naive uses it too
            lazy = option.endswith("+lazy")
            store = V3Store(db, option[3:].split("+")[0], lazy=lazy,
                            sort_max=LAZY_SORT_MAX if lazy else 0)  # fmt: skip
        if option == "full_v2":
            with store.pool.reading() as conn:
                conn.execute(VOCAB_SQL)
        for q in queries:  # warm-up
            search(store, q, None)  # type: ignore[arg-type]
        times = Timings()
        outputs: dict[str, str] = {}
        per_query: dict[str, float] = {}
        store.candidates = 0
        for _ in range(passes):
            for q in queries:
                cpu = time.process_time()
                started = time.perf_counter()
                outputs[q] = search(store, q, None)  # type: ignore[arg-type]
                elapsed = time.perf_counter() - started
                times.append(elapsed)
                times.cpu.append(time.process_time() - cpu)
                per_query[q] = max(per_query.get(q, 0.0), elapsed)
        results[option] = {
            "latency": summary(times),
            "same_as_naive": sum(outputs[q] == expected[q] for q in queries),
            "same_hits_as_naive": sum(blocks(outputs[q]) == blocks(expected[q]) for q in queries),
            "notices": {
                q: (notice(outputs[q]), notice(expected[q]))
                for q in queries
                if notice(outputs[q]) != notice(expected[q])
            },
            "queries": len(queries),
            "differing": [q for q in queries if outputs[q] != expected[q]],
            "with_cap_note": sum(any(n in outputs[q] for n in CAP_NOTES) for q in queries),
            "plant_a_found": outputs[data.PLANT_A] == expected[data.PLANT_A],
            "plant_b_same": outputs[data.PLANT_B] == expected[data.PLANT_B],
            "rows_read_per_pass": store.candidates // passes,
            "slowest": sorted(per_query.items(), key=lambda kv: -kv[1])[:5],
        }
        store.pool.close()
        if stress_db.exists() and option != "rarest":
            results[option]["stress"] = stress(stress_db, option)
        print(option, json.dumps(results[option]), flush=True)
    return results


def blocks(text: str) -> str:
    """The result without its notice line (hit blocks, header, footer)."""
    return "\n".join(ln for ln in text.split("\n") if "more hits not shown" not in ln)


def notice(text: str) -> str:
    return next((ln for ln in text.split("\n") if "more hits not shown" in ln), "")


def stress(db: Path, option: str) -> dict[str, Any]:
    conn = apsw.Connection(str(db))
    conn.execute(BUILD_SQL[0])
    if not conn.execute("SELECT count(*) FROM messages_trgm_full_docsize").fetchone()[0]:
        for sql in BUILD_SQL[1:4]:
            conn.execute(sql)
    conn.execute(VOCAB_SQL)
    conn.close()
    search = {"full_v2": search_literal_v2}.get(option, search_literal)
    table = option[3:].split("+")[0]
    if option.startswith("v3_"):
        build_v3(db, [table])
        search = search_literal_v3
    store = (
        V3Store(db, table, lazy=option.endswith("+lazy"))
        if option.startswith("v3_")
        else OptionStore(db, option)
    )
    naive = base.NaiveStore(db)
    times = []
    same = 0
    for _ in range(3):
        for q in data.STRESS_QUERIES:
            started = time.perf_counter()
            out = search(store, q, None)  # type: ignore[arg-type]
            times.append(time.perf_counter() - started)
            same += blocks(out) == blocks(search_literal(naive, q, None))  # type: ignore[arg-type]
    n_times = []
    for q in data.STRESS_QUERIES:
        started = time.perf_counter()
        search_literal(naive, q, None)  # type: ignore[arg-type]
        n_times.append(time.perf_counter() - started)
    store.pool.close()
    return {"index": summary(times), "naive": summary(n_times), "same": same, "of": len(times)}


def main() -> None:
    if not hasattr(literal, "ordered_candidate_ids"):  # the internals the prototypes call
        sys.exit(
            f"scale_options.py measures the store's internals of commit {PINNED_COMMIT}: run it "
            f"from a checkout of that commit (git worktree add /tmp/options {PINNED_COMMIT})"
        )
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--meta", type=Path, required=True, help="the .meta.json of the build")
    parser.add_argument("--build", action="store_true")
    parser.add_argument("--options", default="current,none_uncapped,rarest,full_phrase")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    report: dict[str, Any] = {"db": str(args.db)}
    if args.build:
        report["build_seconds"] = build(args.db)
        report["build_seconds"].update(build_v3(args.db, list(V3_BUILD)))
        print(report, flush=True)
    report["index_bytes"] = table_sizes(args.db)
    print(report["index_bytes"], flush=True)
    naive = base.NaiveStore(args.db)
    report["options"] = run(args.db, args.meta, args.options.split(","), naive, args.passes)
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    old = previous.get(args.db.name, {})
    report["options"] = {**old.get("options", {}), **report["options"]}
    previous[args.db.name] = {**old, **report}
    args.out.write_text(json.dumps(previous, indent=1, ensure_ascii=False) + "\n")


# -- v2: the recommended plan (exact ordered candidates, bounded count) ----------------------

COUNT_BUDGET = 64  # candidates read to make the "more hits" count exact
PHRASE_POSITIONS_MAX = 2_000_000  # estimated positions a phrase MATCH may decode
VOCAB_SQL = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS trgm_full_vocab USING fts5vocab(messages_trgm_full, 'row')"
)


class PlanV2:
    """Candidate ids of one term, exact up to case folding, in §3.2 order, shared by both passes.

    * plan: ``vocab`` doc/instance counts of the term's trigrams (one indexed lookup each) give
      an upper bound on candidates (the rarest trigram's documents) and the positions a phrase
      MATCH would decode; a phrase whose position lists are huge (a 60 000-character run of one
      letter) is replaced by the AND of its trigrams, rechecked on the rows;
    * few candidates: one MATCH, then sorted through the covering order index;
    * many: walk generations newest first, MATCH with ``rowid BETWEEN`` each, stop when done.
    """

    def __init__(self, store: OptionStore, term: str, channel: str | None) -> None:
        self.store = store
        self.term = term
        self.channel = channel
        folded = term.lower()
        grams = list(dict.fromkeys(folded[i : i + 3] for i in range(len(folded) - 2)))
        with store.pool.reading() as conn:
            stats = []
            for g in grams:
                r = conn.execute(
                    "SELECT doc, cnt FROM trgm_full_vocab WHERE term = ?", (g,)
                ).fetchone()
                stats.append((int(r[0]), int(r[1])) if r else (0, 0))
        self.bound = min((d for d, _ in stats), default=0)
        positions = sum(c / d for d, c in stats if d) * self.bound
        self.match = (
            quote_phrase(term)
            if positions <= PHRASE_POSITIONS_MAX
            else " AND ".join(quote_phrase(g) for g in grams)
        )
        self.phrase = positions <= PHRASE_POSITIONS_MAX
        self.ids: list[int] | None = None

    def ordered(self) -> Iterator[int]:
        if self.bound == 0:
            return iter(())
        if self.bound <= SORT_MAX:
            if self.ids is None:
                with self.store.pool.reading() as conn:
                    raw = [int(r[0]) for r in conn.execute(
                        "SELECT rowid FROM messages_trgm_full WHERE messages_trgm_full MATCH ?",
                        (self.match,))]  # fmt: skip
                self.ids = self.store._sorted(raw, self.channel) if raw else []
            return iter(self.ids)
        return self.store._walk(self.match, self.channel)

    def count_beyond(self, seen: set[int], limit: int) -> int:
        """Visible candidates not in ``seen``, counted in the index up to ``limit``."""
        if self.ids is not None:
            return min(limit, sum(1 for i in self.ids if i not in seen))
        where = literal.THREAD_ALLOWED_SQL
        params: list[Any] = [self.match]
        if self.channel is not None:
            where += " AND t.channel = ?"
            params.append(self.channel)
        params.append(limit + len(seen))
        sql = (
            "SELECT f.rowid FROM messages_trgm_full f CROSS JOIN messages o INDEXED BY "
            "messages_order ON o.id = f.rowid AND o.kind = 'message' AND o.model_visible = 1 "
            "AND o.pending = 0 AND o.superseded_by IS NULL JOIN threads t ON t.id = o.thread_id "
            f"WHERE messages_trgm_full MATCH ? AND {where} LIMIT ?"
        )
        with self.store.pool.reading() as conn:
            ids = [int(r[0]) for r in conn.execute(sql, params)]
        return min(limit, sum(1 for i in ids if i not in seen))


def search_literal_v2(store: OptionStore, query: str, channel: str | None) -> str:
    """``search_literal`` with PlanV2 candidates: rows are read only while windows fill; then
    the rest is counted (exactly within :data:`COUNT_BUDGET` rows, else from the index)."""
    from recallbox.domains import threads as th

    terms = th.query_terms(query)
    collector = th.LiteralCollector()
    plans: list[PlanV2] = []
    exact = True
    beyond = 0
    for term in terms:
        if len(term) < literal.TRIGRAM_CHARS:
            # short terms: the shipped path (bigram index / bounded scan), unchanged
            for cs in (True, False) if term.lower() != term.upper() else (True,):
                rows, bounded = th._candidates(store, term, channel, cs)  # type: ignore[arg-type]
                collector.bounded_scan |= bounded
                for message in rows:
                    for index, (name, text) in enumerate(th.message_fields(message)):
                        collector.offer(message, index, name, text,
                                        th.match_spans(text, term, case_sensitive=cs))  # fmt: skip
                    if collector.done:
                        break
            continue
        plan = PlanV2(store, term, channel)
        plans.append(plan)
        if collector.full:
            continue
        passes = (True, False) if term.lower() != term.upper() else (True,)
        for cs in passes:
            ids = plan.ordered()
            for message in store._rows(ids):
                for index, (name, text) in enumerate(th.message_fields(message)):
                    collector.offer(message, index, name, text,
                                    th.match_spans(text, term, case_sensitive=cs))  # fmt: skip
                if collector.full:
                    break
            if collector.full:
                break
    if collector.full and plans:
        shown = store._uids({key[0] for key, _ in collector.blocks})
        seen = shown | store._uids({key[0] for key in collector.not_shown})
        beyond = max(p.count_beyond(seen, th.LITERAL_COUNT_LIMIT + 1) for p in plans)
        if 0 < beyond <= COUNT_BUDGET:
            # few left: read them and count their (message, field) pairs exactly
            for plan in plans:
                for cs in (True, False):
                    rest = (i for i in plan.ordered() if i not in seen)
                    for message in store._rows(rest):
                        for index, (name, text) in enumerate(th.message_fields(message)):
                            collector.offer(message, index, name, text,
                                            th.match_spans(text, plan.term, case_sensitive=cs))  # fmt: skip
            beyond = 0
        exact = beyond == 0
    out = collector.render(terms[0] if terms else "", th.scope_text(channel))
    if not exact:
        count = len(collector.not_shown) + beyond
        shown_count = (
            f"{th.LITERAL_COUNT_LIMIT}+" if count > th.LITERAL_COUNT_LIMIT else f"At least {count}"
        )
        notice = f"{shown_count} more hits not shown; narrow the query to see them."
        lines = out.split("\n")
        lines = [
            ln
            for ln in lines
            if not ln.endswith("more hits not shown; narrow the query to see them.")
        ]
        lines.insert(len(lines) - 1, notice)  # the notice is the line before the footer
        out = "\n".join(lines)
    return out


def _uids(self: OptionStore, uids: set[str]) -> set[int]:
    if not uids:
        return set()
    with self.pool.reading() as conn:
        marks = ", ".join("?" * len(uids))
        return {
            int(r[0])
            for r in conn.execute(f"SELECT id FROM messages WHERE uid IN ({marks})", list(uids))
        }


OptionStore._uids = _uids  # type: ignore[attr-defined]


# -- v3: per-thread keys inside the index ------------------------------------------------------

THREAD_SHIFT = 32
SEQ_MASK = (1 << THREAD_SHIFT) - 1
RECHECK_MAX = 200  # AND-of-trigrams candidates read and rechecked directly (no phrase)
COUNT_LIST = 1_100  # exact candidates listed for a term that only counts (LITERAL_COUNT_LIMIT+)
LAZY_SORT_MAX = 5_000
SEARCHABLE_ROWS = "kind = 'message' AND model_visible = 1 AND pending = 0 AND superseded_by IS NULL"
V3_BUILD = {
    "lit_full": [
        "CREATE VIRTUAL TABLE IF NOT EXISTS lit_full USING fts5(content, args_text, content='', "
        "contentless_delete=1, tokenize='trigram', detail='full')",
        "INSERT INTO lit_full(rowid, content, args_text) SELECT (thread_id << 32) | seq, content, "
        f"args_text FROM messages WHERE {SEARCHABLE_ROWS}",
    ],
    "lit_none": [
        "CREATE VIRTUAL TABLE IF NOT EXISTS lit_none USING fts5(content, args_text, content='', "
        "contentless_delete=1, tokenize='trigram', detail='none')",
        "INSERT INTO lit_none(rowid, content, args_text) SELECT (thread_id << 32) | seq, content, "
        f"args_text FROM messages WHERE {SEARCHABLE_ROWS}",
    ],
}
V3_ROWS_SQL = (
    "SELECT (m.thread_id << 32) | m.seq, m.uid, t.channel, g.number, m.seq, m.role, m.content, "
    "m.tool_calls FROM json_each(?) j CROSS JOIN messages m ON m.thread_id = (j.value >> 32) "
    "AND m.seq = (j.value & 4294967295) JOIN threads t ON t.id = m.thread_id "
    f"JOIN generations g ON g.id = m.generation_id WHERE m.{SEARCHABLE_ROWS.replace(' AND ', ' AND m.')}"
)


def build_v3(db: Path, tables: list[str]) -> dict[str, float]:
    conn = apsw.Connection(str(db))
    out = {}
    for name in tables:
        if conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone():
            continue
        started = time.perf_counter()
        conn.execute("BEGIN")
        for sql in V3_BUILD[name]:
            conn.execute(sql)
        conn.execute("COMMIT")
        out[name] = round(time.perf_counter() - started, 1)
    conn.close()
    return out


class V3Store(OptionStore):
    """Thread order metadata (would be columns in phase 2: generations.first_seq)."""

    def __init__(self, db: Path, table: str, *, lazy: bool = False, sort_max: int = 0) -> None:
        super().__init__(db, "v3")
        self.table = table
        self.lazy = lazy
        self.sort_max = sort_max or SORT_MAX
        with self.pool.reading() as conn:
            self.threads = {
                int(r[0]): (str(r[1]), str(r[2]), bool(r[3]))
                for r in conn.execute(
                    f"SELECT t.id, t.channel, t.last_activity, {literal.THREAD_ALLOWED_SQL} "
                    "FROM threads t")
            }  # fmt: skip
            self.gens: dict[int, list[tuple[int, int]]] = {}
            for tid, number, first in conn.execute(
                "SELECT g.thread_id, g.number, (SELECT min(seq) FROM messages m "
                "WHERE m.generation_id = g.id) FROM generations g ORDER BY g.thread_id, g.number"
            ):
                if first is not None:
                    self.gens.setdefault(int(tid), []).append((int(first), int(number)))
        self.by_channel = {v[0]: k for k, v in self.threads.items()}
        self.order = sorted(
            (k for k, v in self.threads.items() if v[2]),
            key=lambda k: (self.threads[k][1], k), reverse=True,
        )  # fmt: skip

    def key(self, rowid: int) -> tuple[int, int, int, int]:
        tid, seq = rowid >> THREAD_SHIFT, rowid & SEQ_MASK
        gens = self.gens.get(tid, [])
        number = 1
        for first, n in gens:
            if first <= seq:
                number = n
        rank = self.rank[tid]
        return (rank, -number, seq, rowid)

    def scope(self, channel: str | None) -> list[int]:
        if channel is None:
            return self.order
        tid = self.by_channel.get(channel)
        return [tid] if tid is not None and self.threads[tid][2] else []

    def ids(self, match: str, threads: list[int], limit: int, channel: str | None) -> list[int]:
        sql = f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ?"
        params: list[Any] = [match]
        if channel is not None:
            if not threads:
                return []
            sql += " AND rowid BETWEEN ? AND ?"
            params += [threads[0] << THREAD_SHIFT, (threads[0] << THREAD_SHIFT) | SEQ_MASK]
        sql += " LIMIT ?"
        params.append(limit)
        with self.pool.reading() as conn:
            try:
                return [int(r[0]) for r in conn.execute(sql, params)]
            except apsw.SQLError:
                return []

    def rows3(self, ids: Iterator[int]) -> Iterator[SearchableMessage]:
        while chunk := list(islice(ids, CHUNK)):
            with self.pool.reading() as conn:
                by = {int(r[0]): r for r in conn.execute(V3_ROWS_SQL, (json.dumps(chunk),))}
            self.candidates += len(chunk)
            for rowid in chunk:
                if rowid in by:
                    yield literal._row(by[rowid])


class PlanV3:
    """One term's candidates in §3.2 order from the per-thread-keyed trigram index."""

    def __init__(
        self, store: V3Store, term: str, channel: str | None, count_only: bool = False
    ) -> None:
        self.store, self.term, self.channel = store, term, channel
        self.threads = store.scope(channel)
        store.rank = {t: i for i, t in enumerate(store.order)}
        grams = list(dict.fromkeys(term.lower()[i : i + 3] for i in range(len(term) - 2)))
        self.and_match = " AND ".join(quote_phrase(g) for g in grams)
        self.phrase_match = quote_phrase(term) if store.table == "lit_full" else self.and_match
        allowed = set(self.threads)
        probe = [i for i in store.ids(self.and_match, self.threads, RECHECK_MAX + 1, channel)
                 if (i >> THREAD_SHIFT) in allowed]  # fmt: skip
        self.exact = False
        self.walk = False
        if len(probe) <= RECHECK_MAX:
            self.list = sorted(probe, key=store.key)  # a superset, every one rechecked
        elif count_only and store.table == "lit_full":
            # the windows are full: this term only counts, so LIMIT the exact MATCH
            self.list = [i for i in store.ids(self.phrase_match, self.threads, COUNT_LIST, channel)
                         if (i >> THREAD_SHIFT) in allowed]  # fmt: skip
            self.exact = True
        else:
            found = [i for i in store.ids(self.phrase_match, self.threads, store.sort_max + 1, channel)
                     if (i >> THREAD_SHIFT) in allowed]  # fmt: skip
            self.exact = store.table == "lit_full"
            if len(found) <= store.sort_max:
                self.list = sorted(found, key=store.key)
            else:
                self.list = found  # only counted; the order comes from the walk
                self.walk = True

    def ordered(self) -> Iterator[int]:
        if not self.walk:
            return iter(self.list)
        return self._walk()

    def _walk(self) -> Iterator[int]:
        s = self.store
        for tid in self.threads:
            gens = s.gens.get(tid, [])
            bounds = [first for first, _ in gens] + [SEQ_MASK]
            for i in range(len(gens) - 1, -1, -1):
                low, high = bounds[i], bounds[i + 1] - 1
                with s.pool.reading() as conn:
                    yield from (int(r[0]) for r in conn.execute(
                        f"SELECT rowid FROM {s.table} WHERE {s.table} MATCH ? AND rowid BETWEEN ? AND ?",
                        (self.phrase_match, (tid << THREAD_SHIFT) | low, (tid << THREAD_SHIFT) | high)))  # fmt: skip

    def count_beyond(self, seen: set[int]) -> tuple[int, bool]:
        """(candidates not in ``seen``, exact) — exact: every one is a real match."""
        return sum(1 for i in self.list if i not in seen), self.exact or (
            not self.walk and len(self.list) <= RECHECK_MAX
        )


def fast_match_spans(text: str, term: str, *, case_sensitive: bool) -> Iterator[tuple[int, int]]:
    """``threads.match_spans`` with a C-speed path for the case-insensitive pass: skip texts
    that hold no folded match, and find ASCII matches on the lowered text (same offsets)."""
    from recallbox.domains import threads as th

    if case_sensitive or not term:
        yield from _ORIGINAL_MATCH_SPANS(text, term, case_sensitive=case_sensitive)
        return
    if text.isascii() and term.isascii():
        low, needle = text.lower(), term.lower()
        at = low.find(needle)
        while at >= 0:
            if not text.startswith(term, at):
                yield at, len(term)
            at = low.find(needle, at + len(needle))
        return
    yield from _ORIGINAL_MATCH_SPANS(text, term, case_sensitive=False)
    del th


from recallbox.domains import threads as _threads  # noqa: E402

_ORIGINAL_MATCH_SPANS = _threads.match_spans


def search_literal_v3(store: V3Store, query: str, channel: str | None) -> str:
    from recallbox.domains import threads as th

    terms = th.query_terms(query)
    collector = th.LiteralCollector()
    plans: list[PlanV3] = []
    read: set[int] = set()

    def offer_rows(plan: PlanV3, ids: Iterator[int], cs: bool, until_full: bool) -> None:
        for message_key, message in _keyed(store, ids):
            read.add(message_key)
            for index, (name, text) in enumerate(th.message_fields(message)):
                collector.offer(message, index, name, text,
                                th.match_spans(text, plan.term, case_sensitive=cs))  # fmt: skip
            if until_full and collector.full:
                return

    for term in terms:
        if len(term) < literal.TRIGRAM_CHARS:
            for cs in (True, False) if term.lower() != term.upper() else (True,):
                rows, bounded = th._candidates(store, term, channel, cs)  # type: ignore[arg-type]
                collector.bounded_scan |= bounded
                for message in rows:
                    for index, (name, text) in enumerate(th.message_fields(message)):
                        collector.offer(message, index, name, text,
                                        th.match_spans(text, term, case_sensitive=cs))  # fmt: skip
                    if collector.done:
                        break
            continue
        plan = PlanV3(store, term, channel, count_only=store.lazy and collector.full)
        plans.append(plan)
        if collector.full:
            continue
        for cs in (True, False) if term.lower() != term.upper() else (True,):
            offer_rows(plan, plan.ordered(), cs, True)
            if collector.full:
                break
    beyond, exact = 0, True
    if collector.full and plans:
        # The count (DESIGN §3.2): exact when the rest is small enough to read (every candidate
        # offered again in both passes; offer() is idempotent), else a lower bound from exact
        # index candidates, else (superset candidates) what a bounded read verified.
        emitted = {k[0] for k, _ in collector.blocks}
        rest = [list(p.list) for p in plans]
        total = sum(len(r) for r in rest)
        if not any(p.walk for p in plans) and total <= COUNT_BUDGET + len(emitted) + CHUNK:
            for plan, ids in zip(plans, rest, strict=True):
                for cs in (True, False):
                    offer_rows(plan, iter(ids), cs, False)
        elif all(p.exact for p in plans):
            beyond = max(len(r) for r in rest) - len(emitted)
            exact = False
        else:
            budget = COUNT_BUDGET
            for plan, ids in zip(plans, rest, strict=True):
                chunk = ids[:budget]
                budget -= len(chunk)
                for cs in (True, False):
                    offer_rows(plan, iter(chunk), cs, False)
            exact = False
    out = collector.render(terms[0] if terms else "", th.scope_text(channel))
    if not exact:
        count = max(len(collector.not_shown), beyond)
        shown_count = (
            f"{th.LITERAL_COUNT_LIMIT}+" if count > th.LITERAL_COUNT_LIMIT else f"At least {count}"
        )
        notice = f"{shown_count} more hits not shown; narrow the query to see them."
        lines = [
            ln
            for ln in out.split("\n")
            if not ln.endswith("more hits not shown; narrow the query to see them.")
        ]
        lines.insert(len(lines) - 1, notice)
        out = "\n".join(lines)
    return out


def _keyed(store: V3Store, ids: Iterator[int]) -> Iterator[tuple[int, SearchableMessage]]:
    while chunk := list(islice(ids, CHUNK)):
        with store.pool.reading() as conn:
            by = {int(r[0]): r for r in conn.execute(V3_ROWS_SQL, (json.dumps(chunk),))}
        store.candidates += len(chunk)
        for rowid in chunk:
            if rowid in by:
                yield rowid, literal._row(by[rowid])


if __name__ == "__main__":
    main()
