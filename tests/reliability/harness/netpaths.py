"""The main paths, run in a process whose network is blocked (``netguard/sitecustomize.py``):
``python -m reliability.harness.netpaths DB WORK``. Prints ``ok`` at the end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio

import recallbox

FIXTURES = Path(__file__).resolve().parents[2] / "importers" / "fixtures"
SELF_CHECK = ("192.0.2.1", 80)
"""A TEST-NET address: the guard must refuse it (and log it) before anything else runs."""


def self_check() -> None:
    assert os.environ.get("RECALLBOX_NETGUARD") == "on", "the network guard is not loaded"
    with socket.socket() as s:
        try:
            s.connect(SELF_CHECK)
        except OSError:
            return
    raise AssertionError("the network guard let a connection through")


def library_paths(db: str) -> str:
    with recallbox.open(db) as box:
        first = box.append("net:1", "user", "deploy pg-primary-9 to staging")
        box.append_many("net:1", [{"role": "assistant", "content": "deployed pg-primary-9"}])
        for fmt, folder in (
            ("claude-code", "claude-code/projects"),
            ("codex", "codex/sessions"),
            ("openai", "openai"),
        ):
            report = box.import_transcripts(fmt, [FIXTURES / folder])
            assert report.files, fmt
        assert "pg-primary-9" in box.search_memory("pg-primary-9")
        assert "pg-primary-9" in box.search_memory("pg-primary-9", channel="net:1")
        assert box.search("pg-primary-9", allow_embed=False)
        box.read_message(first.id)
        box.compact("net:1", "summary of the deploy")
        assert box.doctor().healthy
    for embedder in ("minilm", "hash"):  # the CLI below searches with hash
        with recallbox.open(db, embedder=embedder) as box:
            assert box.embed_all(rebuild=True) > 0, embedder
            assert box.search("deploying the primary", allow_embed=True), embedder
    return first.id


def cli_paths(db: str) -> None:
    for args in (
        ("search", "pg-primary-9", "--embedder", "hash"),
        ("search-memory", "deploy"),
        ("import", "claude-code", str(FIXTURES / "claude-code" / "projects")),
        ("embed", "--all", "--embedder", "hash"),
        ("doctor",),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "recallbox", "--db", db, *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr)


def mcp_paths(db: str, message_id: str) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallbox", "--db", db, "mcp"],
        env=dict(os.environ),
    )

    async def over_stdio() -> Any:
        async with Client(params) as client:
            await client.call_tool("search_memory", {"query": "pg-primary-9"})
            return await client.call_tool("read_message", {"message_id": message_id})

    assert not anyio.run(over_stdio).is_error
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "recallbox", "--db", db, "mcp", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def over_http() -> Any:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                return await client.call_tool("search_memory", {"query": "pg-primary-9"})

        assert not anyio.run(over_http).is_error
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(db: str) -> None:
    self_check()
    message_id = library_paths(db)
    cli_paths(db)
    mcp_paths(db, message_id)
    print("ok")


if __name__ == "__main__":
    main(sys.argv[1])  # a SQLite path or a PostgreSQL URL (a Path would break a URL's '//')
