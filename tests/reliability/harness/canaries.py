"""Privacy canaries: unique words planted in quarantined threads and excluded-source
transcripts inside a large randomized session, then every output of every interface scanned.

Each denied message carries two canaries, ``A … B``: a surface is queried with ``A`` (and with
the words around it) and must never show ``B`` — nor any other canary, nor a denied channel
name when the surface is agent-facing. A query that matches only denied items must produce what
a query that matches nothing produces (a never-stored word in its place).

:data:`SURFACES` is the one table of interfaces: each :class:`Surface` turns a
:class:`Planted` session into the texts it outputs. A later domain (memory, knowledge, code,
tool outputs, recall) adds its verbs as rows there.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import recallbox
from reliability.harness import corpus

CANARY_PREFIX = "zqcanary"
VECTOR_MARK = " [vector leg]"
"""Labels outputs ranked by vector similarity: another query text ranks allowed items
differently, so these are scanned for leaks but not compared with a no-match query."""
QUARANTINE_PREFIX = "quarantined"


@dataclass(slots=True)
class Planted:
    """A planted session: where it is, what is denied and what may be queried."""

    db: Path
    work: Path
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (query canary, leak canary)
    denied_ids: list[str] = field(default_factory=list)
    denied_channels: list[str] = field(default_factory=list)
    allowed_ids: list[str] = field(default_factory=list)
    allowed_channels: list[str] = field(default_factory=list)
    denied_handles: list[str] = field(default_factory=list)
    messages: int = 0

    @property
    def canaries(self) -> set[str]:
        return {c for pair in self.pairs for c in pair}

    def queries(self, rng: random.Random, n: int) -> list[str]:
        """Queries: a canary alone, with common words, as a phrase, in another case."""
        picks = rng.sample(self.pairs, min(n, len(self.pairs)))
        out = []
        for i, (a, _) in enumerate(picks):
            out.append([a, f"deploy {a}", f'"{a}"', a.upper(), f"{a[:-2]}*"][i % 5])
        return out


def canary(rng: random.Random) -> str:
    return CANARY_PREFIX + "".join(rng.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(10))


def plant(root: Path, *, threads: int, per_thread: int, seed: int = 0) -> Planted:
    """A randomized session (see the module docstring). One thread in five is quarantined;
    two transcripts are imported from sources that are then excluded (one excluded by name,
    one by a hard link to it)."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    planted = Planted(root / "canaries.db", root)
    with recallbox.open(planted.db, embedder="hash") as box:
        for t in range(threads):
            denied = t % 5 == 2
            channel = f"{QUARANTINE_PREFIX}:{t}" if denied else f"agent:{t}"
            rows = []
            for i in range(per_thread):
                text = f"{corpus.sentence(rng, 8)} step {i}"
                pair: tuple[str, str] | None = None
                if denied and rng.random() < 0.3:
                    pair = (canary(rng), canary(rng))
                    text = f"{pair[0]} {corpus.sentence(rng, 4)} {pair[1]} {text}"
                row: dict[str, Any] = {"role": rng.choice(["user", "assistant"]), "content": text}
                if denied and rng.random() < 0.2:
                    leak = (canary(rng), canary(rng))
                    row = {
                        "role": "assistant",
                        "content": f"{leak[0]} calling a tool",
                        "tool_calls": [
                            {
                                "id": f"c{t}x{i}",
                                "name": "Bash",
                                "arguments": {"command": f"echo {leak[1]}"},
                            }
                        ],
                        "metadata": {"note": leak[1]},
                    }
                    planted.pairs.append(leak)
                if pair:
                    planted.pairs.append(pair)
                rows.append(row)
            stored = box.append_many(channel, rows)
            (planted.denied_ids if denied else planted.allowed_ids).extend(m.id for m in stored)
            (planted.denied_channels if denied else planted.allowed_channels).append(channel)
            planted.messages += len(stored)
            if denied and t % 2:
                box.compact(channel, f"summary {canary(rng)} of the quarantined work")
        box.embed_all()  # vectors exist for denied text too: the gate must hold on that leg
        for t in range(threads):
            if t % 5 == 2:
                box.quarantine(f"{QUARANTINE_PREFIX}:{t}")
        for n, mode in enumerate(("name", "link")):
            session = f"excluded{n}"
            lines = corpus.claude_records(session, 6, seed=seed + n)
            pairs = [(canary(rng), canary(rng)) for _ in range(3)]
            lines += [
                json.dumps(
                    {
                        "type": "user",
                        "uuid": f"{session}-c{k}",
                        "parentUuid": None,
                        "sessionId": session,
                        "timestamp": "2026-02-01T00:00:00Z",
                        "message": {"role": "user", "content": f"{a} secret {b}"},
                    }
                )
                for k, (a, b) in enumerate(pairs)
            ]
            path = root / "transcripts" / f"{session}.jsonl"
            corpus.write_lines(path, lines)
            report = box.import_transcripts("claude-code", [path])
            channels = [c for f in report.files for c in f.channels]
            planted.denied_channels += channels
            for channel in channels:
                planted.denied_ids += [m.id for m in box.messages(channel)]
            planted.pairs += pairs
            if mode == "name":
                box.exclude_source(path.name)
            else:
                link = root / f"alias-{session}.jsonl"
                os.link(path, link)
                box.exclude_source(str(link))
        _plant_curated(box, planted, rng)
        box.embed_all()
    return planted


DENIED_DOCUMENTS = ("private/secret-notes.md", "vault/keys.md")
"""Knowledge documents planted with canaries: the first is excluded by basename, the second by
path; ``MEMORY.md`` is excluded too (every memory entry is denied)."""
EXCLUSIONS = ("secret-notes.md", "vault/keys.md", "MEMORY.md")
DENIED_CODE_FILE = "secret_keys.py"
"""A code file planted with canaries (function names, docstrings, bodies), excluded by name."""
OUTPUT_LINES = 300
"""Lines of a planted tool output (long enough to be stored behind a handle)."""


def _pair(planted: Planted, rng: random.Random) -> tuple[str, str]:
    pair = (canary(rng), canary(rng))
    planted.pairs.append(pair)
    return pair


def _plant_curated(box: recallbox.Box, planted: Planted, rng: random.Random) -> None:
    """The other domains (#10, #12): denied documents, memory entries and tool outputs."""
    box.add_document("# Guide\n\n## Deploy\n\ndeploy staging with care\n", "public/guide.md")
    for source in DENIED_DOCUMENTS:
        sections = []
        for k in range(4):
            a, b = _pair(planted, rng)
            sections.append(f"## Step {k} {a}\n\n{corpus.sentence(rng, 6)} {b} deploy\n")
        box.add_document("# Notes\n\n" + "\n".join(sections), source)
    for _ in range(6):
        a, b = _pair(planted, rng)
        box.remember(f"{a} {corpus.sentence(rng, 5)} deploy {b}", "pitfall", title=f"about {a}")
    for channel in planted.denied_channels[:4]:
        a, b = _pair(planted, rng)
        lines = [f"line {i}: {corpus.sentence(rng, 4)}" for i in range(OUTPUT_LINES)]
        lines[OUTPUT_LINES // 3] = f"error: {a} failed deploy {b}"
        stored = box.store_tool_output("\n".join(lines), channel=channel, tool="Bash")
        assert stored.handle is not None
        planted.denied_handles.append(stored.handle)
    repo = planted.work / "repo"
    repo.mkdir(exist_ok=True)
    (repo / "deploy_tools.py").write_text(
        'def deploy_staging():\n    """Deploy staging."""\n    return 1\n', encoding="utf-8"
    )
    functions = []
    for k in range(3):
        a, b = _pair(planted, rng)
        functions.append(f'def {a}_{k}():\n    """Deploy {b}."""\n    return "{b}"\n')
    (repo / DENIED_CODE_FILE).write_text("\n\n".join(functions), encoding="utf-8")
    box.index_code(repo, "app")
    for name in (*EXCLUSIONS, DENIED_CODE_FILE):
        box.exclude_source(name)


# -- surfaces ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Surface:
    """One interface: ``tier`` is ``"agent"`` (nothing of a denied item, not its channel) or
    ``"person"`` (may name a denied thread, never show its text); ``outputs`` yields
    ``(label, text)`` for the planted session and the queries."""

    name: str
    tier: str
    outputs: Callable[[Planted, list[str]], Iterator[tuple[str, str]]]
    compare: bool = False
    """Whether a query's output must equal a never-stored word's output (word swapped back)."""
    compared: Callable[[Planted, list[str]], Iterator[tuple[str, str]]] | None = None
    """The outputs the comparison reads, when fewer than ``outputs`` (the others are skipped
    by it anyway: outputs that name no query, vector-ranked ones)."""


FRESH_PREFIX = "zqnoword"
"""A never-stored word of a canary's shape (same length) replaces it in the comparison."""


def fresh(a: str) -> str:
    return FRESH_PREFIX + a[len(CANARY_PREFIX) :]


def swap(text: str, a: str, b: str) -> str:
    """``a`` replaced by ``b`` in ``text``, in the forms a query takes (upper case, prefix)."""
    return text.replace(a, b).replace(a.upper(), b.upper()).replace(a[:-2], b[:-2])


def _errors(call: Callable[[], str]) -> str:
    try:
        return call()
    except recallbox.RecallError as exc:
        return f"{type(exc).__name__}: {exc}"


def python_outputs(p: Planted, queries: list[str]) -> Iterator[tuple[str, str]]:
    with recallbox.open(p.db, embedder="hash") as box:
        for q in queries:
            yield f"search_memory({q!r})", box.search_memory(q)
            for channel in (p.allowed_channels[0], p.denied_channels[0]):
                yield f"search_memory({q!r}, {channel})", box.search_memory(q, channel=channel)
            yield f"recall({q!r})", box.recall(q).render()
            yield f"recall_context({q!r})", repr(box.recall_context(q))
            for source in EXCLUSIONS[:2]:
                yield f"recall_context({q!r}, {source})", repr(box.recall_context(q, source))
            yield f"memory_injection({q!r})", box.memory_injection(q)
            for domain in ("sessions", "transcripts", "knowledge", "memory", "code"):
                for embed in (True, False):
                    hits = box.search(q, domain=domain, allow_embed=embed)
                    mark = VECTOR_MARK if embed else ""
                    yield f"search({q!r}, {domain}){mark}", repr(hits)
        for handle in p.denied_handles:
            yield f"expand({handle})", _errors(lambda h=handle: box.expand(h))
        for message_id in p.denied_ids[:: max(1, len(p.denied_ids) // 40)]:
            yield f"read_message({message_id})", _errors(lambda m=message_id: box.read_message(m))
            yield (
                f"message_page({message_id})",
                _errors(lambda m=message_id: box.message_page(m).text),
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


@dataclass(slots=True)
class ScanResult:
    planted: int = 0
    outputs: int = 0
    leaks: list[str] = field(default_factory=list)


def scan(
    p: Planted, texts: Iterable[tuple[str, str]], *, tier: str, queries: list[str]
) -> ScanResult:
    """Every text of a surface against every canary (the one a query names excepted)."""
    result = ScanResult(planted=len(p.canaries))
    forbidden = {c.lower() for c in p.canaries}
    channels = {c.lower() for c in p.denied_channels} if tier == "agent" else set()
    for label, text in texts:
        result.outputs += 1
        low, asked = text.lower(), label.lower()
        # what the caller typed may be echoed: the canary it names, the channel it passed
        named = {w for w in forbidden | channels if w in asked or w[:-2] in asked}
        hits = sorted(c for c in (forbidden | channels) - named if c in low)
        if hits:
            result.leaks.append(f"{label}: {sorted(hits)[:3]}")
    return result


def same_as_nothing(p: Planted, surface: Surface, queries: list[str]) -> list[str]:
    """A canary query's outputs equal a never-stored word's (that word swapped back)."""
    words = {q: next(a for a, _ in p.pairs if a[:-2] in q.lower()) for q in queries}
    outputs = surface.compared or surface.outputs
    mine = list(outputs(p, queries))
    theirs = list(outputs(p, [swap(q, words[q], fresh(words[q])) for q in queries]))
    problems = []
    for (label, text), (_, other) in zip(mine, theirs, strict=True):
        q = next((x for x in queries if repr(x) in label or x in label), None)
        if q is None or VECTOR_MARK in label:
            continue
        if swap(other, fresh(words[q]), words[q]) != text:
            problems.append(f"{surface.name} {label}: differs from a query that matches nothing")
    return problems
