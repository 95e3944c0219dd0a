"""Hostile input, continued (#15 item 4): markdown documents (``sync_directory`` and
``add_document``), MEMORY.md imports (``import_memory`` and ``recallbox memory import``) and
code files (``index_code``). Any bytes or text is indexed, or counted and skipped with a reason
(a file), or refused whole with a message naming the line (MEMORY.md: all or nothing, nothing
changed); never a traceback, never a hang (each call under the watchdog); and afterwards every
FTS5 table passes its ``integrity-check`` (``doctor``).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.cli import cli
from recallbox.code.types import CodeIndexReport
from reliability.conftest import copy_store
from reliability.harness import corpus
from reliability.harness.watchdog import watchdog

EXAMPLES = int(os.environ.get("RECALLBOX_HOSTILE_EXAMPLES", "60"))
"""Hypothesis examples per property: 60 in CI; ``benchmarks/reliability.py`` draws more."""
CALLS = [0]
"""Hostile calls made by this module (written to ``$RECALLBOX_HOSTILE_COUNT.documents``)."""
LONG_LINE_CHARS = 300_000
"""A single line far over any section or symbol cap."""
ENCODINGS = ("utf-8", "utf-16", "latin-1", "utf-8-sig")
CODE_SUFFIXES = (".py", ".js", ".ts", ".go", ".rs", ".java", ".rb", ".c", ".tsx", ".md")
TEXT_TRAPS = (
    "\x00",
    "\ud800",
    "\udce9",
    "\u202e",
    "\ufeff",
    "\r",
    "\r\n",
    "\x0c",
    "中文",
    "\U0001f4a5",
    "[message_id=m_1]",
    "<!-- key=GDL01 type=guideline -->",
    "'; DROP TABLE knowledge_sections; --",
    '"',
    "NEAR(",
)


@pytest.fixture(scope="module", autouse=True)
def _count_calls() -> Iterator[None]:
    yield
    target = os.environ.get("RECALLBOX_HOSTILE_COUNT")
    if target:
        Path(target + ".documents").write_text(str(CALLS[0]), encoding="utf-8")


def bounded(call: Any) -> Any:
    """One hostile call under the watchdog: a library error is an answer, anything else (a
    driver error, a UnicodeError, a RecursionError) a crash."""
    CALLS[0] += 1
    with watchdog():
        try:
            return call()
        except recallbox.RecallError as exc:
            return exc


def healthy(box: recallbox.Box) -> None:
    """Every FTS5 table passes ``('integrity-check', 1)`` and the heal probe (``doctor``)."""
    report = box.doctor()
    assert [i for i in report.indexes if not i.healthy] == [], report.indexes


hostile_line = st.one_of(
    st.text(st.characters(exclude_categories=()), max_size=120),
    st.sampled_from(TEXT_TRAPS),
    st.lists(st.sampled_from(TEXT_TRAPS + tuple(corpus.WORDS)), max_size=6).map(" ".join),
)
markdown_line = st.one_of(
    hostile_line,
    st.tuples(st.integers(1, 8), hostile_line).map(lambda t: "#" * t[0] + " " + t[1]),
    st.sampled_from(["```", "```python", "~~~", "---", "***", "<!--", "-->", "| a | b |", "> "]),
    st.just("x" * LONG_LINE_CHARS),
)
markdown_text = st.lists(markdown_line, max_size=25).map("\n".join)


def _encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="surrogatepass" if encoding == "utf-8" else "replace")


document_bytes = st.one_of(
    st.binary(max_size=3000),
    st.tuples(markdown_text, st.sampled_from(ENCODINGS)).map(lambda t: _encode(*t)),
    st.tuples(markdown_text, st.binary(max_size=40)).map(lambda t: _encode(t[0], "utf-8") + t[1]),
)


def _write(root: Path, files: list[tuple[str, bytes]]) -> list[Path]:
    paths = []
    for name, data in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


# -- markdown documents -----------------------------------------------------------------------
@settings(max_examples=EXAMPLES, deadline=None)
@given(
    docs=st.lists(document_bytes, min_size=1, max_size=4), suffix=st.sampled_from([".md", ".txt"])
)
def test_any_markdown_file_is_indexed_or_skipped_with_a_reason(
    empty_store: Path, docs: list[bytes], suffix: str
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "docs"
        _write(root, [(f"d{i}{suffix}", data) for i, data in enumerate(docs)])
        with recallbox.open(copy_store(empty_store, Path(tmp), "k.db")) as box:
            report = bounded(lambda: box.sync_directory(root))
            assert isinstance(report, recallbox.SyncReport), report
            counted = report.files_added + report.files_changed + report.files_unchanged
            assert counted + len(report.skipped) == len(docs) == report.files_seen, report
            assert all(s.reason.strip() and "Traceback" not in s.reason for s in report.skipped)
            again = bounded(lambda: box.sync_directory(root))
            assert isinstance(again, recallbox.SyncReport), again
            assert again.files_added + again.files_changed == 0, again  # nothing read twice
            for i in range(len(docs)):
                found = bounded(lambda i=i: box.recall_context("index", source=f"d{i}{suffix}"))
                assert isinstance(found, recallbox.RecallResult | recallbox.RecallError)
            healthy(box)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_text, source=st.one_of(hostile_line, st.sampled_from(["a.md", "b.txt"])))
def test_add_document_takes_any_text_or_refuses_it_by_name(
    empty_store: Path, text: str, source: str
) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        recallbox.open(copy_store(empty_store, Path(tmp), "k.db")) as box,
    ):
        sections = bounded(lambda: box.add_document(text, source))
        if isinstance(sections, recallbox.RecallError):
            assert isinstance(sections, recallbox.InvalidArgument), sections
            assert str(sections).strip()
        else:
            assert isinstance(sections, list)
            again = bounded(lambda: box.add_document(text, source))
            assert isinstance(again, list) and [s.id for s in again] == [s.id for s in sections]
        healthy(box)


# -- MEMORY.md imports ------------------------------------------------------------------------
def _seeded_memory(box: recallbox.Box) -> str:
    box.remember("deploy staging only after the smoke test", "guideline")
    box.remember("the cache key includes the tenant", "pitfall", title="cache keys")
    return box.export_memory()


@st.composite
def edited_memory_md(draw: st.DrawFn) -> list[tuple[str, str | None]]:
    """Edits of a real export: (kind, text) pairs applied by :func:`_apply` (a line replaced,
    inserted, a comment field rewritten, the file cut), so most imports reach the planner."""
    edits = st.tuples(
        st.sampled_from(["replace", "insert", "field", "cut", "bullet", "bullet", "body", "body"]),
        st.one_of(
            hostile_line,
            st.lists(st.sampled_from(corpus.WORDS), min_size=1, max_size=6).map(" ".join),
            st.none(),
        ),
    )
    return draw(st.lists(edits, max_size=6))


FIELDS = (
    "key",
    "type",
    "state",
    "state_since",
    "created",
    "last_referenced",
    "ref_count",
    "evergreen",
    "superseded_by",
)


def _apply(exported: str, edits: list[tuple[str, str | None]], seed: int) -> str:
    lines = exported.split("\n")
    for n, (kind, text) in enumerate(edits):
        lines = lines or [""]
        at = (seed + 7 * n) % len(lines)
        value = text or ""
        if kind == "replace":
            lines[at] = value
        elif kind == "insert":
            lines.insert(at, value)
        elif kind == "bullet":  # a new entry, under a type's heading
            headings = [i for i, line in enumerate(lines) if line.startswith("## ")] or [at]
            lines.insert(headings[(seed + n) % len(headings)] + 1, f"- {value}")
        elif kind == "body":  # an entry's text edited
            bullets = [i for i, line in enumerate(lines) if line.startswith("- ")] or [at]
            lines[bullets[(seed + n) % len(bullets)]] = f"- {value}"
        elif kind == "cut":
            lines = lines[:at]
        else:
            field = FIELDS[(seed + n) % len(FIELDS)]
            lines = [
                " ".join(
                    f"{field}={value}" if w.startswith(field + "=") else w for w in line.split(" ")
                )
                if "<!--" in line
                else line
                for line in lines
            ]
    return "\n".join(lines)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    text=st.one_of(st.tuples(edited_memory_md(), st.integers(0, 1000)), markdown_text),
)
def test_any_memory_md_is_imported_or_refused_whole(empty_store: Path, text: Any) -> None:
    with (
        tempfile.TemporaryDirectory() as tmp,
        recallbox.open(copy_store(empty_store, Path(tmp), "m.db")) as box,
    ):
        exported = _seeded_memory(box)
        source = _apply(exported, *text) if isinstance(text, tuple) else text
        before = [dataclasses.astuple(e) for e in box.memories()]
        report = bounded(lambda: box.import_memory(source))
        if isinstance(report, recallbox.RecallError):
            assert isinstance(report, recallbox.InvalidArgument), report
            assert str(report).strip() and "Traceback" not in str(report)
            assert [dataclasses.astuple(e) for e in box.memories()] == before  # all or nothing
        else:
            assert isinstance(report, recallbox.MemoryImportReport), report
            again = bounded(lambda: box.import_memory(box.export_memory()))
            assert isinstance(again, recallbox.MemoryImportReport), again
            assert again.added == () and again.created == (), again  # its own export: no-op
        healthy(box)


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(data=document_bytes, as_json=st.booleans())
def test_memory_import_of_any_file_exits_cleanly(data: bytes, as_json: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "MEMORY.md"
        path.write_bytes(data)
        argv = ["--db", str(Path(tmp) / "m.db"), "memory", "import", str(path)]
        CALLS[0] += 1
        with watchdog():
            result = CliRunner().invoke(cli, argv + (["--json"] if as_json else []), obj={})
        assert "Traceback" not in result.stdout + result.stderr, result.stderr
        assert result.exit_code in (0, 2), (result.exit_code, result.stderr)
        if result.exit_code and not as_json:
            assert [x for x in result.stderr.splitlines() if x.startswith("Error: ")], result.stderr
        with recallbox.open(Path(tmp) / "m.db") as box:
            healthy(box)


# -- code files -------------------------------------------------------------------------------
code_text = st.one_of(
    st.lists(
        st.one_of(
            hostile_line,
            hostile_line.map(lambda t: f"def f_{abs(hash(t)) % 997}():\n    return {t!r}"),
            hostile_line.map(lambda t: f"function g(){{ /* {t} */ }}"),
            st.sampled_from(["def (", "class :", "{{{{", "}}}", "import", "fn main() {", '"""']),
        ),
        max_size=20,
    ).map("\n".join),
    st.just("x = 1\n" * 20_000),
)
code_bytes = st.one_of(
    st.binary(max_size=3000),
    st.tuples(code_text, st.sampled_from(ENCODINGS)).map(lambda t: _encode(*t)),
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    files=st.lists(st.tuples(st.sampled_from(CODE_SUFFIXES), code_bytes), min_size=1, max_size=5)
)
def test_any_code_file_is_indexed_or_skipped_with_a_reason(
    empty_store: Path, files: list[tuple[str, bytes]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        _write(repo, [(f"pkg/m{i}{suffix}", data) for i, (suffix, data) in enumerate(files)])
        with recallbox.open(copy_store(empty_store, Path(tmp), "c.db")) as box:
            report = bounded(lambda: box.index_code(repo, "app"))
            assert isinstance(report, CodeIndexReport), report
            counted = report.files_parsed + report.files_unchanged + sum(report.skipped.values())
            assert counted == report.files_seen, report
            assert all(str(s.reason).strip() for s in report.skipped_files), report.skipped_files
            assert all(f.error.strip() and "Traceback" not in f.error for f in report.failed)
            again = bounded(lambda: box.index_code(repo, "app"))
            assert isinstance(again, CodeIndexReport) and again.files_parsed == 0, again
            for query in ("f_", "g", "\x00", "main"):
                hits = bounded(lambda q=query: box.search(q, domain="code", allow_embed=False))
                assert isinstance(hits, list | recallbox.RecallError), hits
            healthy(box)


def test_an_edited_body_with_a_lone_surrogate_is_normalised_like_remember(tmp_path: Path) -> None:
    """Found by the property at 600 examples: the edit reached SQLite as an unencodable
    string (``UnicodeEncodeError``); it is now normalised as ``remember`` normalises."""
    with recallbox.open(tmp_path / "m.db") as box:
        exported = _seeded_memory(box)
        edited = exported.replace("deploy staging only after the smoke test", "smoke \ud800 test")
        report = box.import_memory(edited)
        assert len(report.updated) == 1
        assert "smoke \ufffd test" in [e.body for e in box.memories()]
        healthy(box)
