"""Privacy canaries: unique words planted in quarantined threads and excluded-source
transcripts inside a large randomized session, then every output of every interface scanned.

Each denied message carries two canaries, ``A … B``: a surface is queried with ``A`` (and with
the words around it) and must never show ``B`` — nor any other canary, nor a denied channel
name when the surface is agent-facing. A query that matches only denied items must produce what
a query that matches nothing produces (a never-stored word in its place).

:data:`~reliability.harness.canary_surfaces.SURFACES` is the one table of interfaces: each
:class:`Surface` turns a :class:`Planted` session into the texts it outputs. A later domain
(memory, knowledge, code, tool outputs, recall) adds its verbs as rows there.
"""

from __future__ import annotations

import json
import os
import random
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
