"""Hostile input (#15 item 4): every entry point that takes text today — the query of every
verb, message content, tool-call arguments, importer lines, CLI arguments — never crashes,
never hangs (each call runs under a watchdog), keeps its caps, and refuses what is over a
named limit with a clear error (an import counts it as skipped and goes on).

A new verb that takes text adds one line to :data:`QUERY_VERBS`.
"""

from __future__ import annotations

import json
import os
import string
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.cli import cli
from recallbox.limits import DEPTH_REASON, MAX_JSON_DEPTH, MAX_RECORD_BYTES, SIZE_REASON
from reliability.conftest import copy_store
from reliability.harness import corpus
from reliability.harness.watchdog import watchdog

EXAMPLES = int(os.environ.get("RECALLBOX_HOSTILE_EXAMPLES", "60"))
"""Hypothesis examples per property: 60 in CI; ``benchmarks/reliability.py`` draws more."""
HIT_TEXT_MAX_CHARS = 800
FTS_TRAPS = (
    '"',
    '""',
    "NEAR(",
    "NEAR(a b, 2)",
    "AND",
    "OR",
    "NOT",
    "*",
    "^",
    "a:b",
    "-x",
    "(",
    ")",
    "{a b}",
    'content_seg:"x"',
    "\x00",
    "\ud800",
    "\U0001f4a5",
    "中文检索",
    "ｆｕｌｌ",
    " " * 50,
    "deploy_staging",
    "pg-primary-9",
    "/etc/passwd",
    "'; DROP TABLE messages; --",
    "%",
    "_",
    "\\",
    "\u202e",
    "a" * 5000,
    "\n\n\n",
    "m_0123456789abcdef",
    "[message_id=m_1]",
)
hostile_text = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=200),
    st.sampled_from(FTS_TRAPS),
    st.lists(st.sampled_from(FTS_TRAPS + tuple(corpus.WORDS)), max_size=8).map(" ".join),
)
json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=40)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(st.text(max_size=10), inner, max_size=6)
    ),
    max_leaves=60,
)


CALLS = [0]
"""Hostile calls made by this module (written to ``$RECALLBOX_HOSTILE_COUNT`` at the end)."""


@pytest.fixture(scope="module", autouse=True)
def _count_calls() -> Iterator[None]:
    yield
    target = os.environ.get("RECALLBOX_HOSTILE_COUNT")
    if target:
        Path(target).write_text(str(CALLS[0]), encoding="utf-8")


def bounded(call: Callable[[], Any]) -> Any:
    """Run one hostile call under the watchdog; a library error is an answer, anything else
    (a driver error, a RecursionError, a TypeError) is a crash."""
    CALLS[0] += 1
    with watchdog():
        try:
            return call()
        except recallbox.RecallError as exc:
            return exc


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[recallbox.Box]:
    db = tmp_path_factory.mktemp("hostile") / "hostile.db"
    with recallbox.open(db, embedder="hash") as box:
        for i in range(40):
            box.append(f"t{i % 4}", "user", f"deploy staging item{i} 中文检索 pg-primary-9")
        box.append(
            "t0",
            "assistant",
            "",
            tool_calls=[{"id": "c", "name": "Bash", "arguments": {"command": "ls /etc"}}],
        )
        box.quarantine("t3")
        box.embed_all()
        yield box


QUERY_VERBS: dict[str, Callable[[recallbox.Box, str], Any]] = {
    "search_memory": lambda box, q: box.search_memory(q),
    "search_memory(channel)": lambda box, q: box.search_memory(q, channel="t1"),
    "search_memory(channel=q)": lambda box, q: box.search_memory("deploy", channel=q),
    "search(sessions)": lambda box, q: box.search(q),
    "search(sessions, no embed)": lambda box, q: box.search(q, allow_embed=False),
    "search(transcripts)": lambda box, q: box.search(q, domain="transcripts"),
    "search(domain=q)": lambda box, q: box.search("deploy", domain=q),
    "read_message": lambda box, q: box.read_message(q),
    "read_message(view=q)": lambda box, q: box.read_message(q, view=q),
    "message_page": lambda box, q: box.message_page(q),
    "thread": lambda box, q: box.thread(q),
    "messages": lambda box, q: box.messages(q),
}
"""Every verb that takes text today; a later domain (memory, knowledge, code, recall, tool
outputs) adds its verbs here."""


def _check_result(verb: str, result: Any) -> None:
    assert not isinstance(result, recallbox.StoreUnavailable), (verb, result)
    if isinstance(result, str):
        assert len(result) <= recallbox.THREAD_SEARCH_MAX_CHARS, verb
    if isinstance(result, list) and result and isinstance(result[0], recallbox.Hit):
        assert all(len(hit.text) <= HIT_TEXT_MAX_CHARS for hit in result), verb


@settings(max_examples=EXAMPLES)
@given(query=hostile_text)
def test_every_query_verb_takes_any_text(seeded: recallbox.Box, query: str) -> None:
    for verb, call in QUERY_VERBS.items():
        _check_result(verb, bounded(lambda call=call: call(seeded, query)))


@pytest.mark.parametrize("verb", ["read_message", "message_page"])
def test_a_lone_surrogate_in_an_id_is_not_found(seeded: recallbox.Box, verb: str) -> None:
    """It used to reach the driver, which raised UnicodeEncodeError."""
    with pytest.raises(recallbox.NotFound):
        QUERY_VERBS[verb](seeded, "m_\ud800")
    for call in (seeded.message, seeded.deliver):
        with pytest.raises(recallbox.NotFound):
            call("m_\ud800")


@settings(max_examples=EXAMPLES)
@given(content=hostile_text, role=st.sampled_from(["user", "assistant", "tool", "system", "x"]))
def test_any_message_content_is_stored_and_read_back(
    seeded: recallbox.Box, content: str, role: str
) -> None:
    result = bounded(lambda: seeded.append("hostile", role, content))
    if role == "x":
        assert isinstance(result, recallbox.InvalidArgument)
        return
    assert isinstance(result, recallbox.Message), result
    page = bounded(lambda: seeded.read_message(result.id))
    assert isinstance(page, str) and len(page) <= recallbox.THREAD_SEARCH_MAX_CHARS
    _check_result("search_memory", bounded(lambda: seeded.search_memory(content[:40])))


@settings(max_examples=EXAMPLES)
@given(
    arguments=st.one_of(json_value, hostile_text),
    metadata=st.dictionaries(st.text(max_size=8), json_value, max_size=4),
)
def test_any_tool_call_arguments_and_metadata(
    seeded: recallbox.Box, arguments: Any, metadata: dict[str, Any]
) -> None:
    call = {"id": "call_1", "name": "tool", "arguments": arguments}
    result = bounded(
        lambda: seeded.append("args", "assistant", "", tool_calls=[call], metadata=metadata)
    )
    if isinstance(result, recallbox.RecallError):
        assert isinstance(result, recallbox.InvalidArgument), result
        assert "JSON" in str(result)
        return
    for view in ("audit", "model"):
        page = bounded(lambda view=view: seeded.read_message(result.id, view=view))
        assert isinstance(page, str) and len(page) <= recallbox.THREAD_SEARCH_MAX_CHARS


def test_huge_arrays_and_non_string_leaves_in_arguments(seeded: recallbox.Box) -> None:
    arguments = {"ids": list(range(200_000)), "flags": [True, None, 1.5, -(2**70)]}
    message = bounded(
        lambda: seeded.append(
            "args",
            "assistant",
            "",
            tool_calls=[{"id": "c2", "name": "bulk", "arguments": arguments}],
        )
    )
    assert isinstance(message, recallbox.Message)
    page = seeded.message_page(message.id)
    assert len(page.text) <= recallbox.THREAD_SEARCH_MAX_CHARS and page.next_offset is not None


def nested(depth: int, leaf: Any = "deepleaf") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("form", ["value", "json text", "metadata"])
def test_json_as_deep_as_the_limit_works(seeded: recallbox.Box, form: str) -> None:
    value = nested(MAX_JSON_DEPTH)
    if form == "metadata":
        message = seeded.append(
            "deep", "user", "deep meta", metadata={"v": nested(MAX_JSON_DEPTH - 1)}
        )
    else:
        arguments = json.dumps(value) if form == "json text" else value
        message = seeded.append(
            "deep",
            "assistant",
            "",
            tool_calls=[{"id": "d", "name": "deep", "arguments": arguments}],
        )
    assert len(seeded.read_message(message.id)) <= recallbox.THREAD_SEARCH_MAX_CHARS


@pytest.mark.parametrize("depth", [MAX_JSON_DEPTH + 1, 10_000])
@pytest.mark.parametrize("form", ["value", "json text", "metadata"])
def test_json_deeper_than_the_limit_is_refused_by_name(
    seeded: recallbox.Box, form: str, depth: int
) -> None:
    value = nested(depth)
    text = "[" * depth + '"deepleaf"' + "]" * depth  # json.dumps itself cannot go this deep
    with pytest.raises(recallbox.InvalidArgument, match="MAX_JSON_DEPTH"):
        if form == "metadata":
            seeded.append("deep", "user", "x", metadata={"v": value})
        else:
            arguments = text if form == "json text" else value
            seeded.append(
                "deep",
                "assistant",
                "",
                tool_calls=[{"id": "d", "name": "deep", "arguments": arguments}],
            )


# -- importer lines ---------------------------------------------------------------------------
def _claude_line(content: Any, uid: str) -> str:
    return json.dumps(
        {
            "type": "user",
            "uuid": uid,
            "parentUuid": None,
            "sessionId": "hostile",
            "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "user", "content": content},
        }
    )


importer_line = st.one_of(
    st.text(st.characters(exclude_categories=("Cs",)), max_size=120),
    json_value.map(lambda v: json.dumps(v)),
    st.builds(
        _claude_line,
        st.one_of(json_value, hostile_text),
        st.text(string.ascii_letters, min_size=1, max_size=6),
    ),
    st.sampled_from(
        [
            "{",
            "[" * 2000 + "]" * 2000,
            '{"type": "assistant"}',
            '{"type":"user","message":5}',
            json.dumps({"type": "function_call", "arguments": "{"}),
            "\x00\x01",
            "",
        ]
    ),
)
WRONG_FORMAT = "wrong format? "
FORMAT_FILES = {
    "claude-code": "s.jsonl",
    "codex": "rollout-2026-01-01T00-00-00-s.jsonl",
    "openai": "s.jsonl",
}


@settings(max_examples=EXAMPLES)
@given(
    lines=st.lists(importer_line, max_size=12),
    fmt=st.sampled_from(sorted(FORMAT_FILES)),
    terminated=st.booleans(),
)
def test_any_importer_lines_import_or_are_skipped(
    empty_store: Path, lines: list[str], fmt: str, terminated: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / FORMAT_FILES[fmt]
        path.write_text(
            "\n".join(lines) + ("\n" if terminated else ""),
            encoding="utf-8",
            errors="surrogatepass",
        )
        with recallbox.open(copy_store(empty_store, Path(tmp), "i.db")) as box:
            report = bounded(lambda: box.import_transcripts(fmt, [path]))
            assert isinstance(report, recallbox.ImportReport), report
            # Only #17's refusal of a new file that made nothing and looks like another format
            failed = [f for f in report.errors if not (f.error or "").startswith(WRONG_FORMAT)]
            assert failed == [], failed
            if report.errors:
                assert report.added == 0 and list(box.threads()) == []  # nothing of it kept
            again = bounded(lambda: box.import_transcripts(fmt, [path]))
            assert isinstance(again, recallbox.ImportReport) and again.added == 0


def _oversized_file(path: Path, fmt: str, middle: list[bytes]) -> None:
    """A transcript of ``fmt`` with a good record before and after each ``middle`` line."""
    with path.open("wb") as out:
        if fmt == "codex":
            out.write(
                json.dumps({"id": "big", "timestamp": "2026-01-01T00:00:00Z"}).encode() + b"\n"
            )
        for i, line in enumerate([*middle, None]):
            if fmt == "claude-code":
                good = _claude_line(f"good record {i}", f"g{i}")
            elif fmt == "codex":
                good = json.dumps(
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": f"good record {i}"}],
                    }
                )
            else:
                good = json.dumps(
                    {"id": f"c{i}", "messages": [{"role": "user", "content": f"good record {i}"}]}
                )
            out.write(good.encode() + b"\n")
            if line is not None:
                out.write(line + b"\n")


@pytest.mark.parametrize("fmt", sorted(FORMAT_FILES))
def test_a_100_mb_line_and_a_10_000_deep_line_are_counted_and_skipped(
    tmp_path: Path, fmt: str
) -> None:
    head = b'{"type":"user","message":{"role":"user","content":"'
    huge = head + b"A" * (MAX_RECORD_BYTES + 40 * 1024 * 1024) + b'"}}'
    deep = b"[" * 10_000 + b"]" * 10_000
    path = tmp_path / FORMAT_FILES[fmt]
    _oversized_file(path, fmt, [huge, deep])
    del huge
    with recallbox.open(tmp_path / "i.db") as box, watchdog():
        report = box.import_transcripts(fmt, [path])
    [file] = report.files
    assert file.error is None
    reasons = {s.reason for s in file.skipped}
    assert {SIZE_REASON, DEPTH_REASON} <= reasons, file.skipped
    with recallbox.open(tmp_path / "i.db") as box:
        found = box.search_memory("good record")
        assert all(f"good record {i}" in found for i in range(3))


def test_a_10_mb_message_is_imported_and_found(tmp_path: Path) -> None:
    path = tmp_path / "ten.jsonl"
    text = "word " * (2 * 1024 * 1024) + "needle42"
    path.write_text(_claude_line(text, "big") + "\n", encoding="utf-8")
    with recallbox.open(tmp_path / "i.db") as box:
        report = box.import_transcripts("claude-code", [path])
        assert report.added == 1 and report.skipped == 0
        assert "needle42" in box.search_memory("needle42")
        [thread] = box.threads()
        [message] = box.messages(thread.channel)
        assert message.content == text
        page = box.message_page(message.id, offset=len(text) - 100)
        assert page.text.endswith("needle42") or "needle42" in page.text


# -- CLI arguments ----------------------------------------------------------------------------
IMPORT_ROOT = Path(tempfile.gettempdir()) / "recallbox-hostile-import"
"""`import` takes hostile text as a file name inside this folder (never a path to walk)."""


def _file_name(text: str) -> str:
    name = text.replace("/", "_").replace("\x00", "_").lstrip(".") or "_"
    return name[:200]


CLI_COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "search-memory": lambda t: ["search-memory", t],
    "search": lambda t: ["search", t, "--embedder", "hash"],
    "read": lambda t: ["read", t],
    "read --view": lambda t: ["read", "m_x", "--view", t],
    "append": lambda t: ["append", "cli", "user", t],
    "append --tool-calls": lambda t: ["append", "cli", "assistant", "", "--tool-calls", t],
    "append --metadata": lambda t: ["append", "cli", "user", "x", "--metadata", t],
    "thread show": lambda t: ["thread", "show", t],
    "compact": lambda t: ["compact", "cli", t],
    "import": lambda t: ["import", "claude-code", str(IMPORT_ROOT / _file_name(t))],
}
"""CLI commands that take text today (a later command adds its line)."""


@settings(max_examples=EXAMPLES // 3)
@given(
    text=st.one_of(hostile_text.filter(lambda t: "\x00" not in t), json_value.map(json.dumps)),
    as_json=st.booleans(),
)
def test_cli_arguments_never_give_a_traceback(
    seeded: recallbox.Box, text: str, as_json: bool
) -> None:
    for name, args in CLI_COMMANDS.items():
        argv = ["--db", seeded.location, *args(text), *(["--json"] if as_json else [])]
        if text.startswith("-"):
            argv.insert(len(argv) - len(args(text)) + 1, "--")
        with watchdog():
            result = CliRunner().invoke(cli, argv, obj={})
        out, err = result.stdout, result.stderr
        assert "Traceback" not in out + err, (name, err)
        assert result.exit_code in (0, 1, 2), (name, result.exit_code, err)
        if name == "import" and result.exit_code == 1 and "error" in out:
            continue  # a failed file: the import report says so (DESIGN §8)
        if result.exit_code and as_json and "Usage:" not in err:
            assert set(json.loads(out.splitlines()[-1])) == {"error", "code"}, (name, out)
        elif result.exit_code and not as_json:
            assert len([x for x in err.splitlines() if x.startswith("Error: ")]) == 1, (name, err)


def test_json_output_of_an_argument_that_was_not_utf8_is_valid_json(seeded: recallbox.Box) -> None:
    """A lone surrogate (argv bytes that were not UTF-8) used to crash `--json` printing with
    an 'unexpected UnicodeEncodeError'; the document is now ASCII-escaped instead."""
    result = CliRunner().invoke(
        cli, ["--db", seeded.location, "search-memory", "x\udce9y", "--json"], obj={}
    )
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["query"] == "x\udce9y"


# -- MCP tool arguments -----------------------------------------------------------------------
@settings(max_examples=EXAMPLES // 3)
@given(
    text=hostile_text,
    view=st.one_of(st.sampled_from(["audit", "model"]), hostile_text),
    offset=st.one_of(st.integers(), st.text(max_size=5), st.none()),
)
def test_mcp_tool_arguments_give_bounded_results_or_tool_errors(
    seeded: recallbox.Box, text: str, view: str, offset: Any
) -> None:
    import anyio
    from mcp import Client

    from recallbox.mcp_server import TOOL_ERROR_MAX_CHARS, build_server

    calls = [
        ("search_memory", {"query": text}),
        ("search_memory", {"query": "deploy", "channel": text}),
        ("read_message", {"message_id": text, "view": view, "offset": offset}),
    ]

    async def go() -> list[Any]:
        async with Client(build_server(box=seeded)) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    CALLS[0] += len(calls)
    with watchdog():
        results = anyio.run(go)
    for (name, _), result in zip(calls, results, strict=True):
        body = "".join(getattr(c, "text", "") for c in result.content)
        limit = TOOL_ERROR_MAX_CHARS * 2 if result.is_error else recallbox.THREAD_SEARCH_MAX_CHARS
        assert len(body) <= limit, (name, len(body))
        assert "Traceback" not in body, name
