"""The MCP server through the real SDK client: in-process, stdio subprocess, streamable HTTP."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client, StdioServerParameters

import recallbox
from recallbox import THREAD_SEARCH_MAX_CHARS
from recallbox.config import Settings
from recallbox.domains.other_memory import answer_budget
from recallbox.domains.threads import THREAD_LITERAL_MAX_CHARS
from recallbox.mcp_server import build_server, clip
from recallbox.text.windows import (
    MCP_RESULT_META_RESERVE_CHARS,
    MCP_TEXT_MAX_CHARS,
    SEP,
    WINDOW_CHARS,
)

#: DESIGN §8: exactly six tools, each one Box verb.
EXPECTED_TOOLS = {"search_memory", "read_message", "recall", "recall_context", "remember", "expand"}
WRITING_TOOLS = {"remember"}
FILLER = "heartbeat ok; all systems nominal\n"


def seed(db: Path) -> dict[str, str]:
    with recallbox.open(db) as box:
        call = box.append(
            "agent:1",
            "assistant",
            "logging in",
            tool_calls=[
                {
                    "id": "c1",
                    "name": "bash",
                    "arguments": {"command": "ssh -i ~/.ssh/prod_key ops@db-7"},
                }
            ],
        )
        out = box.append(
            "agent:1",
            "tool",
            FILLER * 3000 + "connected to db-7.internal\n" + FILLER * 3000,
            tool_call_id="c1",
        )
        box.compact("agent:1", "Logged in to the database host.")
        secret = box.append("private:1", "user", "the vault password is hunter2-unique")
        hidden = box.store_tool_output(FILLER * 2000 + "vault token zq-77\n", channel="private:1")
        box.quarantine("private:1")
        box.remember("Check db-7 replication lag before a failover", type="pitfall")
        box.add_document(RUNBOOK, "ops/runbook.md")
        box.add_document("## Vault\nthe vault canary hunter3-unique\n", "private/secret.md")
        box.exclude_source("secret.md")
        stored = box.store_tool_output(
            FILLER * 2000 + "ERROR db-7 refused the key\n" + FILLER * 2000, channel="agent:1"
        )
    assert stored.handle is not None and hidden.handle is not None
    return {
        "call": call.id,
        "output": out.id,
        "secret": secret.id,
        "handle": stored.handle,
        "hidden_handle": hidden.handle,
    }


RUNBOOK = (
    "## Failover\n- promote db-8 when db-7 lags\n- [message_id=m_fake] update DNS\n\n"
    + "".join(
        f"## Step {i}\n" + f"- routine step {i} of db-7 maintenance\n" * 40 for i in range(30)
    )
)


def payload_chars(result: Any) -> int:
    """The whole CallToolResult: its text, any structured copy and the SDK's ``_meta`` stamp."""
    total = sum(len(getattr(block, "text", "") or "") for block in result.content)
    if result.structured_content is not None:
        total += len(json.dumps(result.structured_content, ensure_ascii=False))
    if result.meta:
        total += len(json.dumps(result.meta, ensure_ascii=False))
    return total


def server_for(db: Path) -> Any:
    return build_server(Settings(home=db.parent, db=str(db)))


def run(coro_fn: Any) -> Any:
    return anyio.run(coro_fn)


def test_lists_exactly_the_tools_with_schemas_and_annotations(db_path: Path) -> None:
    seed(db_path)

    async def go() -> Any:
        async with Client(server_for(db_path)) as client:
            return await client.list_tools()

    tools = {t.name: t for t in run(go).tools}
    assert set(tools) == EXPECTED_TOOLS
    for tool in tools.values():
        read_only = tool.name not in WRITING_TOOLS
        assert tool.annotations is not None and tool.annotations.read_only_hint is read_only
        assert tool.annotations.destructive_hint is False
        assert tool.output_schema is None  # text only: the cap covers the whole result
    # each search tool names its follow-up call
    for name, follow_up in (
        ("search_memory", "read_message"),
        ("recall", "read_message"),
        ("expand", "expand"),
        ("remember", "recall_context"),
    ):
        assert follow_up in (tools[name].description or ""), name
    remember = tools["remember"]
    assert remember.annotations is not None and remember.annotations.idempotent_hint is True
    assert "would it still help in another project?" in (remember.description or "")
    assert remember.input_schema["required"] == ["text"]
    assert remember.input_schema["properties"]["type"]["default"] == "guideline"
    assert remember.input_schema["properties"]["type"]["enum"] == list(recallbox.MEMORY_TYPES)
    assert remember.input_schema["properties"]["title"]["default"] is None
    context = tools["recall_context"].input_schema
    assert context["required"] == ["query"]
    assert context["properties"]["source"]["default"] == "MEMORY.md"
    search = tools["search_memory"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["channel"]["default"] is None
    read = tools["read_message"].input_schema
    assert read["required"] == ["message_id"]
    assert read["properties"]["view"]["default"] == "audit"
    assert read["properties"]["view"]["enum"] == ["audit", "model"]
    assert read["properties"]["offset"]["default"] == 0
    recall = tools["recall"].input_schema
    assert recall["required"] == ["query"]
    assert recall["properties"]["budget_chars"]["default"] == 12_000
    assert recall["properties"]["domains"]["default"] is None
    assert "memory" in json.dumps(recall["properties"]["domains"])
    expand = tools["expand"].input_schema
    assert expand["required"] == ["handle"] and expand["properties"]["offset"]["default"] == 0


def test_search_and_read_through_the_client(db_path: Path) -> None:
    ids = seed(db_path)

    async def go() -> tuple[Any, Any, Any]:
        async with Client(server_for(db_path)) as client:
            found = await client.call_tool("search_memory", {"query": "connected to db-7"})
            page = await client.call_tool("read_message", {"message_id": ids["output"]})
            nxt = await client.call_tool(
                "read_message", {"message_id": ids["output"], "offset": 12_000}
            )
            return found, page, nxt

    found, page, nxt = run(go)
    text = found.content[0].text
    assert not found.is_error and found.structured_content is None
    assert "connected to db-7.internal" in text and ids["output"] in text
    assert len(text) <= THREAD_SEARCH_MAX_CHARS
    assert not page.is_error and len(page.content[0].text) <= THREAD_SEARCH_MAX_CHARS
    assert f"read_message({ids['output']}, offset=" in page.content[0].text
    assert nxt.content[0].text != page.content[0].text


def test_errors_say_how_to_fix_and_hide_quarantined_ids(db_path: Path) -> None:
    ids = seed(db_path)

    async def go() -> tuple[Any, Any, Any, Any]:
        async with Client(server_for(db_path)) as client:
            unknown = await client.call_tool("read_message", {"message_id": "m_doesnotexist00"})
            hidden = await client.call_tool("read_message", {"message_id": ids["secret"]})
            bad_view = await client.call_tool(
                "read_message", {"message_id": ids["call"], "view": "raw"}
            )
            leak = await client.call_tool("search_memory", {"query": "hunter2-unique"})
            nothing = await client.call_tool("search_memory", {"query": "zzqq-nowhere"})
            return unknown, hidden, bad_view, leak, nothing

    unknown, hidden, bad_view, leak, nothing = run(go)
    assert unknown.is_error and hidden.is_error and bad_view.is_error
    unknown_text = unknown.content[0].text
    assert "unknown message id" in unknown_text
    assert "ids come from search_memory results" in unknown_text
    assert hidden.content[0].text == unknown_text.replace("m_doesnotexist00", ids["secret"])
    # A query matching only a quarantined thread reads exactly like one matching nothing.
    leak_text = leak.content[0].text.replace("hunter2-unique", "Q")
    assert leak_text == nothing.content[0].text.replace("zzqq-nowhere", "Q")
    assert ids["secret"] not in leak.content[0].text


def test_remember_and_recall_context_through_the_client(db_path: Path) -> None:
    seed(db_path)

    async def go() -> list[Any]:
        async with Client(server_for(db_path)) as client:
            calls = [
                ("remember", {"text": "Never restart db-7 during backups", "type": "pitfall"}),
                ("remember", {"text": "Never restart db-7 during backups"}),
                ("remember", {"text": "x", "type": "lesson"}),
                ("remember", {"text": "   "}),
                ("recall_context", {"query": "restart backups"}),
                ("recall_context", {"query": "promote DNS", "source": "runbook.md"}),
                ("recall_context", {"query": "kangaroo"}),
                ("recall_context", {"query": "vault canary", "source": "secret.md"}),
                ("recall_context", {"query": "vault canary", "source": "nothing-here.md"}),
            ]
            return [await client.call_tool(name, args) for name, args in calls]

    (first, again, bad_type, empty, memory, runbook, nothing, secret, unknown) = run(go)
    assert not first.is_error and first.content[0].text.startswith("PIT02 (pitfall, active)")
    assert again.content[0].text == first.content[0].text  # the same text: the same entry
    assert bad_type.is_error and empty.is_error
    assert "remember needs the lesson's text" in empty.content[0].text
    assert memory.content[0].text == (
        recallbox.RECALL_CONTEXT_HEADER + "\n## Pitfalls\n\n- Never restart db-7 during backups"
    )
    assert runbook.content[0].text == (
        recallbox.RECALL_CONTEXT_HEADER
        + "\n## Failover\n\n- promote db-8 when db-7 lags\n- [message_id=m_fake] update DNS"
    )
    assert not nothing.is_error and "shares a word" in nothing.content[0].text
    assert secret.is_error and secret.content[0].text == unknown.content[0].text
    assert "source not available" in secret.content[0].text
    assert "hunter3" not in secret.content[0].text


CONTEXT_QUERIES = st.one_of(
    st.text(max_size=200),
    st.sampled_from(["db-7", "routine step maintenance", "召回", "\x00", '"', "[", "\\"]),
    st.lists(st.sampled_from(["routine", "step", "db-7", "of", "maintenance"]), max_size=8).map(
        " ".join
    ),
)


@settings(max_examples=60)
@given(query=CONTEXT_QUERIES, source=st.sampled_from(["MEMORY.md", "runbook.md", "x.md"]))
def test_every_recall_context_result_is_capped(
    tmp_path_factory: pytest.TempPathFactory, query: str, source: str
) -> None:
    db = shared_db(tmp_path_factory)

    async def go() -> Any:
        async with Client(server_for(db)) as client:
            return await client.call_tool("recall_context", {"query": query, "source": source})

    assert payload_chars(run(go)) <= RESULT_MAX_CHARS


def test_recall_and_expand_through_the_client(db_path: Path) -> None:
    ids = seed(db_path)

    async def go() -> tuple[Any, ...]:
        async with Client(server_for(db_path)) as client:
            return (
                await client.call_tool("recall", {"query": "connected to db-7"}),
                await client.call_tool(
                    "recall", {"query": "db-7", "domains": ["sessions"], "budget_chars": 1_000}
                ),
                await client.call_tool("recall", {"query": "db-7", "budget_chars": 999}),
                await client.call_tool("expand", {"handle": ids["handle"]}),
                await client.call_tool(
                    "expand", {"handle": ids["handle"], "offset": len(FILLER) * 2000 - 100}
                ),
                await client.call_tool("expand", {"handle": ids["hidden_handle"]}),
                await client.call_tool("expand", {"handle": "o_0000000000000000"}),
                await client.call_tool("recall", {"query": "hunter2-unique"}),
                await client.call_tool("recall", {"query": "zzqq-nowhere"}),
            )

    whole, small, bad, page, later, hidden, unknown, leak, nothing = run(go)
    text = whole.content[0].text
    assert not whole.is_error and text.startswith(recallbox.RECALL_HEADER)
    assert ids["output"] in text and "[bucket=sessions layer=keyword]" in text
    assert not small.is_error and len(small.content[0].text) <= 1_000
    assert bad.is_error and "budget_chars must be an int from 1000 to 12000" in bad.content[0].text
    assert not page.is_error and "ERROR db-7 refused the key" not in page.content[0].text
    assert f"expand({ids['handle']}, offset=" in page.content[0].text
    assert "ERROR db-7 refused the key" in later.content[0].text
    assert hidden.is_error and unknown.is_error
    assert hidden.content[0].text == unknown.content[0].text.replace(
        "o_0000000000000000", ids["hidden_handle"]
    )
    assert leak.content[0].text == nothing.content[0].text
    for result in (whole, small, page, later):
        assert payload_chars(result) <= THREAD_SEARCH_MAX_CHARS


@settings(max_examples=200)
@given(
    tool=st.sampled_from(["recall", "expand"]),
    text=st.text(max_size=300),
    number=st.one_of(st.integers(-5, 20_000), st.sampled_from([0, 1_000, 12_000, 10**30])),
)
def test_every_recall_and_expand_result_is_capped(
    served_box: recallbox.Box, tool: str, text: str, number: int
) -> None:
    """≥ 200 examples through the real client: the whole CallToolResult stays ≤ 12 000."""
    if tool == "recall":
        args: dict[str, Any] = {"query": text or "db-7", "budget_chars": number}
    else:
        handle = text or _SHARED_IDS["handle"]
        args = {"handle": handle, "offset": number}

    async def go() -> Any:
        async with Client(build_server(box=served_box)) as client:
            return await client.call_tool(tool, args)

    assert payload_chars(run(go)) <= THREAD_SEARCH_MAX_CHARS


QUERIES = st.one_of(
    st.text(max_size=200),
    st.sampled_from(
        ['"', "\\", "%", "_", "*", "OR", "NEAR(", "\x00", "\ud800", "召回", "🙂", "ssh"]
    ),
    st.text(alphabet='ab召 "%_\\', min_size=1, max_size=10_000),
)


@settings(max_examples=200)
@given(query=QUERIES, with_channel=st.booleans())
def test_every_result_is_capped(
    tmp_path_factory: pytest.TempPathFactory, query: str, with_channel: bool
) -> None:
    db = shared_db(tmp_path_factory)
    args: dict[str, Any] = {"query": query}
    if with_channel:
        args["channel"] = "agent:1"

    async def go() -> Any:
        async with Client(server_for(db)) as client:
            return await client.call_tool("search_memory", args)

    result = run(go)
    assert payload_chars(result) <= THREAD_SEARCH_MAX_CHARS


_SHARED: dict[str, Path] = {}
_SHARED_IDS: dict[str, str] = {}


def shared_db(factory: pytest.TempPathFactory) -> Path:
    if "db" not in _SHARED:
        db = factory.mktemp("mcp-shared") / "shared.db"
        _SHARED_IDS.update(seed(db))
        with recallbox.open(db) as box:
            box.append_many(
                "agent:1",
                [
                    {"role": "tool", "content": ("ab召 %_\\ " * 4000)[: 30_000 + i]}
                    for i in range(20)
                ],
            )
        _SHARED["db"] = db
    return _SHARED["db"]


ANSWER_DRAIN_TIMEOUT_S = 120
SEEDED_ID = "<the seeded tool output's id>"
SEEDED_HANDLE = "<the seeded stored output's handle>"
HUGE_CHARS = 100_000
RESULT_MAX_CHARS = 12_000
LOG_LINE_MAX_CHARS = 1_000
SEEDS = st.one_of(
    st.sampled_from(
        ["x", "m_", "召", "\ud800", " ", '"', "%_\\", "ssh -i ", "connected to db-7", "🙂\n"]
    ),
    st.text(min_size=1, max_size=12),
)
TOOL_PARAMETERS = {
    "search_memory": ("query", "channel"),
    "read_message": ("message_id", "view", "offset"),
    "remember": ("text", "type", "title"),
    "recall_context": ("query", "source"),
    "recall": ("query", "domains", "budget_chars"),
    "expand": ("handle", "offset"),
}


def huge(seed: str) -> str:
    return (seed * (HUGE_CHARS // len(seed) + 1))[:HUGE_CHARS]


@st.composite
def huge_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A tool and the recipe of its arguments: a value, or ``Huge(seed)`` for 100 000 characters
    of ``seed`` repeated (expanded by the test: hypothesis would print the huge values)."""
    tool = draw(st.sampled_from(sorted(TOOL_PARAMETERS)))
    valid: dict[str, Any] = {
        "query": "connected to db-7",
        "channel": "agent:1",
        "text": "a lesson about db-7",
        "type": draw(st.sampled_from(["pitfall", "guideline"])),
        "title": None,
        "source": draw(st.sampled_from(["MEMORY.md", "runbook.md"])),
        "message_id": SEEDED_ID,  # replaced by a real id once the database exists
        "view": "audit",
        "offset": draw(st.sampled_from([0, 12_000, 10**30, -(10**30)])),
        "domains": draw(st.sampled_from([None, ["sessions"], ["bogus"]])),
        "budget_chars": draw(st.sampled_from([12_000, 1_000, 10**30])),
        "handle": SEEDED_HANDLE,
    }
    names = TOOL_PARAMETERS[tool]
    big = draw(st.sets(st.sampled_from(names), min_size=1))
    recipe = {name: Huge(draw(SEEDS)) if name in big else valid[name] for name in names}
    if draw(st.booleans()):
        recipe[Huge(draw(SEEDS))] = Huge(draw(SEEDS))  # an unknown argument, huge name and value
    return tool, recipe


@dataclass(frozen=True)
class Huge:
    seed: str

    def expand(self) -> str:
        return huge(self.seed)


def expand(value: Any) -> Any:
    if isinstance(value, Huge):
        return value.expand()
    if value == SEEDED_HANDLE:
        return _SHARED_IDS["handle"]
    return _SHARED_IDS["output"] if value == SEEDED_ID else value


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture(scope="module")
def served_box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[recallbox.Box]:
    """One Box for the whole property test, as a running server holds one.

    Trigger: an other-memory answer of a 100 000-character identifier query runs past
    OTHER_MEMORY_TIMEOUT_S. Why: closing the Box while it still runs raises apsw's
    ThreadingViolationError (reported; box/storage are being reworked). Outcome: the Box is
    closed once, after the last running answer ended.
    """
    box = recallbox.open(shared_db(tmp_path_factory))
    yield box
    deadline = time.monotonic() + ANSWER_DRAIN_TIMEOUT_S
    while box._answers.running and time.monotonic() < deadline:
        time.sleep(0.05)
    box.close()


@settings(max_examples=40)
@given(call=huge_calls())
def test_huge_arguments_never_make_a_result_or_log_line_over_the_cap(
    served_box: recallbox.Box, call: tuple[str, dict[str, Any]]
) -> None:
    """Every tool, through the real SDK client, with 100 000-character arguments: the whole
    CallToolResult stays within 12 000 characters and no log line echoes the argument."""
    tool, recipe = call
    args = {expand(k): expand(v) for k, v in recipe.items()}
    handler = Captured()
    loggers = [logging.getLogger(name) for name in ("mcp", "recallbox")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(handler)
        lg.setLevel(logging.DEBUG)

    async def go() -> Any:
        async with Client(build_server(box=served_box)) as client:
            return await client.call_tool(tool, args)

    try:
        result = run(go)
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.removeHandler(handler)
            lg.setLevel(level)
    assert payload_chars(result) <= RESULT_MAX_CHARS
    assert all(len(line) <= LOG_LINE_MAX_CHARS for line in handler.lines)


def test_an_unknown_id_is_echoed_cut_to_80_characters(db_path: Path) -> None:
    """Fix: `read_message` with a 100 000-character id no longer answers 100 091 characters."""
    seed(db_path)

    async def go() -> Any:
        async with Client(server_for(db_path)) as client:
            return await client.call_tool("read_message", {"message_id": "m_" + "0" * 99_998})

    result = run(go)
    text = result.content[0].text
    assert result.is_error
    assert text == (
        "Error executing tool read_message: unknown message id m_"
        + "0" * 77
        + "…; ids come from search_memory results"
    )


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


CLAUDE_FIXTURES = Path(__file__).parent / "importers" / "fixtures" / "claude-code" / "projects"
CLAUDE_SESSION = "7f3c2a10-5b6d-4e8f-9a01-23456789abcd"


def test_stdio_subprocess_finds_pre_compaction_output_of_an_imported_session(
    db_path: Path,
) -> None:
    channel = f"claude-code:{CLAUDE_SESSION}"
    with recallbox.open(db_path) as box:
        box.import_transcripts(
            "claude-code", [CLAUDE_FIXTURES / "-home-dev-app" / f"{CLAUDE_SESSION}.jsonl"]
        )
        assert box.thread(channel).generation_count == 2
        [tool] = [m for m in box.messages(channel, generation=1) if m.role == "tool"][:1]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallbox", "--db", str(db_path), "mcp"],
        env=_env(),
    )

    async def go() -> Any:
        async with Client(params) as client:
            return await client.call_tool(
                "search_memory", {"query": tool.content[:40], "channel": channel}
            )

    async def listed() -> Any:
        async with Client(params) as client:
            tools = await client.list_tools()
            found = await client.call_tool("recall", {"query": tool.content[:40]})
            return tools, found

    result = run(go)
    assert not result.is_error
    text = result.content[0].text
    assert f"[message_id={tool.id} generation=1 role=tool field=content]" in text
    assert len(text) <= THREAD_SEARCH_MAX_CHARS
    tools, recalled = run(listed)
    assert {t.name for t in tools.tools} == EXPECTED_TOOLS
    assert not recalled.is_error and tool.id in recalled.content[0].text


def test_stdio_subprocess_remembers_and_recalls_context(db_path: Path) -> None:
    seed(db_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "recallbox", "--db", str(db_path), "mcp"], env=_env()
    )

    async def go() -> tuple[Any, Any, Any]:
        async with Client(params) as client:
            listed = await client.list_tools()
            saved = await client.call_tool(
                "remember", {"text": "Page the DBA before promoting db-8", "title": "Page first"}
            )
            found = await client.call_tool("recall_context", {"query": "promoting db-8 DBA"})
            return listed, saved, found

    listed, saved, found = run(go)
    assert {t.name for t in listed.tools} == EXPECTED_TOOLS
    assert saved.content[0].text.startswith("GDL01 (guideline, active)")
    assert found.content[0].text == (
        recallbox.RECALL_CONTEXT_HEADER
        + "\n## Guidelines\n\n- **Page first**\n  Page the DBA before promoting db-8"
    )
    with recallbox.open(db_path) as box:
        assert box.store.memory_entry("GDL01") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_streamable_http_on_loopback(db_path: Path) -> None:
    ids = seed(db_path)
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
            "--port",
            str(port),
        ],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)

        async def go() -> Any:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                tools = await client.list_tools()
                page = await client.call_tool("expand", {"handle": ids["handle"]})
                read = await client.call_tool(
                    "read_message", {"message_id": ids["call"], "view": "model"}
                )
                return tools, page, read

        tools, page, result = run(go)
        assert {t.name for t in tools.tools} == EXPECTED_TOOLS
        assert not page.is_error and ids["handle"] in page.content[0].text
        assert not result.is_error and "ssh -i ~/.ssh/prod_key ops@db-7" in result.content[0].text
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stderr is not None:
            proc.stderr.close()


INSPECTOR = "@modelcontextprotocol/inspector@2.12.0"


@pytest.mark.slow
def test_mcp_inspector_cli_lists_the_tools(db_path: Path) -> None:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("node/npx is not installed: the MCP Inspector check needs it")
    seed(db_path)
    out = subprocess.run(
        [
            npx,
            "-y",
            INSPECTOR,
            "--cli",
            sys.executable,
            "-m",
            "recallbox",
            "--db",
            str(db_path),
            "mcp",
            "--method",
            "tools/list",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=_env(),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    listed = json.loads(out.stdout)
    assert {t["name"] for t in listed["tools"]} == EXPECTED_TOOLS


def test_the_huge_argument_test_drives_every_tool_and_every_parameter(db_path: Path) -> None:
    """A tool added to the server joins the property test above (its parameters listed)."""
    seed(db_path)

    async def go() -> Any:
        async with Client(server_for(db_path)) as client:
            return await client.list_tools()

    listed = {t.name: set(t.input_schema["properties"]) for t in run(go).tools}
    assert listed == {tool: set(names) for tool, names in TOOL_PARAMETERS.items()}


def test_an_unknown_tool_with_a_huge_name_is_a_short_error(db_path: Path) -> None:
    """The SDK echoed a 100 000-character tool name whole, in the result and its log line."""
    seed(db_path)
    handler = Captured()
    sdk = logging.getLogger("mcp")
    level = sdk.level
    sdk.addHandler(handler)
    sdk.setLevel(logging.DEBUG)

    async def go() -> Any:
        async with Client(server_for(db_path)) as client:
            return await client.call_tool(huge("search_memory"), {"query": huge("x")})

    try:
        result = run(go)
    finally:
        sdk.removeHandler(handler)
        sdk.setLevel(level)
    assert result.is_error and result.content[0].text == "Unknown tool: " + clip(
        huge("search_memory")
    )
    assert all(len(line) <= LOG_LINE_MAX_CHARS for line in handler.lines)


def test_a_full_expand_page_stays_within_the_cap_with_the_sdk_meta(tmp_path: Path) -> None:
    """Found by the huge-arguments property (offset "000…0" is page 0): a full page plus the
    SDK's serverInfo ``_meta`` stamp came to 12 080 characters."""
    box = recallbox.open(tmp_path / "x.db")
    try:
        stored = box.store_tool_output("line of output number 1234567\n" * 4000, tool="bash")

        async def go() -> Any:
            async with Client(build_server(box=box)) as client:
                return await client.call_tool("expand", {"handle": stored.handle, "offset": 0})

        result = run(go)
        assert result.meta  # the stamp this test is about
        assert "Continue with" in result.content[0].text  # a full page, not the whole output
        assert payload_chars(result) <= RESULT_MAX_CHARS
    finally:
        box.close()


def _call_tool(box: recallbox.Box, tool: str, args: dict[str, Any]) -> Any:
    async def go() -> Any:
        async with Client(build_server(box=box)) as client:
            return await client.call_tool(tool, args)

    return run(go)


NEEDLE = "kestrel-needle-42"


def test_a_full_read_message_page_stays_within_the_cap_with_the_sdk_meta(tmp_path: Path) -> None:
    """A page filled to the page cap, plus the SDK's ``_meta`` stamp, is still ≤ 12 000."""
    with recallbox.open(tmp_path / "x.db") as box:
        message = box.append("agent:1", "tool", "0123456789 abcdefghij\n" * 5_000)
        result = _call_tool(box, "read_message", {"message_id": message.id})
        text = result.content[0].text
        assert result.meta and not result.is_error
        assert "Continue with read_message" in text
        assert MCP_TEXT_MAX_CHARS - MCP_RESULT_META_RESERVE_CHARS < len(text) <= MCP_TEXT_MAX_CHARS
        assert payload_chars(result) <= RESULT_MAX_CHARS


def test_a_full_search_memory_result_stays_within_the_cap_with_the_sdk_meta(
    tmp_path: Path,
) -> None:
    """The literal part at its cap and a full other-memory part (the default answerer), plus
    the SDK's ``_meta`` stamp, stay ≤ 12 000; so does a pluggable answerer that ignores its
    budget (the merge cuts it, marked, under the MCP text cap)."""
    filler = "lorem ipsum dolor sit amet " * 40
    with recallbox.open(tmp_path / "x.db") as box:
        for i in range(30):
            box.append("agent:1", "tool", f"{filler}{NEEDLE} run {i} {filler}")
        for i in range(30):
            box.remember(f"Lesson {i}: {NEEDLE} means {filler[: 400 + i]}", type="pitfall")
        result = _call_tool(box, "search_memory", {"query": NEEDLE, "channel": "agent:1"})
        text = result.content[0].text
        literal, answer = text.split(SEP)
        assert len(literal) > THREAD_LITERAL_MAX_CHARS - 2 * WINDOW_CHARS  # a full literal part
        assert "[bucket=memory" in answer
        # The default answerer was budgeted for the MCP text cap, and filled most of it.
        assert answer_budget(MCP_TEXT_MAX_CHARS) - WINDOW_CHARS < len(answer)
        assert len(answer) <= answer_budget(MCP_TEXT_MAX_CHARS)
        assert len(text) <= MCP_TEXT_MAX_CHARS
        assert payload_chars(result) <= RESULT_MAX_CHARS
    with recallbox.open(tmp_path / "y.db") as box:
        box.answerer = lambda query, channel: "x" * 20_000
        for i in range(30):
            box.append("agent:1", "tool", f"{filler}{NEEDLE} run {i} {filler}")
        result = _call_tool(box, "search_memory", {"query": NEEDLE, "channel": "agent:1"})
        text = result.content[0].text
        assert text.endswith("…truncated") and len(text) == MCP_TEXT_MAX_CHARS
        assert payload_chars(result) <= RESULT_MAX_CHARS


def test_a_full_recall_at_budget_12000_stays_within_the_cap_with_the_sdk_meta(
    tmp_path: Path,
) -> None:
    """``recall`` asked for the whole 12 000 budget over enough hits to fill it: the text is
    budgeted to the MCP text cap, so the whole result with its ``_meta`` stays ≤ 12 000."""
    with recallbox.open(tmp_path / "x.db") as box:
        for i in range(40):
            box.remember(f"Lesson {i}: {NEEDLE} " + "word " * (120 + i), type="guideline")
            box.append(f"agent:{i % 4}", "tool", f"{NEEDLE} output {i} " + "line " * 300)
        args = {"query": NEEDLE, "domains": ["sessions"], "budget_chars": 12_000}
        result = _call_tool(box, "recall", args)
        text = result.content[0].text
        assert not result.is_error and text.startswith(recallbox.RECALL_HEADER)
        # Full (at budget 12 000 the render is about 11 840 characters), within the text cap.
        assert MCP_TEXT_MAX_CHARS - 2 * WINDOW_CHARS < len(text) <= MCP_TEXT_MAX_CHARS
        assert payload_chars(result) <= RESULT_MAX_CHARS
