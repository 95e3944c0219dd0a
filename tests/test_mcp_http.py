"""Streamable HTTP: the Host/Origin check and the bearer token (DESIGN §8), in-process and over a
real socket."""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

import recallbox
from recallbox.mcp_server import (
    MCP_PATH,
    allowed_host_names,
    guard,
    host_name,
    is_loopback,
    new_token,
)


def test_loopback_and_host_names() -> None:
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.168.1.20", "example.org", ""))
    assert host_name("[::1]:8766") == "::1"
    assert host_name("Example.ORG:80") == "example.org"
    assert host_name("example.org") == "example.org"
    assert host_name("::1") == "::1"
    assert allowed_host_names("10.0.0.5", ["box.lan"]) == {
        "127.0.0.1",
        "localhost",
        "::1",
        "10.0.0.5",
        "box.lan",
    }
    assert socket.gethostname().casefold() in allowed_host_names("0.0.0.0")
    assert len(new_token()) >= 40 and new_token() != new_token()


async def _ok_app(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


def call(app: Any, headers: dict[str, str], scope_type: str = "http") -> int:
    """The status ``app`` answers a GET with ``headers``."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": scope_type,
        "method": "GET",
        "path": MCP_PATH,
        "headers": [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()],
    }
    anyio.run(app, scope, receive, send)
    return int(sent[0]["status"])


def test_the_guard_checks_host_origin_and_token() -> None:
    app = guard(_ok_app, token="s3cret", allowed=frozenset({"127.0.0.1", "box.lan"}))
    auth = {"Authorization": "Bearer s3cret"}
    assert call(app, {"Host": "box.lan:8766", **auth}) == 200
    assert call(app, {"Host": "127.0.0.1:8766", "Origin": "http://box.lan:3000", **auth}) == 200
    assert call(app, {"Host": "evil.example:8766", **auth}) == 421
    assert call(app, {**auth}) == 421  # no Host header at all
    assert call(app, {"Host": "box.lan", "Origin": "http://evil.example", **auth}) == 403
    assert call(app, {"Host": "box.lan"}) == 401
    assert call(app, {"Host": "box.lan", "Authorization": "Bearer wrong"}) == 401
    assert call(app, {"Host": "box.lan", "Authorization": "Bearer s3cret\u00e9"}) == 401
    open_app = guard(_ok_app, token=None, allowed=frozenset({"127.0.0.1"}))
    assert call(open_app, {"Host": "127.0.0.1:8766"}) == 200
    assert call(open_app, {"Host": "attacker.example"}) == 421


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _status(port: int, headers: dict[str, str]) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest("POST", MCP_PATH, skip_host=True)
        for key, value in {"Content-Type": "application/json", **headers}.items():
            conn.putheader(key, value)
        conn.endheaders(b"{}")
        return conn.getresponse().status
    finally:
        conn.close()


def test_a_remote_bind_needs_the_generated_token(db_path: Path) -> None:
    """`--host 0.0.0.0 --allow-remote` without a token prints one on stderr; requests without
    it are refused, and a request naming another host is refused."""
    with recallbox.open(db_path) as box:
        message = box.append("agent:1", "user", "deploy pg-primary-9 to staging")
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "recallbox",
            "--db",
            str(db_path),
            "mcp",
            "--http",
            "--host",
            "0.0.0.0",
            "--allow-remote",
            "--port",
            str(port),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        token, deadline = None, time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "the server ended before it was ready"
            if "bearer token" in line:
                token = line.rsplit(": ", 1)[1].strip()
            if "Uvicorn running" in line:
                break
        assert token is not None
        host = {"Host": f"127.0.0.1:{port}"}
        assert _status(port, host) == 401
        assert _status(port, {**host, "Authorization": "Bearer not-it"}) == 401
        assert (
            _status(port, {"Host": f"evil.example:{port}", "Authorization": f"Bearer {token}"})
            == 421
        )

        async def go() -> Any:
            headers = {"Authorization": f"Bearer {token}"}
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http_client:
                transport = streamable_http_client(
                    f"http://127.0.0.1:{port}{MCP_PATH}", http_client=http_client
                )
                async with Client(transport) as client:
                    return await client.call_tool("read_message", {"message_id": message.id})

        result = anyio.run(go)
        assert not result.is_error and "deploy pg-primary-9" in result.content[0].text
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr is not None:
            proc.stderr.close()
