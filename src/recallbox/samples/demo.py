"""The bundled sample thread and notes, and what ``recallbox demo`` does with them."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from recallbox.box import Box
from recallbox.errors import DependencyMissing
from recallbox.recall_types import BucketedRecall
from recallbox.types import Hit, RecallResult, Thread

JOURNAL_FILLER_LINES = 1_500
SAMPLE_PACKAGE = "recallbox.samples"
#: The demo's closing bucketed recall (#12): the question an agent would ask of its memory.
DEMO_RECALL_QUERY = "billing connection refused pg-replica-1"
DEMO_RECALL_BUDGET_CHARS = 6_000
#: The scope the demo indexes this package's own source under, and what it looks up there.
CODE_DEMO_SCOPE = "recallbox-samples"
CODE_DEMO_QUERY = "load_sample"


def _journal() -> str:
    """A long, realistic tool output with one line that matters in the middle."""
    filler = [
        f"Nov 29 23:{i // 60 % 60:02d}:{i % 60:02d} staging-03 billing[4121]: "
        f"GET /health 200 ({3 + i % 7} ms)"
        for i in range(JOURNAL_FILLER_LINES)
    ]
    key_lines = [
        "Nov 30 02:14:07 staging-03 billing[4121]: FATAL could not connect to server: "
        "connection refused (host pg-replica-1, port 5432)",
        "Nov 30 02:14:07 staging-03 systemd[1]: billing.service: Main process exited, "
        "code=exited, status=1/FAILURE",
    ]
    half = len(filler) // 2
    return "\n".join(filler[:half] + key_lines + filler[half:])


def sample_thread() -> dict[str, Any]:
    """The sample thread as data."""
    text = resources.files(SAMPLE_PACKAGE).joinpath("demo_thread.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def sample_notes() -> dict[str, str]:
    """The sample knowledge notes: file name -> markdown."""
    folder = resources.files(SAMPLE_PACKAGE).joinpath("notes")
    return {
        entry.name: entry.read_text("utf-8")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".md")
    }


def load_sample(box: Box) -> str:
    """Append the sample thread (compacting between its generations); return its channel."""
    data = sample_thread()
    channel: str = data["channel"]
    box.create_thread(channel, title=data.get("title"))
    for generation in data["generations"]:
        items = []
        for message in generation["messages"]:
            item = dict(message)
            if item.pop("content_file", None) == "journal":
                item["content"] = _journal()
            items.append(item)
        box.append_many(channel, items)
        if "summary" in generation:
            box.compact(channel, generation["summary"])
    return channel


#: The demo's memory entries: (type, title, text).
SAMPLE_MEMORIES: tuple[tuple[str, str, str], ...] = (
    (
        "pitfall",
        "Replicas get renamed",
        "A database replica is renamed when it is rebuilt: check the inventory before reusing "
        "an old DATABASE_URL.",
    ),
    (
        "guideline",
        "Staging key",
        "Log in to staging as `deploy` with ~/.ssh/staging_ed25519, never the personal key.",
    ),
    ("principle", "Evidence first", "Quote the exact error line before proposing a fix."),
)
#: What the demo's ``recall_context`` asks, and of which document.
CONTEXT_QUERY = "rollback previous image"
CONTEXT_SOURCE = "deploy-runbook.md"


@dataclass(frozen=True, slots=True)
class CuratedDemo:
    """The demo's knowledge and memory step: what it stored and one exact slice."""

    memory_keys: list[str]
    sections: int
    query: str
    source: str
    context: RecallResult


def load_curated(box: Box) -> CuratedDemo:
    """Index the sample notes (by section), remember the sample lessons, recall a slice."""
    sections = sum(len(box.add_document(text, name)) for name, text in sample_notes().items())
    keys = [box.remember(text, type=kind, title=title).key for kind, title, text in SAMPLE_MEMORIES]
    context = box.recall_context(CONTEXT_QUERY, source=CONTEXT_SOURCE)
    return CuratedDemo(keys, sections, CONTEXT_QUERY, CONTEXT_SOURCE, context)


@dataclass(frozen=True, slots=True)
class CodeDemo:
    """The code step of the demo: the sample source indexed, and one symbol looked up."""

    scope: str
    files: int
    symbols: int
    query: str
    hits: list[Hit]


def demo_code(box: Box) -> CodeDemo | None:
    """Index this package's own source (``recallbox/samples``) and look a symbol up; ``None``
    without the ``code`` extra (the code bucket then stays empty, DESIGN §8)."""
    try:
        report = box.index_code(Path(__file__).parent, scope=CODE_DEMO_SCOPE)
    except DependencyMissing:
        return None
    hits = box.search(CODE_DEMO_QUERY, domain="code", scope=CODE_DEMO_SCOPE, limit=3)
    return CodeDemo(report.scope, report.total_files, report.total_symbols, CODE_DEMO_QUERY, hits)


@dataclass(frozen=True, slots=True)
class DemoResult:
    """What ``recallbox demo`` shows: the loaded thread, its health, one search, and the
    knowledge and memory step."""

    thread: Thread
    messages_per_generation: dict[int, int]
    notes: list[str]
    indexes_healthy: bool
    query: str
    found: str
    curated: CuratedDemo
    recalled: BucketedRecall | None = None
    code: CodeDemo | None = None


def recall_step(box: Box) -> BucketedRecall:
    """The demo's last step: one bucketed recall over everything the sample loaded."""
    return box.recall(DEMO_RECALL_QUERY, budget_chars=DEMO_RECALL_BUDGET_CHARS)


def run_demo(box: Box, query: str) -> DemoResult:
    """Load the sample into ``box``, search it across its compaction, index the notes,
    remember a few lessons and recall an exact slice, then recall from every domain."""
    channel = load_sample(box)
    curated = load_curated(box)
    generations = box.generations(channel)
    result = DemoResult(
        thread=box.thread(channel),
        messages_per_generation={
            g.number: len(box.messages(channel, g.number)) for g in generations
        },
        notes=sorted(sample_notes()),
        indexes_healthy=box.doctor().healthy,
        query=query,
        found=box.search_memory(query, channel),
        curated=curated,
        code=demo_code(box),
    )
    return replace(result, recalled=recall_step(box))
