"""The privacy gate, differentially (#12 acceptance, DESIGN §5): a query that matches only
quarantined or excluded canaries — in sessions, transcripts, memory entries, knowledge documents
and code files — gives, on every verb and every interface — Python, CLI text and
``--json``, MCP over stdio, stderr and the log — exactly the output of a query matching nothing,
byte for byte once the query's own echo is replaced. Unknown and denied ids, handles and
channels give the same output too.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

import recallbox
from backends import DbLocation
from recallbox.cli import cli
from recallbox.mcp_server import build_server

#: Each canary matches only denied rows; NOTHING matches nothing; all four have one length.
QUARANTINED = "CANARYQ-7f3a"
EXCLUDED = "CANARYX-9d2b"
PER_CALL = "CANARYP-1c4e"
#: Canaries of the curated and code domains: in memory entries (``MEMORY.md`` excluded), in an
#: excluded knowledge document and in an excluded code file.
MEMORY_C = "CANARYM-3e5f"
DOC_C = "CANARYK-8a1b"
CODE_C = "CANARYC-2d6f"
CANARIES = (QUARANTINED, EXCLUDED, MEMORY_C, DOC_C, CODE_C)
SECRET_DOC = "secret-notes.md"
SECRET_CODE = "secret_mod.py"
NOTHING = "NOTHING-00x0"
ECHO = "<QUERY>"
SESSION_X = "11111111-2222-4333-8444-555555555555"
SESSION_P = "66666666-7777-4888-9999-000000000000"


def transcript(session: str, canary: str) -> str:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": session,
            "timestamp": "2025-09-01T10:00:00.000Z",
            "message": {"role": "user", "content": f"please look at {canary} in the logs"},
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "sessionId": session,
            "timestamp": "2025-09-01T10:00:05.000Z",
            "message": {
                "id": "msg_1",
                "role": "assistant",
                "content": [{"type": "text", "text": f"{canary} is the secret build tag"}],
            },
        },
    ]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


@dataclass(frozen=True)
class World:
    db: Path | str
    copy: Callable[[str], Path | str]  # a copy of the world's database, named
    quarantined_id: str
    excluded_id: str
    excluded_channel: str
    handle: str
    source_handle: str
    unknown_id: str = "m_ffffffffffffffff"
    unknown_handle: str = "o_ffffffffffffffff"


@pytest.fixture(scope="module")
def world(
    module_db_location: DbLocation,
    module_db_copy: Callable[[str, str], Path | str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[World]:
    """The canaries' store, on each backend (module-wide: every interface reads the same)."""
    root = tmp_path_factory.mktemp("privacy")
    db = module_db_location("privacy")

    def copy(new: str) -> Path | str:
        return module_db_copy("privacy", new)

    (root / "secret-session.jsonl").write_text(transcript(SESSION_X, EXCLUDED), "utf-8")
    (root / "percall-session.jsonl").write_text(transcript(SESSION_P, PER_CALL), "utf-8")
    with recallbox.open(db) as box:
        box.append("ops", "user", "deploy billing to staging-03")
        box.append("ops", "assistant", "done; billing is up")
        secret = box.append(
            "vault",
            "assistant",
            f"the build tag is {QUARANTINED}",
            tool_calls=[
                {"id": "c", "name": "bash", "arguments": {"cmd": f"echo {QUARANTINED}"}}
            ],
        )
        stored = box.store_tool_output(
            "ok\n" * 6_000 + f"ERROR {QUARANTINED}\n", channel="vault", tool="bash"
        )
        sourced = box.store_tool_output(
            "ok\n" * 6_000 + f"ERROR {EXCLUDED}\n", source=str(root / "secret-session.jsonl")
        )
        report = box.import_transcripts(
            "claude-code", [root / "secret-session.jsonl", root / "percall-session.jsonl"]
        )
        (channel,) = report.files[0].channels  # keyed by file stem or session id
        excluded = box.messages(channel)[0]
        box.remember(f"the release build needs {MEMORY_C} set", type="pitfall")
        box.add_document(f"# Notes\n\n## Builds\n\nThe tag is {DOC_C}.\n", SECRET_DOC)
        box.add_document("# Public\n\n## Deploys\n\nDeploy billing daily.\n", "public.md")
        repo = root / "repo"
        repo.mkdir()
        (repo / SECRET_CODE).write_text(
            f'def build_tag():\n    """{CODE_C} is the build tag."""\n    return 1\n', "utf-8"
        )
        (repo / "public_mod.py").write_text("def deploy():\n    return 2\n", "utf-8")
        box.index_code(repo, scope="repo")
        for canary, domain in ((MEMORY_C, "memory"), (DOC_C, "knowledge"), (CODE_C, "code")):
            found = box.recall(canary, domains=[domain]).buckets[domain].hits
            assert found, f"{canary} is not found in {domain} before the policy"
        box.quarantine("vault")
        box.exclude_source("secret-session.jsonl")
        box.exclude_source("MEMORY.md")
        box.exclude_source(SECRET_DOC)
        box.exclude_source(SECRET_CODE)
        assert stored.handle is not None and sourced.handle is not None
    yield World(db, copy, secret.id, excluded.id, channel, stored.handle, sourced.handle)


def same(produce: Callable[[str], Any], canaries: tuple[str, ...] = CANARIES) -> None:
    """``produce(query)`` for each canary equals ``produce(NOTHING)``, echoes replaced."""
    baseline = _normal(produce(NOTHING), NOTHING)
    for canary in canaries:
        assert _normal(produce(canary), canary) == baseline, canary


def _normal(value: Any, query: str) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text.replace(query, ECHO)


def outcome(call: Callable[[], Any]) -> tuple[str, str]:
    """A verb's result, or its error class and text."""
    try:
        return "ok", _normal(call(), "\0")
    except recallbox.RecallError as exc:
        return type(exc).__name__, str(exc)


# -- Python --------------------------------------------------------------------------------------


def test_every_python_verb(world: World) -> None:
    with recallbox.open(world.db) as box:
        same(lambda q: box.search_memory(q))
        same(lambda q: box.search_memory(q, "ops"))
        for domain in ("memory", "knowledge", "sessions", "transcripts", "code"):
            same(lambda q, d=domain: [h.id for h in box.search(q, domain=d)])
            same(lambda q, d=domain: box.recall(q, domains=[d]).to_json())
        same(lambda q: box.recall(q).render())
        same(lambda q: box.recall(q).to_json())
        same(lambda q: box.recall(q, allow_embed=True).render())
        # a per-call exclusion denies as the stored policy does
        same(
            lambda q: box.recall(q, excluded=["percall-session.jsonl"]).render(),
            (*CANARIES, PER_CALL),
        )
        same(
            lambda q: box.search(q, domain="transcripts", excluded=["percall-session.jsonl"]),
            (PER_CALL,),
        )
        same(lambda q: str(box.recall_context(q)))
        same(lambda q: str(box.recall_context(q, source=SECRET_DOC)))
        same(lambda q: str(box.recall_context(q, source="public.md")))
        same(lambda q: box.memory_injection(q))


def test_denied_ids_handles_and_channels_read_like_unknown_ones(world: World) -> None:
    with recallbox.open(world.db) as box:
        for denied, unknown in (
            (world.quarantined_id, world.unknown_id),
            (world.excluded_id, world.unknown_id),
        ):
            for verb in (box.read_message, box.message_page):
                assert outcome(lambda v=verb, i=denied: v(i)) == outcome(
                    lambda v=verb, i=unknown: v(i)
                )
        for handle in (world.handle, world.source_handle):
            assert outcome(lambda h=handle: box.expand(h)) == outcome(
                lambda: box.expand(world.unknown_handle)
            )
        for channel in ("vault", world.excluded_channel):
            resumed = box.resume_context(channel).replace(channel, ECHO)
            assert resumed == box.resume_context("never-seen").replace("never-seen", ECHO)
            assert box.first_message_recall(channel, f"{QUARANTINED} {EXCLUDED}") == ""
            assert box.search_memory(QUARANTINED, channel).replace(channel, "C") == (
                box.search_memory(QUARANTINED, "never-seen").replace("never-seen", "C")
            )
        box.create_thread("fresh-a")
        box.create_thread("fresh-b")
        assert box.first_message_recall("fresh-a", f"{QUARANTINED} {EXCLUDED}") == (
            box.first_message_recall("fresh-b", NOTHING)
        )


def test_the_hit_log_learns_nothing_from_a_denied_match(world: World) -> None:
    with recallbox.open(world.copy("copy")) as box:
        before = box.hit_stats().rows
        for query in CANARIES:
            box.recall(query)
            box.recall_context(query)
            box.recall_context(query, source=SECRET_DOC)
            box.search(query)
            box.search_memory(query, "ops")
        assert box.hit_stats().rows == before


# -- CLI: text, --json and stderr ------------------------------------------------------------------


def cli_run(*args: str) -> tuple[int, str, str]:
    from click.testing import CliRunner

    result = CliRunner().invoke(cli, list(args), obj={})
    return result.exit_code, result.stdout, result.stderr


def test_every_cli_command(world: World) -> None:
    db = str(world.db)
    commands: list[list[str]] = [
        ["search-memory", "{q}"],
        ["search-memory", "{q}", "--channel", "ops"],
        ["search", "{q}"],
        ["search", "{q}", "--domain", "transcripts"],
        ["recall", "{q}"],
        ["recall", "{q}", "--domains", "sessions,transcripts"],
        ["recall", "{q}", "--domains", "memory,knowledge,code"],
        ["search", "{q}", "--domain", "memory"],
        ["search", "{q}", "--domain", "knowledge"],
        ["search", "{q}", "--domain", "code"],
    ]
    for command in commands:
        for flags in ([], ["--json"]):
            same(lambda q, c=command, f=flags: cli_run("--db", db, *[a.format(q=q) for a in c], *f))
    for flags in ([], ["--json"]):
        for denied, unknown, verb in (
            (world.quarantined_id, world.unknown_id, "read"),
            (world.excluded_id, world.unknown_id, "read"),
            (world.handle, world.unknown_handle, "expand"),
            (world.source_handle, world.unknown_handle, "expand"),
        ):
            got = cli_run("--db", db, verb, denied, *flags)
            want = cli_run("--db", db, verb, unknown, *flags)
            assert _normal(got, denied) == _normal(want, unknown)
        got = cli_run("--db", db, "resume", "vault", *flags)
        assert _normal(got, "vault") == _normal(
            cli_run("--db", db, "resume", "v0ult", *flags), "v0ult"
        )


# -- MCP over stdio, with the server's stderr --------------------------------------------------------


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def mcp_session(world: World, query: str, tmp_path: Path) -> tuple[list[Any], str]:
    """Every tool a canary could reach, over stdio; the results and the server's stderr."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "recallbox", "mcp", "--db", str(world.db)],
        env=_env(),
    )
    err_path = tmp_path / f"stderr-{query}.txt"
    denied = {QUARANTINED: world.quarantined_id, EXCLUDED: world.excluded_id}
    handles = {QUARANTINED: world.handle, EXCLUDED: world.source_handle}

    async def go() -> list[Any]:
        with err_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                calls = [
                    ("search_memory", {"query": query}),
                    ("search_memory", {"query": query, "channel": "ops"}),
                    ("recall", {"query": query}),
                    ("recall", {"query": query, "domains": ["sessions", "transcripts"]}),
                    ("recall", {"query": query, "domains": ["memory", "knowledge", "code"]}),
                    ("recall_context", {"query": query}),
                    ("recall_context", {"query": query, "source": SECRET_DOC}),
                    ("read_message", {"message_id": denied.get(query, world.unknown_id)}),
                    ("expand", {"handle": handles.get(query, world.unknown_handle)}),
                ]
                out = []
                for tool, args in calls:
                    result = await client.call_tool(tool, args)
                    out.append((tool, result.is_error, [c.text for c in result.content]))
                return out

    results = anyio.run(go)
    text, stderr = json.dumps(results), err_path.read_text(encoding="utf-8")
    for value in (
        world.quarantined_id,
        world.excluded_id,
        world.handle,
        world.source_handle,
        world.unknown_id,
        world.unknown_handle,
    ):  # the echo of the id asked for, like the query's
        text, stderr = text.replace(value, "<ID>"), stderr.replace(value, "<ID>")
    return [text.replace(query, ECHO)], stderr.replace(query, ECHO)


def test_mcp_over_stdio_and_its_stderr(world: World, tmp_path: Path) -> None:
    baseline, base_err = mcp_session(world, NOTHING, tmp_path)
    for canary in CANARIES:
        results, err = mcp_session(world, canary, tmp_path)
        assert results == baseline, canary
        assert _lines(err) == _lines(base_err), canary
        assert canary not in err


def _lines(stderr: str) -> list[str]:
    """The server's log lines, without the timing noise of a log formatter (none today)."""
    return [line for line in stderr.splitlines() if line.strip()]


def test_the_in_process_log_says_nothing_more(world: World) -> None:
    class Captured(logging.Handler):
        def __init__(self) -> None:
            super().__init__(level=logging.DEBUG)
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    def logged(query: str) -> list[str]:
        handler = Captured()
        root = logging.getLogger("recallbox")
        root.addHandler(handler)
        level = root.level
        root.setLevel(logging.DEBUG)
        try:
            with recallbox.open(world.db) as box:

                async def go() -> None:
                    async with Client(build_server(box=box)) as client:
                        await client.call_tool("recall", {"query": query})
                        await client.call_tool("search_memory", {"query": query})
                        await client.call_tool("recall_context", {"query": query})

                anyio.run(go)
        finally:
            root.removeHandler(handler)
            root.setLevel(level)
        return [line.replace(query, ECHO) for line in handler.lines]

    baseline = logged(NOTHING)
    for canary in CANARIES:
        assert logged(canary) == baseline
