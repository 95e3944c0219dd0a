"""Hybrid fusion (DESIGN §4.2): the three conditions, thresholds, dedupe, and invariants."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recallbox.ranking.bm25 import BM25_K1
from recallbox.ranking.fusion import (
    DOMAIN_THRESHOLDS,
    THRESHOLD_MEMORY,
    THRESHOLD_SESSIONS,
    Candidate,
    Fused,
    fuse,
    hybrid_score,
    normalize_keyword,
    vector_similarity,
)


def test_min_max_within_the_candidate_set() -> None:
    assert normalize_keyword([4.0, 2.0, 1.0]) == [1.0, pytest.approx(1 / 3), 0.0]


def test_a_lone_candidate_scores_s_over_s_plus_k1() -> None:
    assert normalize_keyword([3.0]) == [pytest.approx(3.0 / (3.0 + BM25_K1))]


def test_ties_all_score_one_and_no_match_scores_zero() -> None:
    assert normalize_keyword([2.0, 2.0, 2.0 * (1 + 1e-12)]) == [1.0, 1.0, 1.0]
    assert normalize_keyword([0.0, 0.0]) == [0.0, 0.0]
    assert normalize_keyword([]) == []


def test_vector_similarity_is_absolute_and_clamped() -> None:
    assert vector_similarity(0.25) == 0.75
    assert vector_similarity(1.5) == 0.0


def test_a_missing_leg_is_renormalised_away() -> None:
    assert hybrid_score(0.5, None) == 0.5
    assert hybrid_score(None, 0.5) == 0.5
    assert hybrid_score(1.0, 1.0) == pytest.approx(1.0)
    assert hybrid_score(0.0, 1.0) == pytest.approx(0.6)
    assert hybrid_score(1.0, 0.0) == pytest.approx(0.4)


def test_missing_vector_probe_at_the_fusion_level() -> None:
    exact = Candidate("a", keyword=9.0, vector=None)
    paraphrase = Candidate("b", keyword=0.0, vector=1.0)
    weak = Candidate("c", keyword=1.0, vector=0.1)
    got = fuse([weak, paraphrase, exact], threshold=THRESHOLD_SESSIONS)
    assert [f.id for f in got] == ["a", "b", "c"]
    assert got[0].score == 1.0 and got[1].score == pytest.approx(0.6)
    assert got[2] == Fused("c", pytest.approx(0.6 * 0.1 + 0.4 / 9), pytest.approx(1 / 9), 0.1)


def test_threshold_drops_weak_vector_only_evidence_but_never_a_keyword_match() -> None:
    matches = [Candidate("strong", 5.0, None), Candidate("weakest-match", 1.0, None)]
    got = fuse(matches, threshold=THRESHOLD_SESSIONS)
    assert [(f.id, f.score) for f in got] == [("strong", 1.0), ("weakest-match", 0.0)]
    got = fuse([*matches, Candidate("noise", 0.0, 0.05)], threshold=THRESHOLD_SESSIONS)
    assert [(f.id, f.score) for f in got] == [("strong", 1.0), ("weakest-match", 0.2)]


def test_duplicates_by_content_hash_keep_the_best() -> None:
    got = fuse(
        [
            Candidate("x", keyword=1.0, vector=None, content_hash="h"),
            Candidate("y", keyword=3.0, vector=None, content_hash="h"),
            Candidate("z", keyword=2.0, vector=None, content_hash="other"),
        ]
    )
    assert [f.id for f in got] == ["y", "z"]


def test_rows_missing_a_literal_rank_below_rows_that_have_it() -> None:
    got = fuse(
        [
            Candidate("spaced", keyword=5.0, vector=None, literal_misses=1),
            Candidate("literal", keyword=4.0, vector=None, literal_misses=0),
        ]
    )
    assert [f.id for f in got] == ["literal", "spaced"]


def test_ties_break_by_id_and_limit_is_a_prefix() -> None:
    candidates = [Candidate(i, keyword=1.0, vector=None) for i in "dcba"]
    assert [f.id for f in fuse(candidates)] == ["a", "b", "c", "d"]
    assert [f.id for f in fuse(candidates, limit=2)] == ["a", "b"]


def test_thresholds() -> None:
    assert THRESHOLD_SESSIONS == 0.05 and THRESHOLD_MEMORY == 0.10
    assert DOMAIN_THRESHOLDS == {
        "memory": 0.10,
        "knowledge": 0.05,
        "sessions": 0.05,
        "transcripts": 0.05,
        "code": 0.05,
    }


SCORES = st.floats(min_value=0.0, max_value=50.0, allow_nan=False)
CANDIDATES = st.lists(
    st.tuples(
        st.one_of(st.none(), SCORES),
        st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)),
        st.integers(min_value=0, max_value=2),
    ),
    max_size=30,
)


def _build(raw: list[tuple[float | None, float | None, int]]) -> list[Candidate]:
    keyword_ran = any(k is not None for k, _, _ in raw)
    out = []
    for i, (k, v, misses) in enumerate(raw):
        keyword = (k or 0.0) if keyword_ran else None
        if keyword is None and v is None:
            v = 0.5
        out.append(Candidate(f"id{i:02d}", keyword, v, literal_misses=misses))
    return out


@given(CANDIDATES)
def test_output_is_a_permutation_of_the_input_sorted_by_score(raw: list) -> None:
    candidates = _build(raw)
    got = fuse(candidates)
    assert sorted(f.id for f in got) == sorted(c.id for c in candidates)
    assert [f.sort_key() for f in got] == sorted(f.sort_key() for f in got)
    for tier in {f.literal_misses for f in got}:
        scores = [f.score for f in got if f.literal_misses == tier]
        assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= f.score <= 1.0 for f in got)


@given(CANDIDATES, st.integers(min_value=1, max_value=40), st.sampled_from([0.0, 0.05, 0.1]))
def test_limit_is_respected_and_is_a_prefix(raw: list, limit: int, threshold: float) -> None:
    candidates = _build(raw)
    full = fuse(candidates, threshold=threshold)
    assert fuse(candidates, threshold=threshold, limit=limit) == full[:limit]
    assert len(full[:limit]) <= limit


def test_explain_names_each_leg_the_fused_score_and_the_carrying_leg() -> None:
    from recallbox.ranking.fusion import carrying_leg

    fused = fuse([Candidate("a", keyword=4.0, vector=0.1), Candidate("b", keyword=1.0, vector=0.9)])
    strong_k, strong_v = (next(f for f in fused if f.id == i) for i in ("a", "b"))
    assert strong_k.explain() == {
        "fused": strong_k.score,
        "bm25": 4.0,
        "keyword": 1.0,
        "vector": 0.1,
        "leg": "keyword",
    }
    assert strong_v.explain()["leg"] == "vector" and strong_v.explain()["bm25"] == 1.0
    assert carrying_leg(None, 0.5) == "vector" and carrying_leg(0.5, None) == "keyword"
    assert carrying_leg(0.6, 0.4) == "keyword"  # 0.4·0.6 == 0.6·0.4: a tie goes to keyword
    (vector_only,) = fuse([Candidate("c", keyword=None, vector=0.7)])
    assert vector_only.explain() == {"fused": 0.7, "vector": 0.7, "leg": "vector"}
