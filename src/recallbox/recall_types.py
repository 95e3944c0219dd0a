"""Frozen result types of ``recall`` and of the hit-log statistics (DESIGN §5, §9; #12)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from recallbox.text.windows import clip
from recallbox.types import Hit

#: The most of the query ``to_json`` echoes (a 100 000-character query must not make the JSON
#: result 100 000 characters; ``query_chars`` gives its length).
QUERY_ECHO_MAX_CHARS = 200
#: The most of a hit's text ``to_json`` carries (``text_chars`` gives its length; the rendered
#: ``text`` holds the excerpt within the budget, and the hit's id is the call to the whole).
#: Without it ``recall --json`` carried every hit's whole text: ~45 000 characters (#12).
JSON_HIT_TEXT_MAX_CHARS = 240
#: The most of a hit's channel or source ``to_json`` echoes.
JSON_NAME_MAX_CHARS = 200


@dataclass(frozen=True, slots=True)
class Bucket:
    """One domain's part of a ``recall`` (DESIGN §5).

    ``hits`` are the domain's own hits, best first (never re-ranked against other domains);
    ``layer`` is what produced them (``keyword``, ``hybrid``, ``graph``, or ``none`` when
    there are none); ``error`` is ``None``, or what failed: ``"timeout"`` (the domain ran past
    its time limit), ``"error"`` (it raised) or ``"not available"`` (a domain of ``DOMAINS``
    this installation cannot search yet). ``text`` is the bucket as rendered, its label aside.
    """

    domain: str
    hits: tuple[Hit, ...] = ()
    layer: str = "none"
    error: str | None = None
    text: str = ""


@dataclass(frozen=True, slots=True)
class BucketedRecall:
    """The result of ``box.recall`` (DESIGN §5): one :class:`Bucket` per requested domain, in
    ``DOMAINS`` order, present even when empty.

    ``render()`` is the text an agent reads (at most ``budget_chars``); ``to_json()`` the same
    result as plain JSON values (for ``--json`` and programs).
    """

    query: str
    budget_chars: int
    buckets: Mapping[str, Bucket]
    rendered: str

    def render(self) -> str:
        """The evidence header, then each bucket's label line and items; ≤ ``budget_chars``."""
        return self.rendered

    def to_json(self) -> dict[str, Any]:
        """The whole result as JSON values: the query (cut to :data:`QUERY_ECHO_MAX_CHARS`),
        its length, the budget, every bucket with its hits, the text."""
        return {
            "query": clip(self.query, QUERY_ECHO_MAX_CHARS),
            "query_chars": len(self.query),
            "budget_chars": self.budget_chars,
            "buckets": [_bucket_json(bucket) for bucket in self.buckets.values()],
            "text": self.rendered,
        }


def _bucket_json(bucket: Bucket) -> dict[str, Any]:
    return {
        "domain": bucket.domain,
        "layer": bucket.layer,
        "error": bucket.error,
        "hits": [hit_json(hit) for hit in bucket.hits],
        "text": bucket.text,
    }


def hit_json(hit: Hit) -> dict[str, Any]:
    """A :class:`Hit` as JSON values (times in ISO 8601, line ranges as lists; the text cut to
    :data:`JSON_HIT_TEXT_MAX_CHARS` and marked, ``text_chars`` its whole length; channel and
    source cut to :data:`JSON_NAME_MAX_CHARS`)."""
    return {
        "id": hit.id,
        "domain": hit.domain,
        "score": hit.score,
        "channel": _clipped(hit.channel),
        "source": _clipped(hit.source),
        "lines": list(hit.lines) if hit.lines is not None else None,
        "created_at": hit.created_at.isoformat() if hit.created_at is not None else None,
        "role": hit.role,
        "keyword": hit.keyword,
        "vector": hit.vector,
        "best_message_id": hit.best_message_id,
        "text": clip(hit.text, JSON_HIT_TEXT_MAX_CHARS),
        "text_chars": len(hit.text),
        "explain": dict(hit.explain),
    }


def _clipped(name: str | None) -> str | None:
    return None if name is None else clip(name, JSON_NAME_MAX_CHARS)


@dataclass(frozen=True, slots=True)
class DomainHits:
    """Hit-log rows of one domain: hit rows, drill rows, distinct targets."""

    domain: str
    hits: int
    drills: int
    targets: int


@dataclass(frozen=True, slots=True)
class TargetHits:
    """How often one target was returned (hit rows) and opened (drill rows)."""

    domain: str
    target_id: str
    hits: int
    drills: int


@dataclass(frozen=True, slots=True)
class NeverRecalled:
    """Rows of one corpus no hit row names (``examples``: the oldest few ids). ``capped``:
    counting stopped at the caller's limit, so ``count`` is a lower bound ("at least")."""

    corpus: str
    count: int
    examples: tuple[str, ...] = ()
    capped: bool = False


@dataclass(frozen=True, slots=True)
class HitStats:
    """What ``recallbox stats hits`` shows (DESIGN §5): the hit-log summarised.

    ``dropped`` counts rows that could not be recorded (the buffer was full while another
    writer held the database); ``watermarks`` the last row each consumer (``decay``, the lazy
    embedding pass) has read; ``held`` the rows over ``max_rows`` that rotation keeps because
    a consumer has not read them yet.
    """

    rows: int
    hit_rows: int
    drill_rows: int
    dropped: int
    max_rows: int
    held: int
    domains: tuple[DomainHits, ...] = ()
    most_recalled: tuple[TargetHits, ...] = ()
    never_recalled: tuple[NeverRecalled, ...] = ()
    watermarks: Mapping[str, int] = field(default_factory=dict, hash=False)
