"""HashingEmbedder: deterministic, normalised feature hashing."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recallbox.embeddings import Embedder, HashingEmbedder
from recallbox.embeddings.hashing import HASH_DEFAULT_DIM, HASH_MAX_DIM, hash_features
from recallbox.errors import InvalidArgument

SRC = Path(__file__).resolve().parents[2] / "src"
SAMPLE = ["hello world", "Deploy the server with docker", "压缩摘要开局", "naïve café ß"]
#: Hypothesis examples per property (the embedder is pure Python, keep it quick).
EXAMPLES = 60
ENGLISH = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "Zs", "P")), max_size=80
)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of two vectors (not assumed normalised)."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    return dot / (norm(a) * norm(b))


def norm(a: Sequence[float]) -> float:
    """Euclidean length."""
    return math.sqrt(math.fsum(x * x for x in a))


def test_model_id_dim_and_protocol() -> None:
    embedder = HashingEmbedder()
    assert embedder.dim == HASH_DEFAULT_DIM == 256
    assert embedder.model_id == "hash-v1-256"
    assert HashingEmbedder(64).model_id == "hash-v1-64"
    assert isinstance(embedder, Embedder)
    assert [len(v or []) for v in HashingEmbedder(64).embed(SAMPLE)] == [64] * len(SAMPLE)


@pytest.mark.parametrize("dim", [0, 1, -5, HASH_MAX_DIM + 1, 2.5, True, "256"])
def test_invalid_dim(dim: object) -> None:
    with pytest.raises(InvalidArgument, match="dim"):
        HashingEmbedder(dim)  # type: ignore[arg-type]


def test_known_vector_never_changes() -> None:
    # Stored vectors carry model_id "hash-v1-256": the scheme must not drift under that id.
    (vector,) = HashingEmbedder().embed(["hello world"])
    assert vector is not None
    nonzero = {i: round(x, 6) for i, x in enumerate(vector) if x}
    assert nonzero == {160: 0.707107, 243: -0.707107}


def test_same_vector_in_a_process_with_another_hash_seed() -> None:
    here = HashingEmbedder().embed(SAMPLE)
    code = (
        "import json; from recallbox.embeddings import HashingEmbedder; "
        f"print(json.dumps(HashingEmbedder().embed({SAMPLE!r})))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == here


def test_identical_texts_have_cosine_one_and_case_is_ignored() -> None:
    a, b, c = HashingEmbedder().embed(["Alpha beta GAMMA", "Alpha beta GAMMA", "alpha BETA gamma"])
    assert a is not None and b is not None and c is not None
    assert cosine(a, b) == pytest.approx(1.0)
    assert cosine(a, c) == pytest.approx(1.0)


def test_shared_words_score_above_disjoint_words() -> None:
    query, related, unrelated = HashingEmbedder().embed(
        [
            "restart the nginx server after the deploy",
            "the deploy failed so we had to restart nginx",
            "bananas are rich in potassium",
        ]
    )
    assert query is not None and related is not None and unrelated is not None
    assert cosine(query, related) > 0.5
    assert abs(cosine(query, unrelated)) < 0.2


def test_cjk_text_shares_bigrams() -> None:
    query, related, unrelated = HashingEmbedder().embed(
        ["压缩摘要", "新一代只带一份结构化压缩摘要开局", "今天天气很好"]
    )
    assert query is not None and related is not None and unrelated is not None
    assert cosine(query, related) > 0.3
    assert cosine(query, related) > cosine(query, unrelated) + 0.2


def test_features() -> None:
    assert hash_features("Hello, World_2!") == ["hello", "world_2"]
    assert hash_features("压缩摘要") == [
        "\x01压",
        "\x01缩",
        "\x01摘",
        "\x01要",
        "\x01压缩",
        "\x01缩摘",
        "\x01摘要",
    ]
    assert hash_features("用 recallbox 召回") == [
        "\x01用",
        "recallbox",
        "\x01召",
        "\x01回",
        "\x01召回",
    ]
    assert hash_features(" \t\n...!?") == []


@pytest.mark.parametrize("text", ["", " ", "\t\n  ", "...", "—!?"])
def test_text_without_words_embeds_to_none(text: str) -> None:
    assert HashingEmbedder().embed([text, "word"])[0] is None


def test_order_and_count_are_kept() -> None:
    embedder = HashingEmbedder()
    batch = embedder.embed([*SAMPLE, "", *reversed(SAMPLE)])
    single = [embedder.embed([t])[0] for t in SAMPLE]
    assert len(batch) == 2 * len(SAMPLE) + 1
    assert batch[: len(SAMPLE)] == single
    assert batch[len(SAMPLE)] is None
    assert batch[len(SAMPLE) + 1 :] == list(reversed(single))
    assert embedder.embed([]) == []


@settings(max_examples=EXAMPLES, deadline=None)
@given(text=ENGLISH)
def test_vectors_are_unit_length_and_deterministic(text: str) -> None:
    first = HashingEmbedder(64).embed([text])[0]
    second = HashingEmbedder(64).embed([text])[0]
    assert first == second
    if not hash_features(text):
        assert first is None
    elif first is not None:  # None only when every feature cancelled out in its bucket
        assert norm(first) == pytest.approx(1.0)


@settings(max_examples=EXAMPLES, deadline=None)
@given(words=st.lists(st.from_regex(r"[a-z]{3,10}", fullmatch=True), min_size=1, max_size=12))
def test_word_order_does_not_matter(words: list[str]) -> None:
    a, b = HashingEmbedder().embed([" ".join(words), " ".join(reversed(words))])
    assert a == pytest.approx(b)
