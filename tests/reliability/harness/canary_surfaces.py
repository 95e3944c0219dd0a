"""The interfaces the privacy canaries are read through (#15 item 5), beyond the Python verbs
of :func:`~reliability.harness.canaries.python_outputs`: the CLI (agent- and person-facing,
text and ``--json``, stderr at debug level), MCP over stdio and over streamable HTTP, and the
files under ``RECALLBOX_HOME``. :data:`SURFACES` lists every one; :mod:`.canaries` plants the
canaries and scans what a surface yields."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

from reliability.harness.canaries import (
    EXCLUSIONS,
    VECTOR_MARK,
    Planted,
    Surface,
    python_outputs,
)


def cli_run(p: Planted, *args: str, stdin: str = "") -> str:
    env = {**os.environ, "RECALLBOX_DEBUG": "1", "RECALLBOX_HOME": str(p.work / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "recallbox", "--db", str(p.db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


CLI_PARALLEL = 3
"""CLI calls of one batch run at once: each is a process of its own reading the one file, and
most of its cost is its start-up (a second in all on 2 cores, run one after the other)."""
CliCall = tuple[str, tuple[str, ...], str]
"""``(label, arguments, stdin)`` of one CLI call."""


def cli_batch(p: Planted, calls: list[CliCall]) -> list[tuple[str, str]]:
    """Run ``calls`` :data:`CLI_PARALLEL` at a time; their ``(label, output)`` in call order."""
    with concurrent.futures.ThreadPoolExecutor(CLI_PARALLEL) as pool:
        texts = list(pool.map(lambda call: cli_run(p, *call[1], stdin=call[2]), calls))
    return [(label, text) for (label, _, _), text in zip(calls, texts, strict=True)]


def cli_query_outputs(
    p: Planted, queries: list[str], *, vector: bool = True
) -> Iterator[tuple[str, str]]:
    """The agent-facing CLI verbs that take a query (``vector``: with the vector-ranked ones,
    which a comparison with a no-match query skips)."""
    calls: list[CliCall] = []
    for q in queries:
        for json_flag in ((), ("--json",)):
            calls.append((f"cli search-memory {q!r}", ("search-memory", q, *json_flag), ""))
            if vector:
                calls.append(
                    (
                        f"cli search {q!r}{VECTOR_MARK}",
                        ("search", q, "--embedder", "hash", *json_flag),
                        "",
                    )
                )
            calls.append(
                (
                    f"cli search {q!r}",
                    ("search", q, "--embedder", "hash", "--no-embed", *json_flag),
                    "",
                )
            )
        calls.append((f"cli recall {q!r}", ("recall", q, "--json"), ""))
        calls.append((f"cli recall-context {q!r}", ("recall-context", q, "--json"), ""))
        calls.append((f"cli code search {q!r}", ("code", "search", q, "--json"), ""))
    yield from cli_batch(p, calls)


def cli_agent_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    yield from cli_query_outputs(p, queries)
    reads: list[CliCall] = [(f"cli read {m}", ("read", m), "") for m in p.denied_ids[:3]]
    reads += [(f"cli expand {h}", ("expand", h), "") for h in p.denied_handles[:2]]
    yield from cli_batch(p, reads)
    hooks: list[CliCall] = []
    for channel in p.denied_channels[:2]:
        session = channel.split(":", 1)[1]
        payload = json.dumps(
            {"hook_event_name": "SessionStart", "source": "compact", "session_id": session}
        )
        hooks.append((f"cli hook {session}", ("hook", "claude-code"), payload))
    yield from cli_batch(p, hooks)


def cli_compared_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    """What :func:`same_as_nothing` compares of the agent-facing CLI: the query verbs."""
    return cli_query_outputs(p, queries, vector=False)


def cli_person_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    calls: list[CliCall] = []
    for json_flag in ((), ("--json",)):
        calls.append(("cli thread list", ("thread", "list", *json_flag), ""))
        calls.append(("cli policy show", ("policy", "show", *json_flag), ""))
        calls.append(("cli doctor", ("doctor", *json_flag), ""))
        calls += [
            (f"cli thread show {c}", ("thread", "show", c, *json_flag), "")
            for c in p.denied_channels[:2]
        ]
    yield from cli_batch(p, calls)
    yield "cli import again", cli_run(p, "import", "claude-code", str(p.work / "transcripts"))


def _mcp_calls(p: Planted, queries: list[str]) -> list[tuple[str, dict[str, Any]]]:
    calls: list[tuple[str, dict[str, Any]]] = []
    for q in queries:
        calls.append(("search_memory", {"query": q}))
        calls.append(("search_memory", {"query": q, "channel": p.denied_channels[0]}))
        calls.append(("recall", {"query": q}))
        calls.append(("recall_context", {"query": q}))
        calls.append(("recall_context", {"query": q, "source": EXCLUSIONS[0]}))
    calls += [("read_message", {"message_id": m}) for m in p.denied_ids[:5]]
    calls += [("expand", {"handle": h}) for h in p.denied_handles[:2]]
    calls += [("recall", {"query": q, "domains": ["code"]}) for q in queries[:2]]
    return calls


def _tool_texts(result: Any) -> str:
    return "\n".join(getattr(c, "text", repr(c)) for c in result.content) + repr(
        getattr(result, "structured_content", None)
    )


def mcp_stdio_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    errlog = p.work / "mcp-stdio.stderr"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallbox", "--db", str(p.db), "mcp"],
        env={**os.environ, "RECALLBOX_DEBUG": "1", "RECALLBOX_HOME": str(p.work / "home")},
    )

    async def go() -> list[tuple[str, str]]:
        out = []
        with errlog.open("w") as err:
            async with Client(stdio_client(params, errlog=err)) as client:
                tools = await client.list_tools()
                out.append(("mcp list_tools", repr(tools)))
                for name, args in _mcp_calls(p, queries):
                    result = await client.call_tool(name, args)
                    out.append((f"mcp stdio {name} {args}", _tool_texts(result)))
        return out

    yield from anyio.run(go)
    yield "mcp stdio stderr", errlog.read_text()


def mcp_http_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    import socket
    import time

    import anyio
    from mcp import Client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    errlog = p.work / "mcp-http.stderr"
    with errlog.open("w") as err:
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "recallbox",
                "--db",
                str(p.db),
                "mcp",
                "--http",
                "--port",
                str(port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "RECALLBOX_DEBUG": "1", "RECALLBOX_HOME": str(p.work / "home")},
        )
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with socket.socket() as s:
                    if s.connect_ex(("127.0.0.1", port)) == 0:
                        break
                time.sleep(0.1)

            async def go() -> list[tuple[str, str]]:
                out = []
                async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                    for name, args in _mcp_calls(p, queries):
                        result = await client.call_tool(name, args)
                        out.append((f"mcp http {name} {args}", _tool_texts(result)))
                return out

            yield from anyio.run(go)
        finally:
            server.terminate()
            server.wait(timeout=30)
    yield "mcp http stderr", errlog.read_text()


def log_files(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    """Every file recallbox wrote under its home, the database files excepted."""
    files = sorted((p.work / "home").rglob("*"))
    yield "home listing", "\n".join(map(str, files))
    for path in files:
        if path.is_file() and not path.name.startswith(p.db.name):
            yield f"file {path}", path.read_text(encoding="utf-8", errors="replace")


SURFACES: list[Surface] = [
    Surface("python", "agent", python_outputs, compare=True),
    Surface(
        "cli (agent-facing)",
        "agent",
        cli_agent_outputs,
        compare=True,
        compared=cli_compared_outputs,
    ),
    Surface("cli (person-facing)", "person", cli_person_outputs),
    Surface("mcp stdio", "agent", mcp_stdio_outputs, compare=True),
    Surface("mcp http", "agent", mcp_http_outputs, compare=True),
    Surface("log files", "person", log_files),
]
"""Every interface. The memory, knowledge, code, tool-output and recall verbs are rows of the
Python, CLI and MCP surfaces."""
