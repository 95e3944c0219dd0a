"""HTTPEmbedder against a tiny OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from recallbox.embeddings import Embedder, HTTPEmbedder, safe_embed
from recallbox.embeddings.http import HTTP_MAX_INPUT_CHARS
from recallbox.errors import InvalidArgument

LOOPBACK = "127.0.0.1"
KEY_ENVS = ("RECALLBOX_EMBED_API_KEY", "OPENAI_API_KEY", "MY_KEY")
PROXY_ENVS = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
#: Client timeout in the timeout test, and how long the server stalls there.
SHORT_TIMEOUT = 0.2
STALL_SECONDS = 1.0
SERVER_DIM = 4
#: How often the test server checks for shutdown.
POLL_SECONDS = 0.02


@dataclass
class Recorded:
    """What the server saw, and how it should answer."""

    requests: list[dict[str, Any]] = field(default_factory=list)
    # answer(inputs) -> (status, body)
    answer: Callable[[list[str]], tuple[int, Any]] | None = None


def vector_for(text: str, dim: int = SERVER_DIM) -> list[float]:
    """A deterministic, deliberately non-normalised vector (length of text on axis 0...)."""
    return [float(len(text)), 1.0] + [0.0] * (dim - 2)


def default_answer(inputs: list[str]) -> tuple[int, Any]:
    data = [
        {"object": "embedding", "index": i, "embedding": vector_for(t)}
        for i, t in enumerate(inputs)
    ]
    data.reverse()  # answer out of order: the client must use "index"
    return 200, {"object": "list", "data": data, "model": "m"}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Recorded]]:
    for name in (*KEY_ENVS, *PROXY_ENVS):
        monkeypatch.delenv(name, raising=False)
    recorded = Recorded()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length))
            recorded.requests.append(
                {"path": self.path, "headers": dict(self.headers.items()), "json": payload}
            )
            status, body = (recorded.answer or default_answer)(payload["input"])
            raw = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": POLL_SECONDS}, daemon=True
    )
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{httpd.server_address[1]}/v1", recorded
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_posts_model_and_inputs_and_orders_by_index(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    embedder = HTTPEmbedder(url, "text-embedding-x")
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "text-embedding-x"
    assert embedder.dim == 0  # not known before the first answer
    result = embedder.embed(["a", "bbb", "cc"])
    assert embedder.dim == SERVER_DIM
    (request,) = recorded.requests
    assert request["path"] == "/v1/embeddings"
    assert request["json"] == {"model": "text-embedding-x", "input": ["a", "bbb", "cc"]}
    assert request["headers"]["Content-Type"] == "application/json"
    assert "Authorization" not in request["headers"]
    for text, vector in zip(["a", "bbb", "cc"], result, strict=True):
        expected = vector_for(text)
        scale = math.sqrt(sum(x * x for x in expected))
        assert vector == pytest.approx([x / scale for x in expected])


def test_blank_texts_are_not_sent(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    result = HTTPEmbedder(url, "m").embed(["", "x", "  "])
    assert result[0] is None and result[2] is None and result[1] is not None
    assert recorded.requests[0]["json"]["input"] == ["x"]
    assert HTTPEmbedder(url, "m").embed(["", " "]) == [None, None]
    assert len(recorded.requests) == 1


def test_batches(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    texts = [f"t{'x' * i}" for i in range(5)]
    result = HTTPEmbedder(url, "m", batch_size=2).embed(texts)
    assert [r["json"]["input"] for r in recorded.requests] == [texts[0:2], texts[2:4], texts[4:]]
    assert [v is not None for v in result] == [True] * 5
    assert result[4] != result[0]


def test_long_input_is_cut(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    HTTPEmbedder(url, "m").embed(["y" * (HTTP_MAX_INPUT_CHARS + 50)])
    assert recorded.requests[0]["json"]["input"] == ["y" * HTTP_MAX_INPUT_CHARS]


def test_base_url_trailing_slash(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    embedder = HTTPEmbedder(url + "/", "m")
    assert embedder.url == url + "/embeddings"
    embedder.embed(["x"])
    assert recorded.requests[0]["path"] == "/v1/embeddings"


def test_api_key_from_named_env(
    server: tuple[str, Recorded], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, recorded = server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("MY_KEY", "sk-mine")
    embedder = HTTPEmbedder(url, "m", api_key_env="MY_KEY")
    assert "sk-mine" not in repr(embedder) and "sk-mine" not in repr(vars(embedder))
    embedder.embed(["x"])
    assert recorded.requests[-1]["headers"]["Authorization"] == "Bearer sk-mine"
    # A custom variable that is unset does not fall back to OPENAI_API_KEY.
    monkeypatch.delenv("MY_KEY")
    embedder.embed(["x"])
    assert "Authorization" not in recorded.requests[-1]["headers"]


def test_api_key_default_env_and_fallback(
    server: tuple[str, Recorded], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, recorded = server
    embedder = HTTPEmbedder(url, "m")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    embedder.embed(["x"])
    assert recorded.requests[-1]["headers"]["Authorization"] == "Bearer sk-openai"
    monkeypatch.setenv("RECALLBOX_EMBED_API_KEY", "sk-recallbox")
    embedder.embed(["x"])  # read at request time, not at construction
    assert recorded.requests[-1]["headers"]["Authorization"] == "Bearer sk-recallbox"


def test_given_dim_is_enforced_and_can_be_sent(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    with pytest.raises(ValueError, match="expected 8"):
        HTTPEmbedder(url, "m", dim=8).embed(["x"])
    assert safe_embed(HTTPEmbedder(url, "m", dim=8), ["x", "y"]) == [None, None]
    embedder = HTTPEmbedder(url, "m", dim=SERVER_DIM, send_dimensions=True)
    assert embedder.embed(["x"])[0] is not None
    assert recorded.requests[-1]["json"]["dimensions"] == SERVER_DIM


def test_learned_dim_is_then_enforced(server: tuple[str, Recorded]) -> None:
    url, recorded = server
    embedder = HTTPEmbedder(url, "m")
    embedder.embed(["x"])
    recorded.answer = lambda inputs: (
        200,
        {"data": [{"index": i, "embedding": [1.0] * 6} for i in range(len(inputs))]},
    )
    with pytest.raises(ValueError, match="6-d vectors, expected 4"):
        embedder.embed(["x"])


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda n: (500, {"error": {"message": "boom"}}), "HTTP 500"),
        (lambda n: (401, {"error": {"message": "bad key"}}), "bad key"),
        (lambda n: (200, b"not json"), "not JSON"),
        (lambda n: (200, {"data": []}), "0 data item"),
        (lambda n: (200, {"nodata": 1}), "no data item"),
        (
            lambda n: (200, {"data": [{"index": 0, "embedding": [1.0, 0.0]}] * len(n)}),
            "repeats index 0",
        ),
        (
            lambda n: (
                200,
                {"data": [{"index": i + 1, "embedding": [1.0]} for i in range(len(n))]},
            ),
            "invalid index",
        ),
        (
            lambda n: (200, {"data": [{"index": i, "embedding": "AAAA"} for i in range(len(n))]}),
            "no float list",
        ),
        (
            lambda n: (
                200,
                {"data": [{"index": i, "embedding": [1.0, None]} for i in range(len(n))]},
            ),
            "non-numbers",
        ),
        (
            lambda n: (
                200,
                {"data": [{"index": i, "embedding": [1.0] * (i + 1)} for i in range(len(n))]},
            ),
            "mixes vector lengths",
        ),
    ],
)
def test_bad_answers_raise_and_safe_embed_returns_none(
    server: tuple[str, Recorded], answer: Callable[[list[str]], tuple[int, Any]], message: str
) -> None:
    url, recorded = server
    recorded.answer = answer
    embedder = HTTPEmbedder(url, "m")
    with pytest.raises((RuntimeError, ValueError), match=message):
        embedder.embed(["a", "b"])
    assert safe_embed(embedder, ["a", "b"]) == [None, None]


def test_timeout(server: tuple[str, Recorded]) -> None:
    url, recorded = server

    def stall(inputs: list[str]) -> tuple[int, Any]:
        time.sleep(STALL_SECONDS)
        return default_answer(inputs)

    recorded.answer = stall
    embedder = HTTPEmbedder(url, "m", timeout=SHORT_TIMEOUT)
    started = time.monotonic()
    assert safe_embed(embedder, ["x"]) == [None]
    assert time.monotonic() - started < STALL_SECONDS


def test_unreachable_server_fails_safely(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in PROXY_ENVS:
        monkeypatch.delenv(name, raising=False)
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens on it
        probe.bind((LOOPBACK, 0))
        port = probe.getsockname()[1]
    embedder = HTTPEmbedder(f"http://{LOOPBACK}:{port}/v1", "m", timeout=SHORT_TIMEOUT)
    with pytest.raises(RuntimeError, match="failed"):
        embedder.embed(["x"])
    assert safe_embed(embedder, ["x"]) == [None]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"base_url": "ftp://example.com", "model": "m"},
        {"base_url": "file:///etc/passwd", "model": "m"},
        {"base_url": "localhost:8000", "model": "m"},
        {"base_url": "http://localhost", "model": ""},
        {"base_url": "http://localhost", "model": "m", "dim": 0},
        {"base_url": "http://localhost", "model": "m", "batch_size": 0},
        {"base_url": "http://localhost", "model": "m", "timeout": 0},
        {"base_url": "http://localhost", "model": "m", "send_dimensions": True},
    ],
)
def test_invalid_arguments(kwargs: dict[str, Any]) -> None:
    with pytest.raises(InvalidArgument):
        HTTPEmbedder(**kwargs)
