"""The deterministic synthetic agent history of ``benchmarks/scale.py`` and its fixed query mix.

Everything here is a pure function of :data:`SEED` and the history size, so a database built
once can be cached and every rerun asks the same questions of the same text.

The history (DESIGN §2 data model, written through the public API only):

* threads of :data:`THREAD_MESSAGES` messages, compacted (``box.compact``) about every
  :data:`COMPACT_EVERY` messages, so most threads have several generations;
* turns cycle user prompt → assistant with a tool call (nested arguments: command, cwd, env,
  a list of files, options) → tool output (source code, a log, a JSON document, or prose) →
  assistant prose; a few machine events, invisible and pending messages are mixed in;
* message lengths are log-normal (median :data:`LENGTH_MEDIAN_CHARS`, mean ~1 500, ~1 % over
  20 000 characters); :data:`CHINESE_SHARE` of the messages are Chinese;
* unique identifiers (request ids, file paths, host names) are sprinkled in, one counter for
  the whole history, so a query for one has a document frequency of about 1;
* every :data:`SINGLE_THREAD_EVERY`-th thread is written with single ``append`` calls, the
  rest with ``append_many`` per generation, so both ingest paths are timed at each size;
* the acceptance plants: (a) one old message holds :data:`PLANT_A` while, in the newer half of
  the history, every :data:`PLANT_A_DECOY_EVERY`-th message holds every trigram of it but never
  the literal itself; (b) the thread :data:`PLANT_B_CHANNEL` holds :data:`PLANT_B` in
  :func:`plant_b_messages` messages across two generations.
"""

from __future__ import annotations

import bisect
import json
import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

SEED = 20_261_201
DATA_VERSION = 1  # bump whenever the generated history would change (invalidates caches)
LENGTH_MEDIAN_CHARS = 300
LENGTH_SIGMA = math.sqrt(2 * math.log(5))  # mean = median * e^(sigma^2 / 2) = 1 500
LENGTH_MIN_CHARS = 8
LENGTH_MAX_CHARS = 200_000
VOCABULARY_WORDS = 40_000
ZIPF_EXPONENT = 1.07
PROSE_POOL_WORDS = 3_000_000
CODE_POOL_LINES = 120_000
LOG_POOL_LINES = 120_000
JSON_POOL_RECORDS = 60_000
ZH_VOCABULARY_WORDS = 5_000
ZH_POOL_WORDS = 500_000
CJK_BASE = 0x4E00
CJK_CHARS = 1_500
CHINESE_SHARE = 0.05
THREAD_MESSAGES = (100, 900)  # mean 500: ~2 000 threads at 1M, ~20 at 10k
COMPACT_EVERY = 300
APPEND_MANY_BATCH = 500
SINGLE_THREAD_EVERY = 20  # thread k is written with single appends when k % 20 == 3
IDENTIFIER_EVERY_CHARS = 1_500
MACHINE_EVENT_SHARE = 0.02
INVISIBLE_SHARE = 0.01
PENDING_SHARE = 0.002
START_TIME = datetime(2026, 1, 1, tzinfo=UTC)
MESSAGE_GAP = timedelta(seconds=7)

PLANT_A = "plantmark-alpha"
PLANT_A_DECOY = " plantmark-al k-alpha "  # every trigram of PLANT_A, never PLANT_A itself
PLANT_A_DECOY_EVERY = 20
PLANT_B = "plantmark-bravo"
PLANT_B_CHANNEL = "plant-b"
PLANT_B_RANGE = (400, 3_000)  # messages holding PLANT_B: 1 % of the history, clamped
STRESS_CHANNEL = "stress"
STRESS_RESULTS = 120
STRESS_RESULT_CHARS = 60_000
STRESS_QUERIES = ("keyword", "keyword-3", "keyword-6 x", "KEYWORD", "missing-term", "xxxx keyword")

TOOLS = ("bash", "read_file", "edit_file", "grep", "web_fetch", "run_tests")
COMMANDS = ("cat", "grep -n", "ssh", "make", "curl -s", "pytest -x", "git diff")
LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")


def plant_b_messages(size: int) -> int:
    """How many messages of a ``size``-message history hold :data:`PLANT_B`."""
    low, high = PLANT_B_RANGE
    return max(low, min(high, size // 100))


def channel_name(index: int) -> str:
    """The channel of the ``index``-th generated thread."""
    return f"agent-{index:05d}"


def _zipf_choices(rng: random.Random, items: list[str], k: int) -> list[str]:
    weights = [1 / (rank**ZIPF_EXPONENT) for rank in range(1, len(items) + 1)]
    return rng.choices(items, weights=weights, k=k)


class Pool:
    """Text units (words, lines, records) and their cumulative lengths, sliced by length."""

    def __init__(self, units: list[str], sep: str) -> None:
        self.units = units
        self.sep = sep
        self.ends: list[int] = []
        total = 0
        for unit in units:
            total += len(unit) + len(sep)
            self.ends.append(total)

    def take(self, rng: random.Random, length: int) -> str:
        """Consecutive units from a random start, about ``length`` characters together."""
        start = rng.randrange(0, len(self.units))
        base = self.ends[start - 1] if start else 0
        end = bisect.bisect_left(self.ends, base + length, lo=start)
        end = min(max(end, start) + 1, len(self.units))
        text = self.sep.join(self.units[start:end])
        return text[:length] if len(text) > length else text


class Corpus:
    """The vocabulary and the text pools (prose, code, logs, JSON records, Chinese)."""

    def __init__(self) -> None:
        rng = random.Random(SEED)
        self.rng = rng
        syllables = [c + v for c in "bdfgklmnprstvz" for v in ("a", "e", "i", "o", "u", "ai", "or")]
        tech = ["error", "warning", "deploy", "config", "timeout", "retry", "connection"]
        tech += ["database", "cache", "request", "failed", "worker", "session", "token"]
        seen = set(tech)
        words = list(tech)
        while len(words) < VOCABULARY_WORDS:
            word = "".join(rng.choices(syllables, k=rng.choice((1, 2, 2, 3, 3, 4))))
            if word not in seen and len(word) >= 3:
                seen.add(word)
                words.append(word)
        self.words = words
        drawn = _zipf_choices(rng, words, PROSE_POOL_WORDS)
        for i in range(0, len(drawn), 13):
            drawn[i] += rng.choice((".", ",", "\n", ":", "?"))
        self.prose = Pool(drawn, " ")
        self.identifiers_code = [
            f"{a}_{b}" for a, b in zip(words[:3_000:3], words[1:3_000:3], strict=False)
        ]
        self.code = Pool([self._code_line(rng) for _ in range(CODE_POOL_LINES)], "\n")
        self.log = Pool([self._log_line(rng, i) for i in range(LOG_POOL_LINES)], "\n")
        self.json = Pool([self._json_record(rng, i) for i in range(JSON_POOL_RECORDS)], ",\n")
        hanzi = [chr(CJK_BASE + i) for i in range(CJK_CHARS)]
        zh_words = list(
            dict.fromkeys(
                "".join(rng.choices(hanzi, k=rng.choice((2, 2, 3, 4))))
                for _ in range(ZH_VOCABULARY_WORDS)
            )
        )
        self.zh_words = zh_words
        self.zh = Pool(_zipf_choices(rng, zh_words, ZH_POOL_WORDS), "")

    def _word(self, rng: random.Random, top: int) -> str:
        return self.words[min(int(rng.paretovariate(1.0)) - 1, top - 1)]

    def _code_line(self, rng: random.Random) -> str:
        name = rng.choice(self.identifiers_code)
        arg = self._word(rng, 2_000)
        shape = rng.randrange(5)
        if shape == 0:
            return f"def {name}(self, {arg}: str) -> dict[str, Any]:"
        if shape == 1:
            return f"    {arg} = self.{name}({arg}, timeout={rng.choice((5, 30, 60))})"
        if shape == 2:
            return f"    if {arg} is None:  # {self._word(rng, 5_000)} {self._word(rng, 5_000)}"
        if shape == 3:
            return f'        raise ValueError(f"{name}: {{{arg}!r}} {self._word(rng, 800)}")'
        return f"    return {{'{arg}': {name}({arg}), 'ok': True}}"

    def _log_line(self, rng: random.Random, i: int) -> str:
        at = START_TIME + timedelta(seconds=i * 3)
        level = rng.choice(LEVELS)
        service = self._word(rng, 300)
        words = " ".join(self._word(rng, 20_000) for _ in range(rng.randint(3, 9)))
        return (
            f"{at:%Y-%m-%dT%H:%M:%SZ} {level} [svc-{service}] {words} "
            f"latency_ms={rng.randint(1, 5_000)} status={rng.choice((200, 200, 404, 500))}"
        )

    def _json_record(self, rng: random.Random, i: int) -> str:
        record = {
            "id": i,
            "name": self._word(rng, 10_000),
            "status": rng.choice(("ok", "failed", "pending")),
            "tags": [self._word(rng, 3_000) for _ in range(rng.randint(0, 3))],
            "meta": {"shard": rng.randint(0, 63), "owner": self._word(rng, 1_000)},
        }
        return json.dumps(record, separators=(", ", ": "))


@dataclass
class Writer:
    """The generation state: a clock, the identifier counter and the plants."""

    corpus: Corpus
    size: int
    rng: random.Random = field(default_factory=lambda: random.Random(SEED + 1))
    clock: int = 0
    identifiers: int = 0
    written: int = 0  # messages generated so far (every kind)
    plant_a_done: bool = False
    decoys: int = 0

    def created_at(self) -> str:
        self.clock += 1
        return (START_TIME + self.clock * MESSAGE_GAP).isoformat()

    def identifier(self) -> str:
        self.identifiers += 1
        return identifier(self.identifiers)

    def length(self) -> int:
        value = self.rng.lognormvariate(math.log(LENGTH_MEDIAN_CHARS), LENGTH_SIGMA)
        return max(LENGTH_MIN_CHARS, min(LENGTH_MAX_CHARS, int(value)))

    def sprinkle(self, body: str) -> str:
        """``body`` with a fresh identifier in front of every :data:`IDENTIFIER_EVERY_CHARS`."""
        return " ".join(
            self.identifier() + " " + body[at : at + IDENTIFIER_EVERY_CHARS]
            for at in range(0, max(1, len(body)), IDENTIFIER_EVERY_CHARS)
        )

    def prose(self, length: int) -> str:
        pool = self.corpus.zh if self.rng.random() < CHINESE_SHARE else self.corpus.prose
        return self.sprinkle(pool.take(self.rng, length))

    def tool_output(self, length: int) -> str:
        roll = self.rng.random()
        if roll < 0.3:
            return self.sprinkle(self.corpus.code.take(self.rng, length))
        if roll < 0.6:
            return self.sprinkle(self.corpus.log.take(self.rng, length))
        if roll < 0.8:
            return "[" + self.corpus.json.take(self.rng, length) + "]"
        return self.prose(length)

    def tool_call(self, call_id: str) -> dict[str, Any]:
        rng = self.rng
        words = self.corpus.words
        path = (
            identifier_path(self.identifier())
            if rng.random() < 0.3
            else f"/srv/app/lib/{words[rng.randrange(500)]}.py"
        )
        return {
            "id": call_id,
            "name": rng.choice(TOOLS),
            "arguments": {
                "command": f"{rng.choice(COMMANDS)} {path}",
                "cwd": f"/srv/app/{words[rng.randrange(200)]}",
                "env": {"RUN_ID": self.identifier()},
                "files": [{"path": path}, {"path": self.identifier(), "mode": 420}],
                "options": {"timeout": rng.choice((30, 60, 120)), "flags": ["-v", "--json"]},
            },
        }

    def message(self, turn: int) -> dict[str, Any]:
        """One message of a thread (``turn``: its position in the thread)."""
        rng = self.rng
        step = turn % 4
        item: dict[str, Any] = {"created_at": self.created_at()}
        if step == 0:
            item.update(role="user", content=self.prose(self.length()))
        elif step == 1:
            item.update(role="assistant", content=self.prose(self.length()))
            item["tool_calls"] = [self.tool_call(f"call-{self.written}")]
        elif step == 2:
            item.update(role="tool", content=self.tool_output(self.length()))
            item["tool_call_id"] = f"call-{self.written - 1}"
        else:
            item.update(role="assistant", content=self.prose(self.length()))
        roll = rng.random()
        if roll < MACHINE_EVENT_SHARE:
            item.update(role="system", kind="machine_event")
            item.pop("tool_calls", None)
            item.pop("tool_call_id", None)
        elif roll < MACHINE_EVENT_SHARE + INVISIBLE_SHARE:
            item["model_visible"] = False
        elif roll < MACHINE_EVENT_SHARE + INVISIBLE_SHARE + PENDING_SHARE:
            item["pending"] = True
        searchable = item.get("kind", "message") == "message" and "model_visible" not in item
        if searchable and not item.get("pending"):
            if not self.plant_a_done:
                item["content"] = f"{item['content']} {PLANT_A} "
                self.plant_a_done = True
            elif self.written >= self.size // 2 and self.written % PLANT_A_DECOY_EVERY == 0:
                item["content"] += PLANT_A_DECOY
                self.decoys += 1
        self.written += 1
        return item


def identifier(n: int) -> str:
    """The ``n``-th sprinkled identifier: a request id, a file path or a host name."""
    kind = n % 3
    if kind == 0:
        return f"req-{n:08x}"
    if kind == 1:
        return f"/srv/app/mod{n % 977}/file_{n}.py"
    return f"host-{n}.prod.internal"


def identifier_path(value: str) -> str:
    """A path made from an identifier (hosts and request ids become a file under /var)."""
    return value if value.startswith("/") else f"/var/run/{value}.json"


@dataclass(frozen=True)
class Step:
    """One write through the public API: ``kind`` is "many", "single" or "compact"."""

    kind: str
    channel: str
    items: list[dict[str, Any]]
    summary: str = ""


def history(writer: Writer) -> Iterator[Step]:
    """The writes that build ``writer.size`` messages of history, in order (lazily)."""
    size = writer.size
    rng = random.Random(SEED + 2)
    plant_b_at = size // 2
    thread = 0
    b_total = plant_b_messages(size)
    while writer.written < size:
        if writer.written >= plant_b_at and b_total:
            yield from _plant_b(writer, b_total)
            b_total = 0
            continue
        count = min(rng.randint(*THREAD_MESSAGES), size - writer.written)
        channel = channel_name(thread)
        single = thread % SINGLE_THREAD_EVERY == 3
        thread += 1
        done = 0
        while done < count:
            segment = min(count - done, COMPACT_EVERY)
            items = [writer.message(done + i) for i in range(segment)]
            done += segment
            if single:
                for item in items:
                    yield Step("single", channel, [item])
            else:
                for at in range(0, len(items), APPEND_MANY_BATCH):
                    yield Step("many", channel, items[at : at + APPEND_MANY_BATCH])
            if done < count:
                summary = f"Summary of the work so far: {writer.prose(400)}"
                writer.clock += 1
                yield Step("compact", channel, [], summary)


def _plant_b(writer: Writer, total: int) -> Iterator[Step]:
    """The thread that holds :data:`PLANT_B` in ``total`` messages across two generations."""
    first = total // 2
    for part, count in enumerate((first, total - first)):
        items = []
        for i in range(count):
            body = writer.prose(min(writer.length(), 2_000))
            cut = writer.rng.randrange(0, len(body) + 1)
            items.append(
                {
                    "role": "assistant" if i % 2 else "user",
                    "content": f"{body[:cut]} {PLANT_B} {body[cut:]}",
                    "created_at": writer.created_at(),
                }
            )
            writer.written += 1
        for at in range(0, len(items), APPEND_MANY_BATCH):
            yield Step("many", PLANT_B_CHANNEL, items[at : at + APPEND_MANY_BATCH])
        if part == 0:
            yield Step("compact", PLANT_B_CHANNEL, [], f"Summary: {PLANT_B} work, part one.")


@dataclass(frozen=True)
class Query:
    """One query of the fixed mix and what it stands for."""

    text: str
    band: str  # "rare", "mid" or "common" (document frequency)
    kind: str  # "identifier", "word", "phrase", "path", "code", "cjk", "absent", "short"


def query_mix(size: int, identifiers: int, corpus: Corpus | None = None) -> list[Query]:
    """The fixed query mix: ⅓ rare, ⅓ mid, ⅓ common; 10 % under 3 characters."""
    corpus = corpus or Corpus()
    words, zh = corpus.words, corpus.zh_words
    pick = random.Random(SEED + 3)
    out: list[Query] = []

    def add(band: str, kind: str, texts: list[str]) -> None:
        out.extend(Query(t, band, kind) for t in texts)

    def phrase(low: int, high: int, n: int) -> list[str]:
        return [" ".join(words[pick.randrange(low, high)] for _ in range(n))]

    add("rare", "identifier", [identifier(pick.randrange(1, identifiers)) for _ in range(6)])
    add("rare", "word", [words[pick.randrange(15_000, VOCABULARY_WORDS)] for _ in range(6)])
    add("rare", "cjk", [zh[pick.randrange(3_000, len(zh))] for _ in range(3)])
    add("rare", "absent", [f"zqxv-missing-{i}" for i in range(2)] + ["Traceback zqxv"])
    add("rare", "short", ["zq", "xj"])
    add("mid", "word", [words[pick.randrange(800, 3_000)] for _ in range(6)])
    add("mid", "phrase", [p for _ in range(4) for p in phrase(200, 2_000, 2)])
    add("mid", "code", [pick.choice(corpus.identifiers_code[200:]) for _ in range(3)])
    add("mid", "cjk", [zh[pick.randrange(200, 1_000)] for _ in range(3)])
    add("mid", "path", [f"/srv/app/mod{pick.randrange(977)}/" for _ in range(2)])
    add("mid", "short", ["io", "pg"])
    add("common", "word", [words[pick.randrange(0, 60)] for _ in range(8)])
    add("common", "phrase", [p for _ in range(4) for p in phrase(0, 100, 3)])
    add("common", "path", ["/srv/app/lib", "latency_ms="])
    add("common", "code", ["def ", "raise ValueError"])
    add("common", "cjk", [zh[pick.randrange(0, 20)] for _ in range(2)])
    add("common", "short", ["ok", zh[0][0]])
    del size
    return out


def stress_items() -> list[dict[str, Any]]:
    """The acceptance stress thread: 120 tool results of 60 000 characters."""
    half = STRESS_RESULT_CHARS // 2
    return [
        {
            "role": "tool",
            "content": "x" * half + f" keyword-{i % 7} " + "x" * half,
            "tool_call_id": f"c{i}",
        }
        for i in range(STRESS_RESULTS)
    ]
