"""Job kinds of the other domains (#10 memory and knowledge, #11 code, #12 tool outputs):
``remember``, ``knowledge_sync``, ``code_index`` and ``tool_output``, for the crash and
concurrency harnesses.

Imported at the end of :mod:`reliability.harness.jobs`, which adds :data:`CURATED_KINDS` to its
``JOB_KINDS`` (import that module, not this one).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import recallbox
from reliability.harness import corpus
from reliability.harness.jobs import JobContext, JobEnv, JobKind

DOCS_PER_RUN = 4
"""Markdown files a knowledge sync finds new before each run (one more is edited)."""
SECTIONS_PER_DOC = 3
OUTPUT_LINES = 200
"""Lines of each stored tool output (long enough to get a handle)."""


def run_remember(ctx: JobContext) -> None:
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            mark = corpus.marker("k", ctx.writer, n)
            entry = box.remember(f"{mark} {corpus.sentence(rng)}", "guideline")
            ctx.ack.record(kind="memory", id=entry.key, marker=mark, n=n)


def run_tool_output(ctx: JobContext) -> None:
    rng = random.Random(ctx.writer)
    channel = str(ctx.params.get("channel", f"rel:{ctx.writer}"))
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            mark = corpus.marker("o", ctx.writer, n)
            lines = [f"{mark} {corpus.sentence(rng, 6)}"] + [
                f"line {i} {corpus.sentence(rng, 4)}" for i in range(OUTPUT_LINES)
            ]
            stored = box.store_tool_output("\n".join(lines), channel=channel, tool="Bash")
            ctx.ack.record(kind="output", id=stored.handle, marker=mark, n=n)


def _docs(env: JobEnv) -> Path:
    return env.work / "docs"


def grow_docs(env: JobEnv) -> None:
    """Before each run: new documents (each section with a marker) and one edited document."""
    docs = _docs(env)
    docs.mkdir(parents=True, exist_ok=True)
    rng = env.rng
    for d in range(DOCS_PER_RUN):
        marks = [corpus.marker("dk", env.runs, d, s) for s in range(SECTIONS_PER_DOC)]
        body = "\n".join(f"## Part {m}\n\n{m} {corpus.sentence(rng)}\n" for m in marks)
        (docs / f"run{env.runs}-doc{d}.md").write_text(f"# Doc\n\n{body}", encoding="utf-8")
    if env.runs:
        edited = docs / "run0-doc0.md"
        mark = corpus.marker("dk", env.runs, "edit")
        edited.write_text(
            edited.read_text(encoding="utf-8") + f"\n## Edit {mark}\n\n{mark} appended\n",
            encoding="utf-8",
        )


def run_knowledge_sync(ctx: JobContext) -> None:
    docs = ctx.work / "docs"
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        box.sync_directory(docs)
    for path in sorted(docs.glob("*.md")):  # acknowledged once the sync returned
        for mark in _doc_markers(path):
            ctx.ack.record(kind="section", id=path.name, marker=mark)


def _doc_markers(path: Path) -> list[str]:
    return [
        line.split(" ", 2)[2]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("## ") and len(line.split(" ", 2)) == 3
    ]


def check_docs(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """After completion every section of every file on disk is indexed and found."""
    if not complete:
        return []
    problems: list[str] = []
    with recallbox.open(env.db) as box:
        for path in sorted(_docs(env).glob("*.md")):
            for mark in _doc_markers(path):
                hits = box.search(mark, domain="knowledge", limit=3, allow_embed=False)
                if not any(mark in hit.text for hit in hits):
                    problems.append(f"section {mark} of {path.name} is not indexed")
    return problems


FILES_PER_RUN = 6
"""Python files a code index finds new before each run (one more is edited)."""


def _repo(env: JobEnv) -> Path:
    return env.work / "repo"


def grow_repo(env: JobEnv) -> None:
    """Before each run: new Python files (one function per marker) and one edited file."""
    repo = _repo(env)
    repo.mkdir(parents=True, exist_ok=True)
    for f in range(FILES_PER_RUN):
        mark = corpus.marker("cx", env.runs, f)
        (repo / f"mod_{env.runs}_{f}.py").write_text(
            f'def {mark}():\n    """{corpus.sentence(env.rng)}."""\n    return {f}\n',
            encoding="utf-8",
        )
    if env.runs:
        mark = corpus.marker("cx", env.runs, "edit")
        with (repo / "mod_0_0.py").open("a", encoding="utf-8") as out:
            out.write(f"\n\ndef {mark}():\n    return 0\n")


def run_code_index(ctx: JobContext) -> None:
    repo = ctx.work / "repo"
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        box.index_code(repo, "app")
    for path in sorted(repo.glob("*.py")):  # acknowledged once the index returned
        for mark in _functions(path):
            ctx.ack.record(kind="symbol", id=path.name, marker=mark)


def _functions(path: Path) -> list[str]:
    return [
        line[4:].split("(", 1)[0]
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith("def ")
    ]


def check_repo(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """After completion every function of every file on disk is indexed and found."""
    if not complete:
        return []
    problems: list[str] = []
    with recallbox.open(env.db) as box:
        for path in sorted(_repo(env).glob("*.py")):
            for mark in _functions(path):
                hits = box.search(mark, domain="code", limit=3, allow_embed=False)
                if not any(mark in hit.id for hit in hits):
                    problems.append(f"function {mark} of {path.name} is not indexed")
    return problems


IMPORT_BULLETS = 5
"""New bullets each MEMORY.md import adds (all or nothing)."""


def run_memory_import(ctx: JobContext) -> None:
    rng = random.Random(ctx.writer)
    ctx.ready()
    with recallbox.open(ctx.db) as box:
        for n in range(ctx.count):
            marks = [corpus.marker("q", ctx.writer, n, b) for b in range(IMPORT_BULLETS)]
            bullets = "".join(f"- {m} {corpus.sentence(rng, 6)}\n" for m in marks)
            report = box.import_memory(box.export_memory().rstrip() + "\n" + bullets)
            for key, mark in zip(report.added, marks, strict=True):
                ctx.ack.record(kind="memory", id=key, marker=mark, n=n)


def check_memory_imports(env: JobEnv, acks: list[dict[str, Any]], *, complete: bool) -> list[str]:
    """A MEMORY.md import is all or nothing: each import's bullets are all there, or none."""
    groups: dict[str, int] = {}
    with recallbox.open(env.db) as box:
        for entry in box.memories():
            head = entry.body.split(" ", 1)[0]
            if head.startswith("q") and head.count("x") == 2:
                group = head.rsplit("x", 1)[0]
                groups[group] = groups.get(group, 0) + 1
    return [
        f"import {g}: {n} of {IMPORT_BULLETS} bullets"
        for g, n in groups.items()
        if n != IMPORT_BULLETS
    ]


CURATED_KINDS: tuple[JobKind, ...] = (
    JobKind("remember", "python", run_remember, complete_params={"count": 10}, loops=True, tag="k"),
    JobKind(
        "knowledge_sync",
        "python",
        run_knowledge_sync,
        before_run=grow_docs,
        check=check_docs,
        tag="d",
    ),
    JobKind(
        "code_index", "python", run_code_index, before_run=grow_repo, check=check_repo, tag="x"
    ),
    JobKind(
        "memory_import",
        "python",
        run_memory_import,
        check=check_memory_imports,
        complete_params={"count": 2},
        loops=True,
        tag="q",
    ),
    JobKind(
        "tool_output",
        "python",
        run_tool_output,
        complete_params={"count": 5},
        loops=True,
        tag="o",
    ),
)
"""The job kinds of the memory, knowledge and tool-output domains."""
