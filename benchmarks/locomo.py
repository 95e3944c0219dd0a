"""LoCoMo retrieval benchmark for ``box.search`` (frozen protocol; see the README section).

Usage::

    PYTHONPATH=src python benchmarks/locomo.py [--data PATH] [--embedder minilm] [--out PATH]

Protocol (frozen):

* each conversation is one thread (channel ``locomo:<sample_id>``); each turn is one message
  with text ``"<speaker>: <text>"`` plus ``" [shares image: <blip_caption>]"`` when present; the
  first speaker is ``user``, the second ``assistant``; the speaker name (and the dialogue id) go
  in ``metadata``; the session date is ``created_at``;
* questions of categories 1–4 are scored; evidence ids are normalised (``D:11:26`` → ``D11:26``,
  ``D30:05`` → ``D30:5``, ``"D8:6; D9:17"`` → two ids); ids that name no turn are dropped, and a
  question left with none is skipped (both counted); category 5 (adversarial) is reported
  separately;
* each question is searched with ``box.search`` within its conversation's channel;
* turn level: recall@k is the fraction of evidence turns in the top k, any-hit@k whether at
  least one is; session level: the turn ranking collapsed to sessions (first appearance), and
  the same two measures over evidence sessions; k = 1, 5, 10; by category and overall;
* answer containment: the share of category 1–4 questions whose gold answer, lower-cased with
  punctuation removed, appears as a word sequence in the joined ``Hit.text`` of the top 5;
* modes: keyword only (``allow_embed=False``), vector only, hybrid (``box.search``); plus a
  plain ``bm25s`` baseline over the same turn texts, re-run here;
* since #21, also (same run, same questions): ``plain`` (the 0.6/0.4 hybrid without the
  ranking signals, FTS5's BM25 constants and the former candidate pools), ``structural`` (the
  signals without participant and date), ``--ablations`` (the full ranking without each
  component in turn) and ``--loo`` (each tuned weight at neighbouring values; per held-out
  conversation the value best on the other six is scored: the leave-one-conversation-out
  figure). ``session_any@k`` is the session-level any-hit measure (at least one evidence
  session among the first k sessions).

The dataset (CC BY-NC 4.0) is read from ``--data``; it is never shipped with recallbox.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import recallbox
from recallbox.domains import sessions, signal_inputs
from recallbox.embed_pass import EMBED_BATCH_SIZE
from recallbox.ranking import episodes, fusion, signals
from recallbox.ranking.bm25 import BM25_B, BM25_K1, SCOPED_BM25_B, SCOPED_BM25_K1
from recallbox.search import HYBRID_LEGS, LEG_KEYWORD, LEG_VECTOR, search
from recallbox.text import excerpt, fts_query
from recallbox.text.stopwords import STOPWORDS_EN

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "locomo.json"
KS = (1, 5, 10)
#: Depth of the turn ranking that is collapsed to sessions.
RANKING_DEPTH = 100
CONTAINMENT_K = 5
#: Measures kept per question in the JSONL file (the rest follow from ``top10``).
PER_QUESTION_KEYS = ("turn_r@10", "session_r@10", "turn_mrr", "contains@5")
SCORED_CATEGORIES = (1, 2, 3, 4)
ADVERSARIAL_CATEGORY = 5
CATEGORY_NAMES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_EVIDENCE_RE = re.compile(r"D:?(\d+):0*(\d+)")
_PUNCT = str.maketrans(dict.fromkeys(string.punctuation + "\u2018\u2019\u201c\u201d"))


# -- dataset ---------------------------------------------------------------------------------
@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str


@dataclass
class Question:
    qid: str
    conversation: str
    category: int
    question: str
    answer: str | None
    evidence: list[str]
    sessions: list[int] = field(default_factory=list)


def session_of(dia_id: str) -> int:
    return int(dia_id[1:].split(":")[0])


def normalise_evidence(raw: Sequence[str]) -> list[str]:
    ids: list[str] = []
    for item in raw:
        for a, b in _EVIDENCE_RE.findall(str(item)):
            dia_id = f"D{int(a)}:{int(b)}"
            if dia_id not in ids:
                ids.append(dia_id)
    return ids


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption")
    if caption:
        text += f" [shares image: {caption}]"
    return text


def load(
    path: Path,
) -> tuple[dict[str, list[Turn]], dict[str, list[dict[str, Any]]], list[Question], dict[str, int]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    turns: dict[str, list[Turn]] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    questions: list[Question] = []
    counts = {"questions": 0, "skipped": 0, "evidence_ids_dropped": 0}
    for conv in data:
        sample = conv["sample_id"]
        c = conv["conversation"]
        first, second = c["speaker_a"], c["speaker_b"]
        numbers = sorted(
            int(k.split("_")[1]) for k in c if re.fullmatch(r"session_\d+", k) and c[k]
        )
        turns[sample], rows[sample] = [], []
        for n in numbers:
            created = datetime.strptime(c[f"session_{n}_date_time"], DATE_FORMAT).replace(
                tzinfo=UTC
            )
            for t in c[f"session_{n}"]:
                turns[sample].append(Turn(t["dia_id"], n, t["speaker"], turn_text(t)))
                rows[sample].append(
                    {
                        "role": "user" if t["speaker"] == first else "assistant",
                        "content": turn_text(t),
                        "created_at": created,
                        "metadata": {"speaker": t["speaker"], "dia_id": t["dia_id"], "session": n},
                    }
                )
                assert t["speaker"] in (first, second)
        known = {t.dia_id for t in turns[sample]}
        for i, qa in enumerate(conv["qa"]):
            counts["questions"] += 1
            normalised = normalise_evidence(qa.get("evidence", []))
            evidence = [e for e in normalised if e in known]
            counts["evidence_ids_dropped"] += (
                len(normalised)
                - len(evidence)
                + (len(qa.get("evidence", [])) - len(normalised) if not normalised else 0)
            )
            if not evidence:
                counts["skipped"] += 1
                continue
            answer = qa.get("answer")
            questions.append(
                Question(
                    qid=f"{sample}:{i}",
                    conversation=sample,
                    category=int(qa["category"]),
                    question=str(qa["question"]),
                    answer=None if answer is None else str(answer),
                    evidence=evidence,
                    sessions=sorted({session_of(e) for e in evidence}),
                )
            )
    return turns, rows, questions, counts


# -- metrics ---------------------------------------------------------------------------------
def normalise_answer(text: str) -> list[str]:
    return text.lower().translate(_PUNCT).split()


def contains_words(haystack: list[str], needle: list[str]) -> bool:
    if not needle:
        return False
    width = len(needle)
    return any(haystack[i : i + width] == needle for i in range(len(haystack) - width + 1))


def collapse(ranking: Sequence[str]) -> list[int]:
    out: list[int] = []
    for dia_id in ranking:
        s = session_of(dia_id)
        if s not in out:
            out.append(s)
    return out


def score_question(q: Question, ranking: list[str], texts: list[str]) -> dict[str, Any]:
    evidence, ev_sessions = set(q.evidence), set(q.sessions)
    session_rank = collapse(ranking)
    result: dict[str, Any] = {}
    for k in KS:
        top = set(ranking[:k])
        result[f"turn_r@{k}"] = len(evidence & top) / len(evidence)
        result[f"turn_any@{k}"] = float(bool(evidence & top))
        stop = set(session_rank[:k])
        result[f"session_r@{k}"] = len(ev_sessions & stop) / len(ev_sessions)
        result[f"session_any@{k}"] = float(bool(ev_sessions & stop))
    first = next((rank for rank, dia_id in enumerate(ranking, 1) if dia_id in evidence), 0)
    result["turn_mrr"] = 1.0 / first if first else 0.0
    if q.answer is not None:
        joined = normalise_answer(" ".join(texts[:CONTAINMENT_K]))
        result["contains@5"] = float(contains_words(joined, normalise_answer(q.answer)))
    return result


def aggregate(per_question: list[dict[str, Any]], categories: Sequence[int]) -> dict[str, Any]:
    chosen = [r for r in per_question if r["category"] in categories]
    if not chosen:
        return {"n": 0}
    keys = [k for k in chosen[0]["metrics"] if all(k in r["metrics"] for r in chosen)]
    out: dict[str, Any] = {"n": len(chosen)}
    for key in keys:
        out[key] = round(100.0 * statistics.fmean(r["metrics"][key] for r in chosen), 2)
    return out


def summarise(per_question: list[dict[str, Any]]) -> dict[str, Any]:
    summary = {"overall_1_4": aggregate(per_question, SCORED_CATEGORIES)}
    for category in (*SCORED_CATEGORIES, ADVERSARIAL_CATEGORY):
        summary[f"category_{category}_{CATEGORY_NAMES[category]}"] = aggregate(
            per_question, (category,)
        )
    return summary


def latency(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)

    def pct(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)

    return {"mean": round(statistics.fmean(ms), 3), "p50": pct(0.50), "p95": pct(0.95)}


# -- runs ------------------------------------------------------------------------------------
Searcher = Callable[[Question], tuple[list[str], list[str]]]


def run_mode(name: str, questions: list[Question], searcher: Searcher) -> dict[str, Any]:
    per_question: list[dict[str, Any]] = []
    times: list[float] = []
    cpu: list[float] = []
    for q in questions:
        start, start_cpu = time.perf_counter(), time.process_time()
        ranking, texts = searcher(q)
        times.append((time.perf_counter() - start) * 1000.0)
        cpu.append((time.process_time() - start_cpu) * 1000.0)
        per_question.append(
            {
                "qid": q.qid,
                "category": q.category,
                "top10": ranking[:10],
                "metrics": score_question(q, ranking, texts),
            }
        )
    print(f"  {name}: done, p50 {latency(times)['p50']} ms", file=sys.stderr)
    return {
        "summary": summarise(per_question),
        "ms_per_query": latency(times),
        "cpu_ms_per_query": latency(cpu),
        "questions": per_question,
    }


class SignalStepTimer:
    """Times the ranking-signal step of ``box.search`` (``signal_scores``: its reads and its
    arithmetic) while installed — a measurement hook of this benchmark only."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []
        self._original = signal_inputs.signal_scores

    def __enter__(self) -> SignalStepTimer:
        original = self._original

        def timed(*args: Any, **kwargs: Any) -> Any:
            start, start_cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.wall.append((time.perf_counter() - start) * 1000.0)
                self.cpu.append((time.process_time() - start_cpu) * 1000.0)

        setattr(sessions, "signal_scores", timed)  # noqa: B010 - the hook replaces it
        return self

    def __exit__(self, *exc: object) -> None:
        setattr(sessions, "signal_scores", self._original)  # noqa: B010


def box_searcher(
    box: recallbox.Box,
    id_to_dia: dict[str, str],
    *,
    legs: Sequence[str],
    allow_embed: bool,
    ranking: sessions.Ranking | None = None,
) -> Searcher:
    """``box.search`` (``ranking=None``: the shipped default, through ``Box.search`` itself), or
    the same path with another sessions ranking (``search(using=SessionsDomain(ranking))``)."""
    using = None if ranking is None else sessions.SessionsDomain(ranking)

    def searcher(q: Question) -> tuple[list[str], list[str]]:
        channel = f"locomo:{q.conversation}"
        if using is None and tuple(legs) == HYBRID_LEGS and allow_embed:
            hits = box.search(q.question, channel=channel, limit=RANKING_DEPTH)
        else:
            hits = search(
                box.store,
                box.embedder,
                q.question,
                channel=channel,
                limit=RANKING_DEPTH,
                allow_embed=allow_embed,
                legs=legs,
                using=using,
            )
        return [id_to_dia[h.id] for h in hits], [h.text for h in hits]

    return searcher


BENCH_EXTRA_HINT = "pip install -e '.[bench]' (`make bench-locomo` does it)"
"""How to install the ``bench`` extra (``bm25s``, the baseline scored at the end of a run)."""


def require_bm25s() -> None:
    """Exit with a clear message unless ``bm25s`` imports: the baseline runs last, after the
    long part of a run, so a missing extra must stop the run before it starts.

    Raises:
        SystemExit: ``bm25s`` (the ``bench`` extra) does not import.
    """
    try:
        import bm25s  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"benchmarks/locomo.py needs the bm25s baseline of the `bench` extra ({exc}); "
            f"install it with: {BENCH_EXTRA_HINT}"
        ) from exc


def bm25s_searcher(turns: dict[str, list[Turn]]) -> tuple[Searcher, float]:
    import bm25s

    start = time.perf_counter()
    indexes: dict[str, Any] = {}
    for sample, conv_turns in turns.items():
        retriever = bm25s.BM25()
        retriever.index(
            bm25s.tokenize([t.text for t in conv_turns], stopwords="en", show_progress=False),
            show_progress=False,
        )
        indexes[sample] = retriever
    index_s = time.perf_counter() - start

    def searcher(q: Question) -> tuple[list[str], list[str]]:
        conv_turns = turns[q.conversation]
        retriever = indexes[q.conversation]
        tokens = bm25s.tokenize([q.question], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return [], []
        k = min(RANKING_DEPTH, len(conv_turns))
        docs, scores = retriever.retrieve(tokens, k=k, show_progress=False)
        chosen = [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
        return [conv_turns[i].dia_id for i in chosen], [conv_turns[i].text for i in chosen]

    return searcher, index_s


def write_per_question(path: Path, results: dict[str, dict[str, Any]]) -> None:
    """One compact JSON line per (mode, question): its top 10 turns and main measures."""
    with path.open("w", encoding="utf-8") as out:
        for mode, result in results.items():
            for row in result["questions"]:
                metrics = {
                    k: round(v, 4) for k, v in row["metrics"].items() if k in PER_QUESTION_KEYS
                }
                line = {"mode": mode, **{k: row[k] for k in ("qid", "category", "top10")}}
                out.write(json.dumps({**line, **metrics}, separators=(",", ":")) + "\n")


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def with_weights(**change: float) -> sessions.Ranking:
    """The shipped ranking with some signal weights changed."""
    return replace(sessions.DEFAULT_RANKING, weights=replace(signals.DEFAULT_WEIGHTS, **change))


#: The ablation rows: the full ranking without one component each.
ABLATIONS: dict[str, Callable[[], sessions.Ranking]] = {
    "no_context": lambda: with_weights(context=0.0),
    "no_neighbour": lambda: with_weights(neighbour=0.0),
    "no_episode": lambda: with_weights(episode=0.0),
    "no_episode_doc": lambda: with_weights(episode_doc=0.0),
    "no_participant": lambda: with_weights(participant=0.0),
    "no_date": lambda: with_weights(date=0.0),
    "bm25_b_0.75": lambda: replace(sessions.DEFAULT_RANKING, bm25_b=BM25_B),
    "pools_200": lambda: replace(
        sessions.DEFAULT_RANKING,
        keyword_pool=sessions.PLAIN_CANDIDATES,
        vector_pool=sessions.PLAIN_CANDIDATES,
    ),
}
#: The tuned weights and the values the LOO run tries for each (the shipped value among them).
LOO_GRID: dict[str, tuple[float, ...]] = {
    "context": (0.4, signals.WEIGHT_CONTEXT, 0.8),
    "neighbour": (0.4, signals.WEIGHT_NEIGHBOUR, 0.8),
    "episode": (0.4, signals.WEIGHT_EPISODE, 0.8),
    "episode_doc": (0.2, signals.WEIGHT_EPISODE_DOC, 0.6),
    "participant": (0.2, signals.WEIGHT_PARTICIPANT, 0.4),
    "date": (0.3, signals.WEIGHT_DATE, 0.7),
    "bm25_b": (0.1, SCOPED_BM25_B, 0.5),
}


def loo_ranking(name: str, value: float) -> sessions.Ranking:
    if name == "bm25_b":
        return replace(sessions.DEFAULT_RANKING, bm25_b=value)
    return with_weights(**{name: value})


#: The measure each tuned constant is chosen by in the LOO folds (turn R@10 unless named).
LOO_CRITERION: dict[str, str] = {"episode_doc": "session_r@10"}


def leave_one_out(
    per_value: dict[float, list[dict[str, Any]]],
    conversation_of: dict[str, str],
    criterion: str = "turn_r@10",
) -> dict[str, Any]:
    """Per held-out conversation, the value with the best ``criterion`` on the others, scored
    on it; the LOO figures are the means over all questions of those held-out scores."""
    values = list(per_value)
    scored = [r for r in per_value[values[0]] if r["category"] in SCORED_CATEGORIES]
    conversations = sorted({conversation_of[r["qid"]] for r in scored})

    def table(metric: str) -> dict[float, dict[str, float]]:
        return {v: {r["qid"]: r["metrics"][metric] for r in per_value[v]} for v in values}

    by = table(criterion)
    measures = {m: table(m) for m in ("turn_r@10", "session_r@10")}
    held: dict[str, list[float]] = {m: [] for m in measures}
    chosen: dict[str, float] = {}
    for conv in conversations:
        inside = [r["qid"] for r in scored if conversation_of[r["qid"]] != conv]
        outside = [r["qid"] for r in scored if conversation_of[r["qid"]] == conv]
        best = max(values, key=lambda v: (statistics.fmean(by[v][q] for q in inside), -abs(v)))
        chosen[conv] = best
        for m, t in measures.items():
            held[m].extend(t[best][q] for q in outside)
    return {
        "criterion": criterion,
        "values": {
            str(v): {
                m: round(100.0 * statistics.fmean(t[v][r["qid"]] for r in scored), 2)
                for m, t in measures.items()
            }
            for v in values
        },
        "folds_chose": chosen,
        **{f"loo_{m}": round(100.0 * statistics.fmean(h), 2) for m, h in held.items()},
    }


def parameters(box: recallbox.Box) -> dict[str, Any]:
    model = box.embedder
    return {
        "embedder": None if model is None else {"model_id": model.model_id, "dim": model.dim},
        "ranking_depth": RANKING_DEPTH,
        "containment_k": CONTAINMENT_K,
        "constants": {
            "BM25_K1": BM25_K1,
            "BM25_B": BM25_B,
            "HYBRID_VECTOR_WEIGHT": fusion.HYBRID_VECTOR_WEIGHT,
            "HYBRID_KEYWORD_WEIGHT": fusion.HYBRID_KEYWORD_WEIGHT,
            "THRESHOLD_SESSIONS": fusion.THRESHOLD_SESSIONS,
            "TIE_RELATIVE_EPSILON": fusion.TIE_RELATIVE_EPSILON,
            "KEYWORD_CANDIDATES": sessions.KEYWORD_CANDIDATES,
            "VECTOR_CANDIDATES": sessions.VECTOR_CANDIDATES,
            "SCOPED_BM25_K1": SCOPED_BM25_K1,
            "SCOPED_BM25_B": SCOPED_BM25_B,
            "EPISODE_GAP_S": episodes.EPISODE_GAP.total_seconds(),
            "NEIGHBOUR_WINDOW": episodes.NEIGHBOUR_WINDOW,
            "WEIGHT_CONTEXT": signals.WEIGHT_CONTEXT,
            "CONTEXT_PREVIOUS_SHARE": signals.CONTEXT_PREVIOUS_SHARE,
            "CONTEXT_NEXT_SHARE": signals.CONTEXT_NEXT_SHARE,
            "WEIGHT_NEIGHBOUR": signals.WEIGHT_NEIGHBOUR,
            "WEIGHT_EPISODE": signals.WEIGHT_EPISODE,
            "WEIGHT_EPISODE_DOC": signals.WEIGHT_EPISODE_DOC,
            "EPISODE_DOC_VECTOR_SHARE": signals.EPISODE_DOC_VECTOR_SHARE,
            "EPISODE_DOC_K1": signals.EPISODE_DOC_K1,
            "EPISODE_SCAN_RADIUS": signal_inputs.EPISODE_SCAN_RADIUS,
            "WEIGHT_PARTICIPANT": signals.WEIGHT_PARTICIPANT,
            "PARTICIPANT_OTHER_SHARE": signals.PARTICIPANT_OTHER_SHARE,
            "WEIGHT_DATE": signals.WEIGHT_DATE,
            "DATE_TOLERANCE_DAYS": signals.DATE_TOLERANCE_DAYS,
            "MAX_QUERY_TERMS": fts_query.MAX_QUERY_TERMS,
            "STOPWORDS_EN": len(STOPWORDS_EN),
            "HIT_TEXT_MAX_CHARS": excerpt.HIT_TEXT_MAX_CHARS,
            "HIT_TEXT_LEAD_CHARS": excerpt.HIT_TEXT_LEAD_CHARS,
            "EMBED_BATCH_SIZE": EMBED_BATCH_SIZE,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--embedder", default="minilm", help="minilm, multilingual or hash")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--db", type=Path, default=None, help="reuse/keep this database")
    parser.add_argument("--ablations", action="store_true", help="also each component removed")
    parser.add_argument("--loo", action="store_true", help="also the leave-one-out grid")
    args = parser.parse_args(argv)
    require_bm25s()  # before the long run, not at its very end

    turns, rows, questions, counts = load(args.data)
    db = args.db or Path(tempfile.mkdtemp(prefix="locomo-")) / "locomo.db"
    fresh = not db.exists()
    with recallbox.open(db, embedder=args.embedder) as box:
        timing: dict[str, float] = {}
        if fresh:
            start = time.perf_counter()
            for sample, conv_rows in rows.items():
                box.append_many(f"locomo:{sample}", conv_rows)
            timing["index_text_s"] = round(time.perf_counter() - start, 3)
        start = time.perf_counter()
        embedded = box.embed_all()
        timing["index_vectors_s"] = round(time.perf_counter() - start, 3)
        timing["vectors_written"] = embedded
        timing["db_bytes"] = sum(
            p.stat().st_size for p in db.parent.glob(db.name + "*") if p.is_file()
        )
        # scoring only: the benchmark maps hits back to LoCoMo's dialogue ids; the ranking
        # never reads metadata
        id_to_dia = {
            m.id: m.metadata["dia_id"] for sample in rows for m in box.messages(f"locomo:{sample}")
        }
        print(f"indexed {len(id_to_dia)} turns; {len(questions)} questions", file=sys.stderr)
        scored = [q for q in questions if q.category in SCORED_CATEGORIES]

        def hybrid(ranking: sessions.Ranking | None) -> Searcher:
            return box_searcher(box, id_to_dia, legs=HYBRID_LEGS, allow_embed=True, ranking=ranking)

        modes: dict[str, tuple[Searcher, list[Question]]] = {
            "keyword": (
                box_searcher(box, id_to_dia, legs=(LEG_KEYWORD,), allow_embed=False),
                questions,
            ),
            "vector": (
                box_searcher(box, id_to_dia, legs=(LEG_VECTOR,), allow_embed=True),
                questions,
            ),
            "plain": (hybrid(sessions.PLAIN_RANKING), questions),
            "structural": (hybrid(with_weights(participant=0.0, date=0.0)), questions),
            "hybrid": (hybrid(None), questions),
        }
        if args.ablations:
            modes.update({name: (hybrid(make()), scored) for name, make in ABLATIONS.items()})
        results: dict[str, dict[str, Any]] = {}
        step = SignalStepTimer()
        for name, (fn, qs) in modes.items():
            if name == "hybrid":
                with step:
                    results[name] = run_mode(name, qs, fn)
            else:
                results[name] = run_mode(name, qs, fn)
        loo: dict[str, Any] = {}
        if args.loo:
            conversation_of = {q.qid: q.conversation for q in questions}
            shipped = results["hybrid"]["questions"]
            for name, grid in LOO_GRID.items():
                per_value: dict[float, list[dict[str, Any]]] = {}
                for value in grid:
                    is_shipped = loo_ranking(name, value) == sessions.DEFAULT_RANKING
                    per_value[value] = (
                        shipped
                        if is_shipped
                        else run_mode(
                            f"loo {name}={value}", scored, hybrid(loo_ranking(name, value))
                        )["questions"]
                    )
                criterion = LOO_CRITERION.get(name, "turn_r@10")
                loo[name] = leave_one_out(per_value, conversation_of, criterion)
                print(f"  LOO {name}: {loo[name]}", file=sys.stderr)
        params = parameters(box)
    bm25s_fn, bm25s_index_s = bm25s_searcher(turns)
    results["bm25s"] = run_mode("bm25s", questions, bm25s_fn)
    timing["bm25s_index_s"] = round(bm25s_index_s, 3)

    scored = [q for q in questions if q.category in SCORED_CATEGORIES]
    report: dict[str, Any] = {
        "benchmark": "locomo",
        "commit": git_commit(),
        "run_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": {
            "path": str(args.data.name),
            "sha256": hashlib.sha256(args.data.read_bytes()).hexdigest(),
            "conversations": len(turns),
            "turns": sum(len(t) for t in turns.values()),
            "questions_total": counts["questions"],
            "questions_scored_1_4": len(scored),
            "questions_category_5": len(questions) - len(scored),
            "questions_skipped_no_evidence": counts["skipped"],
            "evidence_ids_dropped": counts["evidence_ids_dropped"],
        },
        "parameters": params,
        "timing": timing,
        "metrics": {name: r["summary"] for name, r in results.items()},
        "latency_ms": {name: r["ms_per_query"] for name, r in results.items()},
        "cpu_ms": {name: r["cpu_ms_per_query"] for name, r in results.items()},
        "signal_step_ms": {"wall": latency(step.wall), "cpu": latency(step.cpu)},
        "leave_one_out": loo,
    }
    report["per_question_file"] = args.out.with_suffix(".questions.jsonl").name
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    write_per_question(args.out.with_suffix(".questions.jsonl"), results)
    for name in results:
        o = report["metrics"][name]["overall_1_4"]
        print(
            f"{name:8s} turn R@1/5/10 {o['turn_r@1']:5.1f} {o['turn_r@5']:5.1f} {o['turn_r@10']:5.1f}"
            f"  session R@10 {o['session_r@10']:5.1f} any {o['session_any@10']:5.1f}"
            f"  contains@5 {o.get('contains@5', 0):5.1f}"
            f"  p50 {report['latency_ms'][name]['p50']} ms",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
