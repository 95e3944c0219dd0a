"""The domain registry and the transcripts bucket."""

from __future__ import annotations

from pathlib import Path

import pytest

import recallbox
from backends import DbLocation
from recallbox.domains.base import Domain, SearchContext
from recallbox.domains.registry import (
    AVAILABLE_DOMAINS,
    DOMAINS,
    REGISTRY,
    get_domain,
    registered,
    vector_owners,
)
from recallbox.domains.transcripts import render_transcripts_bucket
from recallbox.ranking.fusion import DOMAIN_THRESHOLDS
from recallbox.storage.base import (
    CORPUS_CODE_SYMBOL,
    CORPUS_MEMORY_ENTRY,
    CORPUS_MESSAGE,
    CORPUS_SECTION,
    CORPUS_TRANSCRIPT_CHUNK,
    KeywordIndex,
    require,
)
from recallbox.text.fts_query import build_fts_query
from recallbox.text.render import unescape_stored
from recallbox.types import Hit


def test_the_registry_lists_what_can_be_searched_in_bucket_order() -> None:
    assert DOMAINS == ("memory", "knowledge", "sessions", "transcripts", "code")
    available = ("memory", "knowledge", "sessions", "transcripts", "code")
    assert AVAILABLE_DOMAINS == available == tuple(d.name for d in registered())
    assert vector_owners() == [
        CORPUS_MEMORY_ENTRY,
        CORPUS_SECTION,
        CORPUS_MESSAGE,
        CORPUS_TRANSCRIPT_CHUNK,
        CORPUS_CODE_SYMBOL,
    ]
    for name, domain in REGISTRY.items():
        assert domain.name == name and name in DOMAINS
        assert domain.threshold == DOMAIN_THRESHOLDS[name]


@pytest.mark.parametrize("name", ["everything", "", None, 3, "Sessions"])
def test_an_unknown_domain_names_the_known_ones(name: object) -> None:
    with pytest.raises(recallbox.InvalidArgument, match="memory, knowledge, sessions"):
        get_domain(name)


def test_every_domain_of_the_design_is_available() -> None:
    assert AVAILABLE_DOMAINS == DOMAINS
    assert [get_domain(name).name for name in DOMAINS] == list(DOMAINS)


def test_a_registered_domain_searches_and_renders_through_the_protocol(box: recallbox.Box) -> None:
    box.append_many("ops", [{"role": "user", "content": "deploy the billing service"}])
    box.add_document("## Billing\ndeploy the billing service\n", "billing.md")
    box.remember("deploy the billing service only on weekdays")
    for domain in registered():
        found: Domain = get_domain(domain.name)
        ctx = SearchContext(box.store)
        hits = found.search(ctx, build_fts_query("billing"), limit=5)
        assert all(hit.domain == domain.name for hit in hits)
        text = found.render_bucket(ctx, hits, 2_000)
        assert len(text) <= 2_000 and all(hit.id in text for hit in hits)


def test_the_transcripts_bucket_names_chunk_source_lines_and_best_message() -> None:
    hits = [
        Hit(
            id=f"claude-code:s@{i}",
            score=1.0 - i / 10,
            text=f"[user] chunk {i} " + "x" * 900,
            domain="transcripts",
            source="s.jsonl",
            lines=(i, i + 3),
            best_message_id=f"m_{i}",
        )
        for i in range(1, 6)
    ]
    text = render_transcripts_bucket(hits, 5_000)
    assert text.startswith(
        "[chunk_id=claude-code:s@1 source=s.jsonl:1-4 rank=1 follow-up=read_message(m_1)]\n"
        "\\[user] chunk 1 "  # stored text is escaped (DESIGN §3.5)
    )
    assert all(
        len(unescape_stored(item.split("\n", 1)[1])) <= 800 for item in text.split("\n\n")[:1]
    )
    small = render_transcripts_bucket(hits, 1_200)
    assert len(small) <= 1_200 and small.endswith(
        "more hit(s) not shown; narrow the query to see them."
    )
    assert "claude-code:s@1" in small and "claude-code:s@5" not in small
    assert render_transcripts_bucket([], 1_000) == ""


def test_hits_explain_their_score(db_location: DbLocation, tmp_path: Path) -> None:
    with recallbox.open(db_location("e"), embedder="hash") as box:
        box.append_many(
            "ops",
            [{"role": "user", "content": t} for t in ("deploy billing now", "billing", "other")],
        )
        box.embed_all()
        for hit in box.search("billing deploy"):
            # sessions: the fused hybrid is the base the ranking signals combine with (#21)
            assert hit.explain["score"] == hit.score
            assert 0.0 <= hit.explain["fused"] <= 1.0
            assert hit.explain["leg"] in ("keyword", "vector")
            assert {"bm25", "keyword", "vector", "context", "episode"} <= set(hit.explain)
        (keyword_only, *_) = box.search("billing deploy", allow_embed=False)
        legs = {"bm25", "keyword", "fused", "leg", "score"}
        # no query vector: no context similarity; a query naming no date or person: neither
        assert set(keyword_only.explain) == legs | {"neighbour", "episode"}
        assert keyword_only.explain["leg"] == "keyword" and keyword_only.explain["bm25"] > 0


def test_require_names_the_missing_capability() -> None:
    class Partial:
        def keyword_ranked(self) -> None: ...

    with pytest.raises(recallbox.StoreUnavailable, match=r"KeywordIndex.*keyword_scope"):
        require(Partial(), KeywordIndex)
