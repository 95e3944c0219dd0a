"""Ranking signals on top of the hybrid score (#21, DESIGN §4.2), as pure functions.

The fused hybrid score (``recallbox.ranking.fusion``: ``0.6·v + 0.4·k``) is the *base*. Over
one search's candidates, :func:`combine` adds what the stored fields say about each one:

* ``context`` — the candidate's vector similarity averaged with those of the messages just
  before and after it in its episode (:func:`context_similarity`): a turn is read with the one
  it answers. This replaces a second stored "previous + this" vector (#21): it needs no second
  embedding and no storage, and measured within half a point of it;
* ``neighbour`` — the best base score among the candidate's neighbours (``±NEIGHBOUR_WINDOW``
  by ``seq`` in its episode, ``recallbox.ranking.episodes``): an answer sits next to the turn
  that matched the question;
* ``episode`` — the best base score in the candidate's episode (itself included): a soft prior
  for the sitting the query is about, never a hard cut;
* ``episode_doc`` — the candidate's episode read as one document, from what the search
  already holds of its candidates (:func:`episode_documents`): the mean vector similarity of
  its candidates and the BM25 saturation of their summed phrase frequencies over the
  candidates' episodes (episode-level IDF, no length normalisation), min-max over the
  episodes; a second, broader view of the sitting than the best turn's score;
* ``participant`` — 1 when the candidate's participant (``recallbox.text.participants``) is
  the first one the query names, :data:`PARTICIPANT_OTHER_SHARE` when it is another one the
  query names, else 0;
* ``date`` — 1 when the candidate's ``created_at`` falls within :data:`DATE_TOLERANCE_DAYS` of a
  date the query names (``recallbox.text.dates``), else 0.

The score is the weighted mean of the components a candidate *has*::

    score = (base + Σ w_s · x_s) / (1 + Σ w_s)      over the signals s present

A missing signal (no context vector yet, a query naming no participant or date, a candidate
with no known position) is renormalised away, never scored 0; so every score stays in [0, 1]
when the components do, and a query that names no date ranks as if the date signal did not
exist. Signals present for every candidate of a query reorder; none drops a candidate (the
domain's threshold applies to the base before this).

Every weight is a named constant with the split it was tuned on (LoCoMo dev: the 7
conversations of ``benchmarks/locomo.py``, categories 1–4, chosen from a random search by
their leave-one-conversation-out figure; README "LoCoMo retrieval").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import NamedTuple

from recallbox.ranking.bm25 import bm25_idf
from recallbox.ranking.episodes import EpisodeKey
from recallbox.text.dates import DateSpan, day_distance
from recallbox.text.participants import same_participant

#: Weight of the base hybrid score (the unit the other weights are measured in).
WEIGHT_BASE = 1.0
#: Weight of the context similarity. Tuned on LoCoMo dev (LOO).
WEIGHT_CONTEXT = 0.6
#: The context similarity averages the message's vector similarity with those of the messages
#: just before (share α) and after (share β) it in its episode; these are α and β. Tuned on
#: LoCoMo dev (LOO).
CONTEXT_PREVIOUS_SHARE = 1.0
CONTEXT_NEXT_SHARE = 0.3
#: Weight of the best neighbour's base score. Tuned on LoCoMo dev (LOO).
WEIGHT_NEIGHBOUR = 0.6
#: Weight of the episode prior (the best base score in the episode). Tuned on LoCoMo dev (LOO).
WEIGHT_EPISODE = 0.6
#: Weight of the episode read as one document. Tuned on LoCoMo dev (LOO chosen by session
#: R@10; turn R@10 is flat over 0.2–0.5).
WEIGHT_EPISODE_DOC = 0.4
#: Within the episode document, the vector part's share (the keyword part has the rest).
#: Tuned on LoCoMo dev (LOO).
EPISODE_DOC_VECTOR_SHARE = 0.6
#: BM25's k1 of the episode document's keyword part (no length normalisation: b = 0).
EPISODE_DOC_K1 = 1.2
#: Episodes tie in the min-max of the keyword part when ``max − min`` is below this share of
#: ``max``.
EPISODE_DOC_TIE_EPSILON = 1e-9
#: Weight of the participant match. Tuned on LoCoMo dev (LOO).
WEIGHT_PARTICIPANT = 0.3
#: A participant the query names after the first counts this share of a full match. Tuned on
#: LoCoMo dev (LOO).
PARTICIPANT_OTHER_SHARE = 0.5
#: Weight of the date match. Tuned on LoCoMo dev (LOO).
WEIGHT_DATE = 0.5
#: A message matches a date the query names when its ``created_at`` day is at most this many
#: days from it (a turn tells of yesterday's event). Tuned on LoCoMo dev (LOO; 1–3 tie).
DATE_TOLERANCE_DAYS = 3

#: The names of the components, in the order ``Hit.explain`` shows them.
SIGNAL_NAMES: tuple[str, ...] = (
    "base",
    "context",
    "neighbour",
    "episode",
    "episode_doc",
    "participant",
    "date",
)


@dataclass(frozen=True, slots=True)
class Weights:
    """The weights :func:`combine` uses (the constants above by default; ablations zero some)."""

    context: float = WEIGHT_CONTEXT
    neighbour: float = WEIGHT_NEIGHBOUR
    episode: float = WEIGHT_EPISODE
    episode_doc: float = WEIGHT_EPISODE_DOC
    participant: float = WEIGHT_PARTICIPANT
    date: float = WEIGHT_DATE

    def of(self, name: str) -> float:
        """The weight of component ``name`` (``base`` is always :data:`WEIGHT_BASE`)."""
        return WEIGHT_BASE if name == "base" else float(getattr(self, name))


DEFAULT_WEIGHTS = Weights()


def context_similarity(
    own: float,
    previous: float | None,
    following: float | None,
    *,
    previous_share: float = CONTEXT_PREVIOUS_SHARE,
    next_share: float = CONTEXT_NEXT_SHARE,
) -> float:
    """``(v + α·v_previous + β·v_next) / (1 + α + β)`` over the neighbours that exist.

    ``own`` is the message's vector similarity ``v``; ``previous``/``following`` those of the
    messages just before and after it in its episode (``0.0`` when such a message exists but
    was not a candidate, ``None`` when there is none or it has no vector: its term is dropped).
    """
    total = _finite01(own)
    norm = 1.0
    for value, share in ((previous, previous_share), (following, next_share)):
        if value is not None and share > 0.0:
            total += share * _finite01(value)
            norm += share
    return total / norm


class Evidence(NamedTuple):
    """What :func:`combine` reads of one candidate.

    ``base`` is the fused hybrid score; ``context`` the context similarity (``None``: the
    candidate has no vector); ``episode`` its episode (``None``: position unknown);
    ``neighbours`` the ids of the other candidates next to it in its episode (``None``: no
    message is next to it there, so the signal is absent; ``()``: there are such messages but
    none is a candidate, which scores 0); ``participant`` who wrote it; ``created_at`` when;
    ``episode_doc`` its episode's document score (:func:`episode_documents`; ``None``: absent).
    """

    id: str
    base: float
    context: float | None = None
    episode: EpisodeKey | None = None
    neighbours: tuple[str, ...] | None = ()
    participant: str | None = None
    created_at: datetime | None = None
    episode_doc: float | None = None


@dataclass(frozen=True, slots=True)
class QuerySignals:
    """What the query names: participants (first mentioned first) and date spans."""

    participants: tuple[str, ...] = ()
    dates: tuple[DateSpan, ...] = ()


class Scored(NamedTuple):
    """A candidate's combined ``score`` and each component, in :data:`SIGNAL_NAMES` order
    (``None``: absent, renormalised away)."""

    id: str
    score: float
    values: tuple[float | None, ...]

    @property
    def components(self) -> dict[str, float | None]:
        """``{component name: value}`` (what ``Hit.explain`` shows)."""
        return dict(zip(SIGNAL_NAMES, self.values, strict=True))


def _finite01(value: float) -> float:
    """``value`` clamped to [0, 1]; NaN is 0 (every comparison with NaN is false)."""
    if 0.0 <= value <= 1.0:
        return float(value)
    return 1.0 if value > 1.0 else 0.0


def _day(value: datetime) -> date:
    return (value.astimezone(UTC) if value.tzinfo else value).date()


def participant_value(author: str | None, named: tuple[str, ...]) -> float | None:
    """1 for the first participant the query names, the other share for a later one, else 0;
    ``None`` when the query names nobody (the signal is absent)."""
    if not named:
        return None
    if same_participant(author, named[0]):
        return 1.0
    if any(same_participant(author, other) for other in named[1:]):
        return PARTICIPANT_OTHER_SHARE
    return 0.0


def _date_value_of_day(day: date, spans: tuple[DateSpan, ...]) -> float | None:
    distance = day_distance(day, spans)
    return None if distance is None else float(distance <= DATE_TOLERANCE_DAYS)


def date_value(created_at: datetime | None, spans: tuple[DateSpan, ...]) -> float | None:
    """1 when ``created_at`` is within :data:`DATE_TOLERANCE_DAYS` of a span, else 0; ``None``
    when the query names no date or the time is unknown."""
    if not spans or created_at is None:
        return None
    return _date_value_of_day(_day(created_at), spans)


def weighted_mean(values: Mapping[str, float | None], weights: Weights = DEFAULT_WEIGHTS) -> float:
    """The weighted mean of the present components (weights renormalised over them)."""
    total = norm = 0.0
    for name in SIGNAL_NAMES:
        value = values.get(name)
        weight = weights.of(name)
        if value is not None and weight > 0.0:
            total += weight * value
            norm += weight
    return total / norm if norm > 0.0 else 0.0


def combine(
    candidates: Sequence[Evidence],
    query: QuerySignals,
    *,
    weights: Weights = DEFAULT_WEIGHTS,
) -> list[Scored]:
    """Score every candidate (ids unique; input order kept; the caller sorts).

    One pass per candidate; per-author and per-day values are computed once each (a search has
    few of either).
    """
    base = {c.id: _finite01(c.base) for c in candidates}
    best_in_episode: dict[EpisodeKey, float] = {}
    for c in candidates:
        if c.episode is not None:
            value = base[c.id]
            if value > best_in_episode.get(c.episode, -1.0):
                best_in_episode[c.episode] = value
    w_context, w_neighbour, w_episode = weights.context, weights.neighbour, weights.episode
    w_participant, w_date, w_doc = weights.participant, weights.date, weights.episode_doc
    by_author: dict[str | None, float | None] = {}
    by_day: dict[date | None, float | None] = {}
    out: list[Scored] = []
    for c in candidates:
        own = base[c.id]
        total, norm = WEIGHT_BASE * own, WEIGHT_BASE
        context = None if c.context is None else _finite01(c.context)
        if context is not None and w_context > 0.0:
            total += w_context * context
            norm += w_context
        neighbour: float | None = None
        episode: float | None = None
        if c.episode is not None:
            if c.neighbours is not None:
                best = 0.0
                for other in c.neighbours:
                    near = base.get(other)
                    if near is not None and near > best and other != c.id:
                        best = near
                neighbour = best
                if w_neighbour > 0.0:
                    total += w_neighbour * best
                    norm += w_neighbour
            episode = best_in_episode[c.episode]
            if w_episode > 0.0:
                total += w_episode * episode
                norm += w_episode
        doc = None if c.episode_doc is None else _finite01(c.episode_doc)
        if doc is not None and w_doc > 0.0:
            total += w_doc * doc
            norm += w_doc
        author = c.participant
        if author not in by_author:
            by_author[author] = participant_value(author, query.participants)
        participant = by_author[author]
        if participant is not None and w_participant > 0.0:
            total += w_participant * participant
            norm += w_participant
        day = None if c.created_at is None else _day(c.created_at)
        if day not in by_day:
            by_day[day] = None if day is None else _date_value_of_day(day, query.dates)
        dated = by_day[day]
        if dated is not None and w_date > 0.0:
            total += w_date * dated
            norm += w_date
        values = (own, context, neighbour, episode, doc, participant, dated)
        out.append(Scored(c.id, total / norm, values))
    return out


def _minmax(values: Sequence[float]) -> list[float]:
    """Min-max over episodes: all 0 when none is positive, all 1 when they tie."""
    high, low = max(values), min(values)
    if high <= 0.0:
        return [0.0] * len(values)
    if high - low <= EPISODE_DOC_TIE_EPSILON * high:
        return [1.0] * len(values)
    return [(v - low) / (high - low) for v in values]


def episode_documents(
    episode: Sequence[int],
    vector: Sequence[float | None],
    freqs: Sequence[Sequence[int] | None],
    *,
    vector_share: float = EPISODE_DOC_VECTOR_SHARE,
    k1: float = EPISODE_DOC_K1,
) -> list[float | None]:
    """Each candidate's episode read as one document, from the candidates alone.

    ``episode[i]`` numbers candidate ``i``'s episode (``0 … E−1``, each used), ``vector[i]`` its
    vector similarity (``None``: none), ``freqs[i]`` how often each query phrase occurs in it
    (``None``: not known, e.g. no keyword leg). Per episode: ``V`` the mean similarity of its
    candidates that have one; ``K`` the min-max over episodes of ``Σ idf·f·(k1+1)/(f+k1)`` of
    its summed frequencies ``f``, ``idf`` over the ``E`` episodes (``recallbox.ranking.bm25``);
    the document score ``share·V + (1 − share)·K``, a missing part renormalised away.
    """
    count = max(episode, default=-1) + 1
    sums = [0.0] * count
    seen = [0] * count
    phrases = max((len(f) for f in freqs if f is not None), default=0)
    summed = [[0] * phrases for _ in range(count)]
    known = False
    for e, v, f in zip(episode, vector, freqs, strict=True):
        if v is not None:
            sums[e] += v
            seen[e] += 1
        if f is not None:
            known = True
            row = summed[e]
            for p, n in enumerate(f):
                row[p] += n
    keyword: list[float] | None = None
    if known:
        idfs = [bm25_idf(count, sum(1 for row in summed if row[p] > 0)) for p in range(phrases)]
        raw = []
        for row in summed:
            score = 0.0
            for idf, n in zip(idfs, row, strict=True):
                score += idf * (n * (k1 + 1.0)) / (n + k1)
            raw.append(score)
        keyword = _minmax(raw)
    out: list[float | None] = []
    for e in range(count):
        mean = sums[e] / seen[e] if seen[e] else None
        if mean is None:
            out.append(None if keyword is None else keyword[e])
        elif keyword is None:
            out.append(mean)
        else:
            out.append(vector_share * mean + (1.0 - vector_share) * keyword[e])
    return [out[e] for e in episode]


def components(
    candidates: Sequence[Evidence], query: QuerySignals
) -> dict[str, dict[str, float | None]]:
    """``{id: {component: value or None}}`` for every candidate (ids are unique)."""
    return {scored.id: scored.components for scored in combine(candidates, query)}


#: ``Hit.explain`` key of the combined score.
EXPLAIN_SCORE = "score"


def explain_signals(scored: Scored) -> dict[str, float]:
    """The ``Hit.explain`` entries of a combined score: each present signal (``base`` is the
    fused score, shown as ``fused``) and the ``score``; an absent signal is left out."""
    out = {
        name: value
        for name, value in zip(SIGNAL_NAMES, scored.values, strict=True)
        if value is not None and name != "base"
    }
    out[EXPLAIN_SCORE] = scored.score
    return out
