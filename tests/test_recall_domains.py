"""``box.recall`` over the five real domains (DESIGN §5, #12): memory, knowledge, sessions,
transcripts and code each hold data, each bucket finds it, the privacy gate denies it in every
bucket, the budget holds for any query, one embedder call serves all five, and a recall writes
nothing but the hit-log.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox.domains.registry import DOMAINS
from recallbox.recall import (
    LABEL_MAX_CHARS,
    MIN_RECALL_BUDGET_CHARS,
    RECALL_DOMAIN_HITS,
    RECALL_HEADER,
    RECALL_MAX_BUDGET_CHARS,
)
from recallbox.text.windows import SEP
from table_dump import dump_tables, hit_log_rows

#: The word every domain's data holds, and each domain's own canary.
COMMON = "quokka"
CANARIES = {
    "memory": "MEMCANARY",
    "knowledge": "DOCCANARY",
    "sessions": "MSGCANARY",
    "transcripts": "TRXCANARY",
    "code": "codecanary",
}
NOTHING = "NOTHINGXYZ"
SESSION = "11111111-2222-4333-8444-555555555555"
#: What each bucket's items open with, and the id field they carry.
ID_FIELDS = {
    "memory": "memory_key",
    "knowledge": "section_id",
    "sessions": "message_id",
    "transcripts": "chunk_id",
    "code": "symbol_id",
}
ID_RE = re.compile(r"^\[(memory_key|section_id|message_id|chunk_id|symbol_id)=(\S+?)[\] ]", re.M)


def transcript(session: str, text: str) -> str:
    lines = [
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "sessionId": session,
            "timestamp": "2025-09-01T10:00:00.000Z",
            "message": {"role": "user", "content": f"please look at {text} in the logs"},
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
                "content": [{"type": "text", "text": f"{text} was the failing build step"}],
            },
        },
    ]
    return "\n".join(json.dumps(line) for line in lines) + "\n"


CODE = '''"""Billing helpers."""


def charge_{common}_{canary}(amount):
    """Charge the {common} invoice."""
    return refund_{common}(amount)


def refund_{common}(amount):
    """Refund the {common} invoice."""
    return amount
'''


@dataclass(frozen=True)
class Fill:
    """What :func:`fill` stored (the channel and source names the gate denies by)."""

    channel: str
    transcript: Path
    document: str
    code_file: str


def fill(box: recallbox.Box, root: Path) -> Fill:
    """Real data in every domain: each holds :data:`COMMON` and its own canary."""
    box.append("ops", "user", f"the {COMMON} deploy failed: {CANARIES['sessions']}")
    for i in range(RECALL_DOMAIN_HITS):  # the sessions bucket's whole share: so the transcript's
        # chunks (whose best messages the sessions domain also finds) are not deduped away
        box.append("ops", "assistant", f"{COMMON} {COMMON} retry {i}")
    box.remember(f"a {COMMON} deploy needs {CANARIES['memory']} first", type="pitfall")
    document = "runbook.md"
    box.add_document(
        f"# Runbook\n\n## The {COMMON} step\n\nRun {CANARIES['knowledge']} before it.\n", document
    )
    repo = root / "repo"
    repo.mkdir()
    (repo / "billing.py").write_text(
        CODE.format(common=COMMON, canary=CANARIES["code"]), encoding="utf-8"
    )
    box.index_code(repo, scope="repo")
    path = root / "agent-session.jsonl"
    path.write_text(transcript(SESSION, f"{COMMON} {CANARIES['transcripts']}"), encoding="utf-8")
    report = box.import_transcripts("claude-code", [path])
    (channel,) = report.files[0].channels
    return Fill(channel, path, document, "billing.py")


def deny_everything(box: recallbox.Box, filled: Fill) -> None:
    """The stored policy denying every domain's data: a quarantined thread (sessions), an
    excluded transcript (transcripts), ``MEMORY.md`` (memory), a document (knowledge) and a
    file (code)."""
    box.quarantine("ops")
    box.exclude_source(filled.transcript.name)
    box.exclude_source("MEMORY.md")
    box.exclude_source(filled.document)
    box.exclude_source(filled.code_file)


@pytest.fixture
def filled(db_location: DbLocation, tmp_path: Path) -> Iterator[tuple[recallbox.Box, Fill]]:
    with recallbox.open(db_location("five")) as box:
        yield box, fill(box, tmp_path)


def rendered_ids(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for field, value in ID_RE.findall(text):
        found.setdefault(field, []).append(value)
    return found


def test_every_bucket_finds_its_real_data(filled: tuple[recallbox.Box, Fill]) -> None:
    box, _ = filled
    result = box.recall(COMMON)
    assert list(result.buckets) == list(DOMAINS)
    for name, bucket in result.buckets.items():
        assert bucket.error is None, name
        assert bucket.hits, f"the {name} bucket found nothing"
        assert bucket.layer == "keyword", name
        assert all(hit.domain == name for hit in bucket.hits), name
    text = result.render()
    labels = re.findall(r"^\[bucket=(\w+) layer=(\w+)\]$", text, re.M)
    assert labels == [(name, "keyword") for name in DOMAINS]
    ids = rendered_ids(text)
    for name, field in ID_FIELDS.items():
        shown = [h.id for h in result.buckets[name].hits]
        assert ids.get(field), f"no {field} rendered"
        if name == "sessions":  # windows: the hits and their neighbours, each id whole
            assert set(shown) <= set(ids[field])
            assert all(box.message(i).id == i for i in ids[field])
        else:
            assert set(ids[field]) <= set(shown), name
    for name, canary in CANARIES.items():  # each canary is in its own domain's data only
        for other in DOMAINS:
            found = box.recall(canary, domains=[other]).buckets[other].hits
            # an imported transcript's messages are sessions messages too
            owns = other == name or (name, other) == ("transcripts", "sessions")
            assert bool(found) == owns, (canary, other)


def test_the_stored_policy_denies_every_bucket(filled: tuple[recallbox.Box, Fill]) -> None:
    box, fill_ = filled
    before = box.recall(COMMON)
    assert all(b.hits for b in before.buckets.values())
    nothing = box.recall(NOTHING).render()
    deny_everything(box, fill_)
    after = box.recall(COMMON)
    assert {n: b.hits for n, b in after.buckets.items()} == dict.fromkeys(DOMAINS, ())
    assert after.render() == nothing
    for canary in CANARIES.values():
        assert box.recall(canary).render() == nothing
        assert box.recall(canary, allow_embed=True).render() == nothing
        assert box.search_memory(canary) == box.search_memory(NOTHING).replace(NOTHING, canary)


def test_a_per_call_exclusion_denies_each_bucket(filled: tuple[recallbox.Box, Fill]) -> None:
    box, fill_ = filled
    for name, exclusion in (
        ("memory", "MEMORY.md"),
        ("knowledge", fill_.document),
        ("transcripts", fill_.transcript.name),
        ("code", fill_.code_file),
    ):
        narrowed = box.recall(COMMON, excluded=[exclusion])
        assert narrowed.buckets[name].hits == (), name
        others = [n for n in DOMAINS if n != name]
        assert all(narrowed.buckets[n].hits for n in others), name


class SpyEmbedder:
    """Vectors by meaning, recorded: the only text about kangaroos points along x."""

    model_id = "spy-five-3"
    dim = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        return [self._vector(t) for t in texts]

    @staticmethod
    def _vector(text: str) -> list[float]:
        if "marsupial" in text:
            return [1.0, 0.0, 0.0]
        if "kangaroo" in text:
            return [0.8, 0.6, 0.0]
        return [0.0, 0.0, 1.0]


def test_one_embedder_call_serves_all_five_domains(db_location: DbLocation, tmp_path: Path) -> None:
    spy = SpyEmbedder()
    with recallbox.open(db_location("embed"), embedder=spy) as box:
        fill(box, tmp_path)
        target = box.remember("kangaroos graze in the paddock at dawn", type="model")
        box.embed_all()
        spy.calls.clear()
        keyword_only = box.recall("marsupial hopping")
        assert spy.calls == []
        assert keyword_only.buckets["memory"].hits == ()
        result = box.recall("marsupial hopping", allow_embed=True)
        assert spy.calls == [["marsupial hopping"]]  # once per recall, for all five domains
        memory = result.buckets["memory"].hits
        assert [h.id for h in memory] == [target.key] and memory[0].keyword == 0.0
        assert result.buckets["memory"].layer == "hybrid"
        assert f"memory_key={target.key}" in result.render()
        spy.calls.clear()
        box.recall(COMMON, allow_embed=True)
        assert len(spy.calls) == 1


def test_recall_over_five_domains_writes_nothing_but_the_hit_log(
    db_location: DbLocation, tmp_path: Path
) -> None:
    db = db_location("dump")
    with recallbox.open(db) as box:
        fill(box, tmp_path)
        box.hits.flush()
        logged = len(hit_log_rows(db))
        before = dump_tables(db)
        result = box.recall(COMMON)
        box.recall(NOTHING)
        assert dump_tables(db) == before
        box.hits.flush()
        rows = hit_log_rows(db)[logged:]
        want = [(n, b.layer, h.id) for n, b in result.buckets.items() for h in b.hits]
        assert [(r[0], r[1], r[2]) for r in rows] == want
        assert {r[0] for r in rows} == set(DOMAINS)


# -- the budget and the per-domain shares, for any query, with all five domains -----------------


@pytest.fixture(scope="module")
def big(module_db_location: DbLocation) -> Iterator[recallbox.Box]:
    """Every domain with more than a 12 000-character budget can show (on each backend)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with recallbox.open(module_db_location("big")) as box:
            fill(box, root)
            for i in range(30):
                box.append(f"t{i % 4}", "user", f"{COMMON} incident {i} " + "detail " * 120)
                box.remember(f"{COMMON} lesson {i}: " + "careful " * 60, type="guideline")
            sections = "\n\n".join(f"## {COMMON} part {i}\n\n" + "word " * 150 for i in range(20))
            box.add_document(f"# Big\n\n{sections}\n", "big.md")
            yield box


QUERIES = st.one_of(
    st.sampled_from([COMMON, f"{COMMON} incident", "detail", "召回", "[", f"{COMMON}?", ""]),
    st.text(max_size=30),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=QUERIES,
    budget=st.integers(MIN_RECALL_BUDGET_CHARS, RECALL_MAX_BUDGET_CHARS),
    domains=st.lists(st.sampled_from(DOMAINS), min_size=1, max_size=5, unique=True),
)
def test_every_bucket_keeps_to_its_share_and_the_whole_to_the_budget(
    big: recallbox.Box, query: str, budget: int, domains: list[str]
) -> None:
    result = big.recall(query, domains=domains, budget_chars=budget)
    text = result.render()
    assert len(text) <= budget and text.startswith(RECALL_HEADER)
    names = [n for n in DOMAINS if n in domains]
    assert list(result.buckets) == names
    fixed = len(RECALL_HEADER) + sum(2 + LABEL_MAX_CHARS[n] + 1 for n in names)
    share, carry = divmod(budget - fixed, len(names))
    for name in names:  # equal shares, and what one leaves flows to the next
        bucket = result.buckets[name]
        available = share + carry
        assert len(bucket.text) <= available, name
        carry = max(0, available - len(bucket.text))
    returned = {h.id for b in result.buckets.values() for h in b.hits}
    for field, value in ID_RE.findall(text):  # every rendered id is whole
        if field == "message_id":  # a hit or a neighbour in its window
            assert big.message(value).id == value
        else:
            assert value in returned, (field, value)


def test_a_big_recall_gives_every_bucket_room(big: recallbox.Box) -> None:
    result = big.recall(COMMON, budget_chars=RECALL_MAX_BUDGET_CHARS)
    assert all(b.hits and b.error is None for b in result.buckets.values())
    lengths = {n: len(b.text) for n, b in result.buckets.items()}
    assert all(length > 200 for length in lengths.values()), lengths
    assert len(result.render()) <= RECALL_MAX_BUDGET_CHARS


def test_search_memory_other_memory_part_recalls_memory_knowledge_and_sessions(
    filled: tuple[recallbox.Box, Fill],
) -> None:
    """DESIGN §3.2: the default other-memory answerer is this recall over memory, knowledge
    and sessions (keyword only), after the literal part and never repeating it."""
    box, fill_ = filled
    answer = box.search_memory(COMMON, "ops").split(SEP, 1)[1]
    assert answer.startswith(RECALL_HEADER)
    labels = re.findall(r"^\[bucket=(\w+) layer=\w+\]$", answer, re.M)
    assert labels == ["memory", "knowledge", "sessions"]
    ids = rendered_ids(answer)
    assert ids.get("memory_key") and ids.get("section_id")
    assert "symbol_id" not in ids and "chunk_id" not in ids
    deny_everything(box, fill_)
    assert SEP not in box.search_memory(COMMON, fill_.channel)


def test_the_hit_log_never_changes_a_ranking(filled: tuple[recallbox.Box, Fill]) -> None:
    """DESIGN §5: ``decay`` and the lazy embedding pass read the hit-log, ranking never does:
    many hit and drill rows on each bucket's last hit (and no ``decay``) change no bucket."""
    box, filled_in = filled

    def ranked() -> tuple[list[tuple[str, str, list[tuple[str, float]]]], str]:
        result = box.recall(COMMON)
        buckets = [
            (n, b.layer, [(h.id, h.score) for h in b.hits]) for n, b in result.buckets.items()
        ]
        return buckets, result.render()

    before = ranked()
    last = {name: hits[-1] for name, _, hits in before[0] if hits}
    assert set(last) == set(DOMAINS)
    for _ in range(10):
        box.recall(COMMON)
        box.read_message(last["sessions"][0])
        box.recall_context(COMMON, source="MEMORY.md")
        box.recall_context(COMMON, source=filled_in.document)
    box.hits.flush()
    assert box.hit_stats().drill_rows >= 30
    assert ranked() == before


def test_the_stored_policy_denies_every_bucket_on_the_vector_leg_too(
    db_location: DbLocation, tmp_path: Path
) -> None:
    """With stored vectors (the in-memory copy of each space, ``vector_cache.py``) a denied
    row is never a neighbour: once everything is denied, a canary's recall with embedding
    equals a recall of nothing."""
    with recallbox.open(db_location("vec"), embedder="hash") as box:
        fill_ = fill(box, tmp_path)
        assert box.embed_all() > 0
        before = box.recall(COMMON, allow_embed=True)
        assert {b.layer for b in before.buckets.values()} == {"hybrid"}
        deny_everything(box, fill_)
        nothing = box.recall(NOTHING, allow_embed=True)
        assert {n: b.hits for n, b in nothing.buckets.items()} == dict.fromkeys(DOMAINS, ())
        for query in (COMMON, *CANARIES.values()):
            assert box.recall(query, allow_embed=True).render() == nothing.render()
            assert box.search_memory(query, "elsewhere").replace(query, "Q") == (
                box.search_memory(NOTHING, "elsewhere").replace(NOTHING, "Q")
            )


@pytest.mark.parametrize("query", [COMMON, f"{COMMON} incident", "detail careful", "word"])
def test_each_bucket_keeps_its_own_domains_order(big: recallbox.Box, query: str) -> None:
    """No global re-rank (DESIGN §5): each bucket lists its domain's own ranking, in that
    order, only thinned by the dedupe (a best message an earlier bucket holds)."""
    result = big.recall(query)
    for name, bucket in result.buckets.items():
        own = big.search(query, domain=name, limit=RECALL_DOMAIN_HITS, allow_embed=False)
        ids = [h.id for h in bucket.hits]
        assert ids == [h.id for h in own if h.id in set(ids)], name
        assert [h.score for h in bucket.hits] == [h.score for h in own if h.id in set(ids)]
        dropped = [h for h in own if h.id not in set(ids)]
        earlier = {
            h.best_message_id
            for n in DOMAINS[: DOMAINS.index(name)]
            for h in result.buckets[n].hits
        }
        assert all(h.best_message_id in earlier for h in dropped), name
    assert sum(len(b.hits) for b in result.buckets.values()) > len(DOMAINS)
