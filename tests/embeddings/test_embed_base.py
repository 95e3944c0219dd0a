"""The Embedder protocol and the helpers that enforce DESIGN §4.2's "raises means None" rule."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import pytest

from recallbox.embeddings import (
    Embedder,
    Embedding,
    HashingEmbedder,
    QueryEmbedder,
    embed_queries,
    l2_normalize,
    safe_embed,
)
from recallbox.errors import InvalidArgument

LOGGER = "recallbox.embeddings"


def norm(a: Sequence[float]) -> float:
    """Euclidean length."""
    return math.sqrt(math.fsum(x * x for x in a))


class Fixed:
    """An embedder that answers whatever it is told to, and records its calls."""

    def __init__(self, answer: object, dim: int = 3, model_id: str = "fixed") -> None:
        self.answer = answer
        self.dim = dim
        self.model_id = model_id
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        self.calls.append(list(texts))
        return self.answer  # type: ignore[return-value]


class Raising:
    model_id = "raising"
    dim = 3

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        raise self.exc


class TwoSided:
    """Queries and passages land on different axes, so the route taken is visible."""

    model_id = "two-sided"
    dim = 2

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        return [[1.0, 0.0] for _ in texts]

    def embed_query(self, texts: Sequence[str]) -> list[Embedding]:
        return [[0.0, 1.0] for _ in texts]


def test_protocol_conformance() -> None:
    assert isinstance(HashingEmbedder(), Embedder)
    assert not isinstance(HashingEmbedder(), QueryEmbedder)
    assert isinstance(Fixed([]), Embedder)
    assert isinstance(TwoSided(), QueryEmbedder)
    assert isinstance(TwoSided(), Embedder)

    class NoEmbed:
        model_id = "x"
        dim = 3

    class NoDim:
        model_id = "x"

        def embed(self, texts: Sequence[str]) -> list[Embedding]:
            return []

    assert not isinstance(NoEmbed(), Embedder)
    assert not isinstance(NoDim(), Embedder)
    assert not isinstance("hash", Embedder)


def test_embed_queries_prefers_embed_query() -> None:
    assert embed_queries(TwoSided(), ["q"]) == [[0.0, 1.0]]
    assert TwoSided().embed(["q"]) == [[1.0, 0.0]]
    plain = Fixed([[0.0, 0.0, 1.0]])
    assert embed_queries(plain, ["q"]) == [[0.0, 0.0, 1.0]]
    assert plain.calls == [["q"]]


def test_safe_embed_query_flag_routes_to_embed_query() -> None:
    assert safe_embed(TwoSided(), ["a", "b"], query=True) == [[0.0, 1.0], [0.0, 1.0]]
    assert safe_embed(TwoSided(), ["a"]) == [[1.0, 0.0]]


def test_safe_embed_passes_a_valid_answer_through() -> None:
    answer = [[0.6, 0.8, 0.0], None, [0.0, 0.0, 1.0]]
    fixed = Fixed(answer)
    assert safe_embed(fixed, ("a", " ", "c")) == answer
    assert fixed.calls == [["a", " ", "c"]]


def test_safe_embed_on_a_raising_embedder_returns_none_for_all(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        result = safe_embed(Raising(RuntimeError("model exploded")), ["a", "b", "c"])
    assert result == [None, None, None]
    messages = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert len(messages) == 1
    assert "RuntimeError" in messages[0]
    assert "model exploded" in messages[0]
    assert "'raising'" in messages[0]


def test_safe_embed_catches_import_errors_of_lazy_models() -> None:
    assert safe_embed(Raising(ImportError("no onnxruntime")), ["a"]) == [None]


def test_safe_embed_lets_keyboard_interrupt_through() -> None:
    with pytest.raises(KeyboardInterrupt):
        safe_embed(Raising(KeyboardInterrupt()), ["a"])


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ([[1.0, 0.0, 0.0]], "1 result(s) for 2"),
        ([[1.0, 0.0, 0.0]] * 3, "3 result(s) for 2"),
        ([[1.0, 0.0], [1.0, 0.0]], "2-d vector at position 0, expected 3"),
        ([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]], "4-d vector at position 1"),
        ([[1.0, 0.0, 0.0], [math.nan, 0.0, 0.0]], "non-finite"),
        ([[1.0, 0.0, 0.0], [math.inf, 0.0, 0.0]], "non-finite"),
        ([[1.0, 0.0, 0.0], ["a", "b", "c"]], "non-numeric"),
        ([[1.0, 0.0, 0.0], 7], "non-numeric"),
        (None, "not a list"),
        ("ab", "not a list"),
    ],
)
def test_safe_embed_rejects_a_malformed_answer(
    answer: object, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert safe_embed(Fixed(answer), ["a", "b"]) == [None, None]
    assert any(problem in r.getMessage() for r in caplog.records)


def test_safe_embed_with_unknown_dim_requires_consistent_lengths() -> None:
    assert safe_embed(Fixed([[3.0, 4.0], [1.0, 0.0]], dim=0), ["a", "b"]) == [
        [0.6, 0.8],
        [1.0, 0.0],
    ]
    assert safe_embed(Fixed([[3.0, 4.0], [1.0, 0.0, 0.0]], dim=0), ["a", "b"]) == [None, None]


def test_safe_embed_rejects_an_invalid_dim() -> None:
    assert safe_embed(Fixed([[1.0, 0.0, 0.0]], dim=-1), ["a"]) == [None]


def test_safe_embed_normalises_and_drops_zero_vectors() -> None:
    result = safe_embed(Fixed([[3.0, 0.0, 4.0], [0.0, 0.0, 0.0]]), ["a", "b"])
    assert result[1] is None
    assert result[0] is not None
    assert result[0] == pytest.approx([0.6, 0.0, 0.8])
    assert norm(result[0]) == pytest.approx(1.0)
    assert all(type(x) is float for x in result[0])


def test_safe_embed_with_no_texts_does_not_call_the_embedder() -> None:
    fixed = Fixed([[1.0, 0.0, 0.0]])
    assert safe_embed(fixed, []) == []
    assert fixed.calls == []


def test_a_single_string_is_refused_not_split_into_characters() -> None:
    with pytest.raises(InvalidArgument, match="one string"):
        safe_embed(Fixed([]), "abc")
    with pytest.raises(InvalidArgument, match="one string"):
        HashingEmbedder().embed("abc")
    with pytest.raises(InvalidArgument, match=r"texts\[1\] is int"):
        safe_embed(Fixed([]), ["a", 1])  # type: ignore[list-item]


def test_l2_normalize() -> None:
    assert l2_normalize([3.0, 4.0]) == pytest.approx([0.6, 0.8])
    assert l2_normalize([0.0, 0.0]) is None
    assert l2_normalize([]) is None
    assert l2_normalize([math.nan, 1.0]) is None
    assert l2_normalize([1e-200, 1e-200]) is None
