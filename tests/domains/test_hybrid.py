"""The fusion of the keyword and vector legs shared by the hybrid domains (sessions, transcripts)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recallbox.domains.base import QueryVector
from recallbox.domains.hybrid import fuse_legs
from recallbox.storage.base import EmbeddingSpace, SearchFilter


@dataclass(frozen=True)
class Row:
    text: str
    content_hash: str


SPACE = EmbeddingSpace(id=1, owner="message", model_id="m", dim=2, count=3)
ROWS = {"a": Row("alpha KEY", "ha"), "b": Row("beta", "hb"), "c": Row("gamma", "hc")}


def test_fuse_legs_scores_every_candidate_on_both_legs() -> None:
    calls: list[tuple[str, object]] = []

    def nearest(
        vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        calls.append(("nearest", (where.channel, limit)))
        return [("b", 0.0), ("gone", 0.5)]

    def distances(
        vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace, where: SearchFilter
    ) -> dict[str, float]:
        calls.append(("distances", list(ids)))
        return {"a": 0.5}

    fused, rows = fuse_legs(
        {"a": 2.0, "c": 1.0},
        QueryVector(vector=[1.0, 0.0], space=SPACE),
        nearest=nearest,
        distances=distances,
        rows_of=lambda ids: {i: ROWS[i] for i in ids if i in ROWS},
        text_of=lambda row: row.text,
        literals=["KEY"],
        where=SearchFilter(channel="ch"),
        pool=7,
        limit=5,
        threshold=0.0,
    )
    assert calls == [("nearest", ("ch", 7)), ("distances", ["a", "c"])]
    assert set(rows) == {"a", "b", "c"}
    by_id = {f.id: f for f in fused}
    assert "gone" not in by_id
    assert by_id["a"].vector == 0.5 and by_id["b"].vector == 1.0 and by_id["c"].vector is None
    assert by_id["b"].keyword == 0.0
    assert [f.literal_misses for f in fused] == sorted(f.literal_misses for f in fused)
    assert fused[0].id == "a"


def test_fuse_legs_without_a_keyword_leg() -> None:
    def nearest(
        vector: Sequence[float], *, space: EmbeddingSpace, where: SearchFilter, limit: int
    ) -> list[tuple[str, float]]:
        return [("b", 0.0)]

    def distances(
        vector: Sequence[float], ids: Sequence[str], *, space: EmbeddingSpace, where: SearchFilter
    ) -> dict[str, float]:
        assert not ids
        return {}

    fused, _ = fuse_legs(
        None,
        QueryVector(vector=[1.0, 0.0], space=SPACE),
        nearest=nearest,
        distances=distances,
        rows_of=lambda ids: {i: ROWS[i] for i in ids if i in ROWS},
        text_of=lambda row: row.text,
        literals=[],
        where=SearchFilter(),
        pool=3,
        limit=3,
        threshold=0.0,
    )
    assert [(f.id, f.keyword) for f in fused] == [("b", None)]
