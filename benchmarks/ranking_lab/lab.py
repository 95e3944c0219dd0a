"""Experiment only (#21): an offline numpy mirror of ``box.search`` over the cached features.

It reproduces the shipped path (candidate pools, scoped BM25, min-max keyword leg, 0.6/0.4
fusion, threshold) and adds candidate signals, so weights can be grid-searched quickly and
checked with leave-one-conversation-out. Final figures come from ``benchmarks/locomo.py``.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from recallbox.text import dates as qdates
from recallbox.text import participants as qpart

KW_POOL = 200
VEC_POOL = 200
THRESHOLD = 0.05
IDF_FLOOR = 1e-6


@dataclass
class Conv:
    name: str
    ids: list[str]
    dia: list[str]
    seq: np.ndarray
    created: np.ndarray
    role: list[str]
    content: list[str]
    doclen: np.ndarray
    T: np.ndarray
    C: np.ndarray
    episode: np.ndarray  # episode index per message
    author: list[str]  # participant key per message
    ep_members: list[np.ndarray] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Q:
    qid: str
    conv: Conv
    category: int
    question: str
    answer: str | None
    evidence: set[int]  # message indices
    ev_sessions: set[int]
    qv: np.ndarray
    rows: int
    tokens: int
    df: np.ndarray
    m_idx: np.ndarray
    m_len: np.ndarray
    m_freq: np.ndarray  # (matches, phrases)
    cos_t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cos_c: np.ndarray = field(default_factory=lambda: np.zeros(0))
    date_window: Any = None
    participant: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def episodes_of(created: np.ndarray, gap: float = 3600.0) -> np.ndarray:
    out = np.zeros(len(created), dtype=np.int64)
    e = 0
    for i in range(1, len(created)):
        if created[i] - created[i - 1] > gap:
            e += 1
        out[i] = e
    return out


def load(path: Path) -> tuple[dict[str, Conv], list[Q]]:
    meta = json.loads(path.with_suffix(".json").read_text())
    arr = np.load(path.with_suffix(".npz"))
    convs: dict[str, Conv] = {}
    for name, c in meta["conversations"].items():
        created = np.asarray(c["created_at"], dtype=np.float64)
        ep = episodes_of(created)
        conv = Conv(
            name=name,
            ids=c["ids"],
            dia=c["dia"],
            seq=np.asarray(c["seq"]),
            created=created,
            role=c["role"],
            content=c["content"],
            doclen=np.asarray(c["doclen"], dtype=np.float64),
            T=arr[f"{name}:T"],
            C=arr[f"{name}:C"],
            episode=ep,
            author=[
                qpart.participant_of(r, t) for r, t in zip(c["role"], c["content"], strict=False)
            ],
        )
        conv.ep_members = [np.flatnonzero(ep == e) for e in range(ep.max() + 1)]
        convs[name] = conv
    qs: list[Q] = []
    for q in meta["questions"]:
        if q["category"] not in (1, 2, 3, 4):
            continue
        conv = convs[q["conversation"]]
        index = {d: i for i, d in enumerate(conv.dia)}
        ev = {index[e] for e in q["evidence"]}
        sc = q["scope"]
        matches = sc["matches"]
        nphr = len(q["phrases"])
        item = Q(
            qid=q["qid"],
            conv=conv,
            category=q["category"],
            question=q["question"],
            answer=q["answer"],
            evidence=ev,
            ev_sessions={int(conv.dia[i][1:].split(":")[0]) for i in ev},
            qv=arr[f"q:{q['qid']}"],
            rows=sc["rows"],
            tokens=sc["tokens"],
            df=np.asarray(sc["df"], dtype=np.float64),
            m_idx=np.asarray([m[0] for m in matches], dtype=np.int64),
            m_len=np.asarray([m[1] for m in matches], dtype=np.float64),
            m_freq=np.asarray([m[2] for m in matches], dtype=np.float64).reshape(-1, nphr),
        )
        item.cos_t = conv.T @ item.qv
        item.cos_c = conv.C @ item.qv
        newest = datetime.fromtimestamp(float(conv.created.max()), UTC)
        item.date_window = qdates.query_dates(q["question"], now=newest)
        names = sorted({a for a in conv.author if a})
        item.participant = qpart.query_participant(q["question"], names)
        item.extra["part"] = np.asarray(
            [a == item.participant for a in conv.author], dtype=np.float64
        )
        others = set()
        if item.participant:
            rest = [a for a in names if a != item.participant]
            rest_q = item.question.replace(item.participant, " ")
            while (o := qpart.query_participant(rest_q, rest)) is not None:
                others.add(o)
                rest.remove(o)
        item.extra["part_other"] = np.asarray([a in others for a in conv.author], dtype=float)
        if item.date_window:
            days = [datetime.fromtimestamp(float(t), UTC).date() for t in conv.created]
            item.extra["dist"] = np.asarray(
                [qdates.day_distance(d, item.date_window) for d in days], dtype=np.float64
            )
        qs.append(item)
    return convs, qs


def bm25(q: Q, k1: float, b: float) -> np.ndarray:
    """Scoped BM25 of every message of q's conversation (0 for non-matching)."""
    n = len(q.conv.ids)
    out = np.zeros(n)
    if not len(q.m_idx) or not q.rows:
        return out
    idf = np.log((q.rows - q.df + 0.5) / (q.df + 0.5))
    idf = np.where(idf > 0, idf, IDF_FLOOR)
    avgdl = q.tokens / q.rows
    norm = k1 * (1 - b + b * q.m_len / avgdl)
    f = q.m_freq
    s = (idf[None, :] * (f * (k1 + 1)) / (f + norm[:, None])).sum(axis=1)
    out[q.m_idx] = s
    return out


def episode_bm25(q: Q, k1: float, b: float) -> np.ndarray:
    """BM25 of each episode as one document (df over episodes), per episode."""
    conv = q.conv
    ne = len(conv.ep_members)
    if not len(q.m_idx):
        return np.zeros(ne)
    freq = np.zeros((ne, q.m_freq.shape[1]))
    np.add.at(freq, conv.episode[q.m_idx], q.m_freq)
    lens = np.asarray([conv.doclen[m].sum() for m in conv.ep_members])
    df = (freq > 0).sum(axis=0)
    idf = np.log((ne - df + 0.5) / (df + 0.5))
    idf = np.where(idf > 0, idf, IDF_FLOOR)
    norm = k1 * (1 - b + b * lens / lens.mean())
    return (idf[None, :] * (freq * (k1 + 1)) / (freq + norm[:, None])).sum(axis=1)


def minmax(x: np.ndarray) -> np.ndarray:
    if not len(x):
        return x
    hi, lo = x.max(), x.min()
    if hi <= 0:
        return np.zeros_like(x)
    if hi - lo <= 1e-9 * hi:
        return np.ones_like(x)
    return (x - lo) / (hi - lo)


def top_indices(x: np.ndarray, k: int) -> np.ndarray:
    if len(x) <= k:
        return np.arange(len(x))
    return np.argpartition(-x, k)[:k]


def metrics(q: Q, ranking: np.ndarray) -> dict[str, float]:
    top10 = set(ranking[:10].tolist())
    top5 = set(ranking[:5].tolist())
    top1 = set(ranking[:1].tolist())
    ev = q.evidence
    sess: list[int] = []
    for i in ranking:
        s = int(q.conv.dia[i][1:].split(":")[0])
        if s not in sess:
            sess.append(s)
        if len(sess) >= 10:
            break
    return {
        "r1": len(ev & top1) / len(ev),
        "r5": len(ev & top5) / len(ev),
        "r10": len(ev & top10) / len(ev),
        "s10": len(q.ev_sessions & set(sess[:10])) / len(q.ev_sessions),
        "sany10": float(bool(q.ev_sessions & set(sess[:10]))),
    }


def ranking_of(score: np.ndarray, cand: np.ndarray) -> np.ndarray:
    order = np.lexsort((cand, -score))
    return cand[order]


def mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    return {k: 100.0 * float(np.mean([r[k] for r in rows])) for k in rows[0]}


def by_category(qs: list[Q], rows: list[dict[str, float]]) -> dict[int, float]:
    out = {}
    for c in (1, 2, 3, 4):
        sel = [r["r10"] for q, r in zip(qs, rows, strict=False) if q.category == c]
        out[c] = 100.0 * float(np.mean(sel))
    return out


def fmt(name: str, qs: list[Q], rows: list[dict[str, float]]) -> str:
    m = mean_metrics(rows)
    c = by_category(qs, rows)
    return (
        f"{name:40s} R@1 {m['r1']:5.1f} R@5 {m['r5']:5.1f} R@10 {m['r10']:5.1f} | "
        f"mh {c[1]:5.1f} tmp {c[2]:5.1f} od {c[3]:5.1f} sh {c[4]:5.1f} | "
        f"S@10 {m['s10']:5.1f} any {m['sany10']:5.1f}"
    )


# -- the scorer ------------------------------------------------------------------------------
@dataclass
class Params:
    k1: float = 1.2
    b: float = 0.75
    w_vec: float = 0.6
    w_kw: float = 0.4
    w_ctx: float = 0.0
    w_nb: float = 0.0
    nb_window: int = 2
    nb_source: str = "base"  # base | full (base + ctx) | local (+ participant, date)
    w_ep: float = 0.0
    ep_kind: str = "max"  # max | topN (mean of the best N)
    ep_source: str = "base"  # base | local
    ep_vec: float = 0.6
    w_epd: float = 0.0  # the episode-as-document prior, beside the w_ep aggregate
    w_epk: float = 0.0  # keyword evidence of the episode from its candidates' frequencies
    epk_kind: str = "sat"  # sat (BM25 saturation of summed freqs, b = 0) | sum (Σ s)
    epk_b: float = 0.0
    epk_k1: float = 0.0  # 0: the BM25 k1
    w_part: float = 0.0
    w_date: float = 0.0
    date_tol: int = 3
    date_relative: bool = True
    ctx_kind: str = "embed"  # embed (stored context vectors) | sum (normalize(e + α·prev + β·next))
    ctx_alpha: float = 1.0
    ctx_beta: float = 0.0
    nb_prev: float = 1.0  # multiplier of the previous neighbours (next = 1)
    ctx_pair: bool = False  # context cosine = max over the pairs holding the message
    part_others: float = 0.0  # weight of a later-mentioned participant, relative
    div: float = 0.0  # penalty per earlier higher-ranked hit of the same episode
    signal_top: int = 0  # only the best N by base get signals (0: all)
    date_pool: int = 0  # messages within the query's dates added to the candidates
    kw_pool: int = KW_POOL
    vec_pool: int = VEC_POOL


@dataclass
class Prepared:
    cand: np.ndarray
    matched: np.ndarray
    k: np.ndarray
    v: np.ndarray
    vc: np.ndarray


_prep_cache: dict[tuple[str, float, float, int, int], Prepared] = {}
_epdoc_cache: dict[tuple[str, float, float, float], np.ndarray] = {}


def prepare(q: Q, p: Params) -> Prepared:
    key = (
        q.qid,
        p.k1,
        p.b,
        p.kw_pool,
        p.vec_pool,
        p.ctx_kind,
        p.ctx_alpha,
        p.ctx_beta,
        p.date_pool,
        p.date_tol,
    )
    hit = _prep_cache.get(key)
    if hit is not None:
        return hit
    s = bm25(q, p.k1, p.b)
    matched_idx = np.flatnonzero(s > 0)
    kw = matched_idx[top_indices(s[matched_idx], p.kw_pool)] if len(matched_idx) else matched_idx
    vec = top_indices(q.cos_t, p.vec_pool)
    parts = [kw, vec]
    if p.date_pool and q.date_window:
        near = np.flatnonzero(q.extra["dist"] <= p.date_tol)
        parts.append(near[top_indices(q.cos_t[near], p.date_pool)] if len(near) else near)
    cand = np.unique(np.concatenate(parts))
    k = minmax(s[cand]) if len(q.m_idx) else np.zeros(len(cand))
    out = Prepared(
        cand=cand,
        matched=s[cand] > 0,
        k=k,
        v=np.maximum(0.0, q.cos_t[cand]),
        vc=np.maximum(0.0, (q.cos_c if p.ctx_kind == "embed" else sum_context(q, p, cand))[cand]),
    )
    _prep_cache[key] = out
    return out


def sum_context(q: Q, p: Params, cand: np.ndarray | None = None) -> np.ndarray:
    """cos(q, normalize(e + α·e_prev + β·e_next)) from cosines and pair dot products."""
    conv = q.conv
    d = conv.extra
    if "tp" not in d:
        T = conv.T
        same = conv.episode[1:] == conv.episode[:-1]
        n = len(T)
        d["hp"] = np.zeros(n, bool)
        d["hp"][1:] = same
        d["hn"] = np.zeros(n, bool)
        d["hn"][:-1] = same
        d["tp"] = np.zeros(n)
        d["tp"][1:] = (T[1:] * T[:-1]).sum(1)
        d["tn"] = np.zeros(n)
        d["tn"][:-1] = d["tp"][1:]
        d["pn"] = np.zeros(n)
        d["pn"][1:-1] = (T[2:] * T[:-2]).sum(1)
    a = p.ctx_alpha * d["hp"]
    b = p.ctx_beta * d["hn"]
    ct = q.cos_t
    cp = np.zeros_like(ct)
    cp[1:] = ct[:-1]
    cn = np.zeros_like(ct)
    cn[:-1] = ct[1:]
    num = ct + a * cp + b * cn
    if p.ctx_kind == "lin":
        return num / (1 + a + b)
    if p.ctx_kind == "lincand":  # neighbours outside the candidate set are missing
        known = np.zeros(len(ct), bool)
        known[cand] = True
        kp = np.zeros(len(ct), bool)
        kp[1:] = known[:-1]
        kn = np.zeros(len(ct), bool)
        kn[:-1] = known[1:]
        a = a * kp
        b = b * kn
        return (ct + a * cp + b * cn) / (1 + a + b)
    if p.ctx_kind in ("lin0", "linmin"):  # neighbours outside the candidate set: 0 or floor
        known = np.zeros(len(ct), bool)
        known[cand] = True
        floor = (
            0.0 if p.ctx_kind == "lin0" else float(np.sort(ct)[::-1][min(p.vec_pool, len(ct)) - 1])
        )
        kp = np.zeros(len(ct), bool)
        kp[1:] = known[:-1]
        kn = np.zeros(len(ct), bool)
        kn[:-1] = known[1:]
        cp = np.where(kp, cp, floor)
        cn = np.where(kn, cn, floor)
        return (ct + a * cp + b * cn) / (1 + a + b)
    norm2 = 1 + a * a + b * b + 2 * a * d["tp"] + 2 * b * d["tn"] + 2 * a * b * d["pn"]
    return num / np.sqrt(np.maximum(norm2, 1e-12))


def episode_doc_scores(q: Q, p: Params) -> np.ndarray:
    key = (q.qid, p.k1, p.b, p.ep_vec)
    hit = _epdoc_cache.get(key)
    if hit is not None:
        return hit
    conv = q.conv
    cos = np.zeros(len(conv.ep_members))
    for e, members in enumerate(conv.ep_members):
        mean = conv.T[members].mean(axis=0)
        cos[e] = max(0.0, float(mean @ q.qv) / (float(np.linalg.norm(mean)) or 1.0))
    kw = minmax(episode_bm25(q, p.k1, p.b))
    out = p.ep_vec * cos + (1 - p.ep_vec) * kw
    _epdoc_cache[key] = out
    return out


def episode_keyword(q: Q, p: Params, cand: np.ndarray) -> np.ndarray:
    """Per episode, keyword evidence from the frequencies of the candidates it holds."""
    conv = q.conv
    ne = len(conv.ep_members)
    if not len(q.m_idx):
        return np.zeros(ne)
    inside = np.isin(q.m_idx, cand)
    idx, freq, lens = q.m_idx[inside], q.m_freq[inside], q.m_len[inside]
    if p.epk_kind == "sum":
        s = bm25(q, p.k1, p.b)
        agg = np.zeros(ne)
        np.add.at(agg, conv.episode[idx], s[idx])
        return minmax(agg)
    F = np.zeros((ne, freq.shape[1]))
    np.add.at(F, conv.episode[idx], freq)
    L = np.zeros(ne)
    np.add.at(L, conv.episode[idx], lens)
    idf = np.log((q.rows - q.df + 0.5) / (q.df + 0.5))
    idf = np.where(idf > 0, idf, IDF_FLOOR)
    avg = L[L > 0].mean() if (L > 0).any() else 1.0
    k1 = p.epk_k1 or p.k1
    norm = k1 * (1 - p.epk_b + p.epk_b * L / avg)
    sc = (idf[None, :] * F * (k1 + 1) / (F + norm[:, None] + 1e-12)).sum(axis=1)
    return minmax(sc)


def score(q: Q, p: Params, pre: Prepared | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(candidate indices, final scores) after the threshold."""
    pre = pre or prepare(q, p)
    conv = q.conv
    n = len(conv.ids)
    base = p.w_vec * pre.v + p.w_kw * pre.k
    keep = (base >= THRESHOLD) | pre.matched
    cand = pre.cand[keep]
    base = base[keep]
    if p.signal_top and len(cand) > p.signal_top:
        top = np.argsort(-base, kind="stable")[: p.signal_top]
        rest = np.setdiff1d(np.arange(len(cand)), top)
        sub = replace(p, signal_top=0)
        # score the top N with signals over themselves only; the rest follow by base
        pre_top = Prepared(
            pre.cand[keep][top],
            pre.matched[keep][top],
            pre.k[keep][top],
            pre.v[keep][top],
            pre.vc[keep][top],
        )
        c1, t1 = score(q, sub, pre_top)
        return np.concatenate([c1, cand[rest]]), np.concatenate([t1, base[rest] - 10.0])
    local = base.copy()
    if p.w_ctx:
        local += p.w_ctx * pre.vc[keep]
    if p.w_part and q.participant:
        local += p.w_part * q.extra["part"][cand]
        if p.part_others:
            local += p.w_part * p.part_others * q.extra["part_other"][cand]
    if p.w_date and q.date_window:
        local += p.w_date * (q.extra["dist"][cand] <= p.date_tol)
    total = local.copy()
    if p.w_nb:
        src = (
            local
            if p.nb_source == "local"
            else (base + p.w_ctx * pre.vc[keep] if p.nb_source == "full" else base)
        )
        full = np.full(n, 0.0)
        full[cand] = src
        best = np.full(n, 0.0)
        ep = conv.episode
        for d in range(1, p.nb_window + 1):
            left = np.full(n, 0.0)
            left[d:] = np.where(ep[d:] == ep[:-d], full[:-d], 0.0) * p.nb_prev
            right = np.full(n, 0.0)
            right[:-d] = np.where(ep[:-d] == ep[d:], full[d:], 0.0)
            best = np.maximum(best, np.maximum(left, right))
        total += p.w_nb * best[cand]
    if p.w_ep:
        src = local if p.ep_source == "local" else base
        ne = len(conv.ep_members)
        eidx = conv.episode[cand]
        agg = np.zeros(ne)
        if p.ep_kind == "max":
            np.maximum.at(agg, eidx, src)
        else:
            m = int(p.ep_kind[3:])  # topN mean
            for e in np.unique(eidx):
                vals = np.sort(src[eidx == e])[::-1][:m]
                agg[e] = vals.sum() / m
        total += p.w_ep * agg[eidx]
    if p.w_epd:
        total += p.w_epd * episode_doc_scores(q, p)[conv.episode[cand]]
    if p.w_epk:
        total += p.w_epk * episode_keyword(q, p, cand)[conv.episode[cand]]
    return cand, total


def evaluate(qs: list[Q], p: Params) -> list[dict[str, float]]:
    rows = []
    for q in qs:
        cand, total = score(q, p)
        rows.append(metrics(q, ranking_of(total, cand)))
    return rows


def r10(rows: list[dict[str, float]]) -> float:
    return 100.0 * float(np.mean([r["r10"] for r in rows]))
