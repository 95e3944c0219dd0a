"""box.search (DESIGN §4.2, §4.5, §9): golden probes, exclusions, limits, domains, any query."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import recallbox
from backends import changes, settle
from recallbox.search import AVAILABLE_DOMAINS, DOMAINS
from recallbox.text.excerpt import HIT_TEXT_MAX_CHARS
from table_dump import dump_tables, hit_log_rows


class TableEmbedder:
    """A fake embedder: vectors from a fixed table, None for other texts; records its calls."""

    def __init__(
        self, table: dict[str, list[float]], *, model_id: str = "table-3", fail: bool = False
    ) -> None:
        self.table = table
        self.model_id = model_id
        self.dim = 3
        self.fail = fail
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("the model exploded")
        return [self.table.get(text) for text in texts]


EXACT = "deploy the billing service to staging"
PARAPHRASE = "kangaroos graze in the paddock at dawn"
WEAK = "the billing team had lunch and talked about football and the weather for a long time"
QUERY = "deploy billing service staging"


def open_box(path: Path, embedder: object) -> recallbox.Box:
    return recallbox.open(path, embedder=embedder)


@pytest.mark.parametrize("channel", [None, "ops"])
def test_missing_vector_probe(db_path: Path, channel: str | None) -> None:
    embedder = TableEmbedder({PARAPHRASE: [1, 0, 0], WEAK: [0, 1, 0], QUERY: [1, 0, 0]})
    with open_box(db_path, embedder) as box:
        exact, paraphrase, weak = box.append_many(
            "ops", [{"role": "user", "content": t} for t in (EXACT, PARAPHRASE, WEAK)]
        )
        assert box.embed_all() == 2  # the exact match gets no vector
        hits = box.search(QUERY, channel=channel)
    assert [h.id for h in hits] == [exact.id, paraphrase.id, weak.id]
    # the fused base (#21: ``Hit.score`` is the combined ranking score; ``explain`` its parts)
    base = [float(h.explain["fused"]) for h in hits]
    assert base[0] == 1.0 and hits[0].keyword == 1.0 and hits[0].vector is None
    assert "context" not in hits[0].explain and "context" in hits[1].explain  # no vector
    assert base[1] == pytest.approx(0.6, abs=1e-6)
    assert (hits[1].keyword, hits[1].vector) == (0.0, pytest.approx(1.0, abs=1e-6))
    assert 0.0 < base[2] < 0.4 and hits[2].vector == pytest.approx(0.0, abs=1e-6)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_vector_carries_probe(db_path: Path) -> None:
    query = "marsupial hopping"
    embedder = TableEmbedder({PARAPHRASE: [0.8, 0.6, 0], EXACT: [0, 0, 1], query: [1, 0, 0]})
    with open_box(db_path, embedder) as box:
        target, _ = box.append_many(
            "ops", [{"role": "user", "content": t} for t in (PARAPHRASE, EXACT)]
        )
        box.embed_all()
        hits = box.search(query)
        assert [h.id for h in hits] == [target.id]
        assert hits[0].explain["fused"] == pytest.approx(0.48, abs=1e-6)
        assert hits[0].keyword == 0.0 and hits[0].text == PARAPHRASE
        del embedder.table[query]  # the embedder now answers None for the query
        assert box.search(query) == []


def test_a_raising_embedder_still_yields_the_keyword_results(db_path: Path) -> None:
    with open_box(db_path, TableEmbedder({EXACT: [1, 0, 0]})) as box:
        box.append_many("ops", [{"role": "user", "content": t} for t in (EXACT, WEAK, PARAPHRASE)])
        box.embed_all()
        keyword_only = box.search(QUERY, allow_embed=False)
    with open_box(db_path, TableEmbedder({}, fail=True)) as box:
        assert box.search(QUERY) == keyword_only
        assert len(box.embedder.calls) == 1  # type: ignore[union-attr]
    assert [h.text for h in keyword_only] == [EXACT, WEAK]


def test_allow_embed_calls_the_embedder_once_per_search_and_writes_nothing(
    db_path: Path,
) -> None:
    """Nothing but the hit-log: its rows go through a side connection, after the reads."""
    embedder = TableEmbedder({EXACT: [1, 0, 0], QUERY: [1, 0, 0]})
    with open_box(db_path, embedder) as box:
        box.append_many("ops", [{"role": "user", "content": t} for t in (EXACT, WEAK)])
        box.embed_all()
        embedder.calls.clear()
        settle(box)
        before, written = dump_tables(db_path), changes(box)
        for n, query in enumerate([QUERY, "billing", "nothing matches this", "召回"], start=1):
            box.search(query)
            assert len(embedder.calls) == n and embedder.calls[-1] == [query]
        box.search(QUERY, allow_embed=False)
        box.search(QUERY, channel="ops", limit=1)
        assert len(embedder.calls) == 5
        assert changes(box) == written
        settle(box)
        assert dump_tables(db_path) == before
        box.hits.flush()
        assert {row[0] for row in hit_log_rows(db_path)} == {"sessions"}


def test_no_embedder_means_keyword_only(box: recallbox.Box) -> None:
    box.append("ops", "user", EXACT)
    (hit,) = box.search(QUERY)
    assert hit.vector is None and hit.keyword == hit.explain["fused"]
    assert hit.score == pytest.approx(hit.keyword)  # a lone message: nothing to add


def test_chinese_two_character_word(box: recallbox.Box) -> None:
    target = box.append("zh", "user", "我们的召回系统在上下文压缩之后仍然可以找到旧的消息")
    box.append("zh", "user", "今天天气很好，我们去公园散步")
    hits = box.search("召回")
    assert [h.id for h in hits] == [target.id]
    assert hits[0].text == target.content


def test_identifier_ranks_above_its_spaced_words(box: recallbox.Box) -> None:
    spaced = box.append("ops", "user", "search memory search memory: we search memory daily")
    literal = box.append("ops", "assistant", "call search_memory with the query")
    hits = box.search("search_memory")
    assert [h.id for h in hits] == [literal.id, spaced.id]


def test_an_identifier_far_past_the_head_of_a_long_message_still_counts(
    box: recallbox.Box,
) -> None:
    """Candidates are held as heads; the literal is looked for in the whole text (read a chunk
    of candidates at a time), so one 20 000 characters in still ranks its message first."""
    far = box.append("ops", "tool", "search memory log " + "x " * 10_000 + "search_memory done")
    spaced = box.append("ops", "user", "search memory search memory: we search memory daily")
    hits = box.search("search_memory", allow_embed=False)
    assert [h.id for h in hits] == [far.id, spaced.id]


def test_long_candidates_are_read_a_few_at_a_time(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whole texts are read to count a query's identifiers, as many at once as fit
    ``LITERAL_READ_CHARS`` at the lengths seen: 64 long tool outputs at once held 4.5 MiB."""
    from recallbox.domains import sessions

    size = sessions.LITERAL_READ_CHARS // 3
    for i in range(30):
        box.append("ops", "tool", f"run {i} deploy_step log " + "y " * (size // 2))
    reads: list[int] = []
    real = type(box.store).search_rows

    def counted(store: object, ids: Sequence[str], **kw: object) -> object:
        reads.append(len(ids))
        return real(store, ids, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(type(box.store), "search_rows", counted)
    hits = box.search("deploy_step", allow_embed=False)
    assert len(hits) > 0 and all("deploy_step" in h.text for h in hits)
    assert reads[0] == sessions.LITERAL_FIRST_ROWS
    candidate_reads = list(itertools.takewhile(lambda n: n <= 3, reads[1:]))
    assert sum(candidate_reads) + reads[0] == 30  # the rest: the hits' rows, read once


def test_a_read_of_whole_texts_grows_at_most_twofold() -> None:
    """Sized by the mean length seen so far, a read after short lines could take 64 long tool
    outputs at once; it at most doubles, then follows the lengths."""
    from recallbox.domains.sessions import LITERAL_READ_CHARS, LITERAL_READ_ROWS, _read_size

    assert _read_size(8, 8 * 200, 8) == 16  # 200-character lines: 64 would fit
    assert _read_size(24, 8 * 200 + 16 * 70_000, 16) == LITERAL_READ_CHARS * 24 // 1_121_600
    assert _read_size(1, 10_000_000, 1) == 1
    assert _read_size(64, 64, 64) == LITERAL_READ_ROWS


def test_a_search_keeps_no_term_plan_past_its_read_snapshot(box: recallbox.Box) -> None:
    """Each plan holds its scope (every allowed thread): plans of ended searches kept made a
    search process's memory grow with the history, on either backend."""
    from recallbox.storage.postgres import literal as pg_literal
    from recallbox.storage.sqlite import literal as sqlite_literal

    box.append("ops", "user", "deploy failed on host1")
    for i in range(4):
        assert "deploy" in box.search_memory(f"deploy failed on host{i % 2}")
        assert sqlite_literal._plans == {} and pg_literal._plans == {}
    pool = box.store.pool  # type: ignore[attr-defined]
    with pool.snapshot():
        assert "deploy" in box.search_memory("deploy failed")
        kept = {**sqlite_literal._plans, **pg_literal._plans}
        assert {key[0] for key in kept} == {pool.snapshot_id()}
    assert sqlite_literal._plans == {} and pg_literal._plans == {}


def test_excluded_messages_and_threads_are_never_returned(box: recallbox.Box) -> None:
    text = "the zebra deployment notes"
    visible = box.append("ops", "user", text + " (visible)")
    box.append("ops", "user", text + " (pending)", pending=True)
    box.append("ops", "user", text + " (hidden)", model_visible=False)
    box.append("ops", "system", text + " (event)", kind="machine_event")
    old = box.append("ops", "user", text + " (superseded)")
    box.supersede(old.id, visible.id)
    box.compact("ops", text + " (summary)")
    box.append("secret", "user", text + " (quarantined)")
    box.quarantine("secret")
    assert [h.id for h in box.search("zebra deployment")] == [visible.id]
    assert box.search("zebra", channel="secret") == []
    assert box.search("zebra", channel="no such channel") == []


def test_an_excluded_source_is_denied(box: recallbox.Box) -> None:
    box.append("import:a", "user", "the zebra notes")
    box.store.set_thread_source("import:a", "notes.md", None)
    box.exclude_source("notes.md")
    assert box.search("zebra") == []
    assert box.search("zebra", channel="import:a") == []


def test_channel_restricts_and_hits_carry_their_fields(box: recallbox.Box) -> None:
    box.append("a", "user", "zebra in thread a")
    b = box.append("b", "assistant", "zebra in thread b", created_at="2024-05-01T10:00:00Z")
    (hit,) = box.search("zebra", channel="b")
    assert (hit.id, hit.domain, hit.channel, hit.role, hit.text) == (
        b.id,
        "sessions",
        "b",
        "assistant",
        "zebra in thread b",
    )
    assert hit.created_at == b.created_at and hit.source is None and hit.lines is None


def test_long_texts_give_a_bounded_window(box: recallbox.Box) -> None:
    message = box.append("ops", "tool", "x" * 5000 + " zebra " + "y" * 5000)
    (hit,) = box.search("zebra")
    assert len(hit.text) == HIT_TEXT_MAX_CHARS and "zebra" in hit.text
    assert hit.text in message.content


@pytest.mark.parametrize("channel", [None, "ops"])
def test_results_are_stable_under_a_row_limit(box: recallbox.Box, channel: str | None) -> None:
    words = ["alpha", "beta", "gamma", "delta"]
    box.append_many(
        "ops",
        [
            {"role": "user", "content": " ".join(words[: 1 + i % 4]) + f" note {i}"}
            for i in range(40)
        ],
    )
    full = box.search("alpha beta gamma delta", channel=channel, limit=30)
    assert len(full) == 30
    assert [h.score for h in full] == sorted((h.score for h in full), reverse=True)
    for limit in (1, 3, 10):
        assert box.search("alpha beta gamma delta", channel=channel, limit=limit) == full[:limit]


def test_duplicates_collapse_to_one_hit(box: recallbox.Box) -> None:
    box.append_many("ops", [{"role": "tool", "content": "zebra build passed"}] * 3)
    assert len(box.search("zebra")) == 1


def test_domains(box: recallbox.Box) -> None:
    assert DOMAINS == ("memory", "knowledge", "sessions", "transcripts", "code")
    assert AVAILABLE_DOMAINS == ("memory", "knowledge", "sessions", "transcripts", "code")
    with pytest.raises(recallbox.InvalidArgument, match="unknown domain"):
        box.search("x", domain="everything")


@pytest.mark.parametrize("limit", [0, -1, 1001, 2.5, True, "10"])
def test_bad_limits(box: recallbox.Box, limit: object) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        box.search("x", limit=limit)  # type: ignore[arg-type]


def test_bad_query_and_channel_types(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        box.search(None)  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        box.search("x", channel=3)  # type: ignore[arg-type]


SYNTAX = ['"', "'", "(", ")", "OR", "AND", "NOT", "NEAR", "NEAR(", "*", "-", "^", ":", "\\"]
ODD = ["%", "_", "\x00", "\ud800", "\udfff", "召回", "压缩摘要", "search_memory", "a.b/c", "\n"]
NASTY = st.sampled_from([*SYNTAX, *ODD])
QUERIES = st.one_of(
    st.text(),
    st.lists(NASTY | st.text(max_size=4), max_size=30).map(" ".join),
    st.lists(NASTY, max_size=30).map("".join),
    st.integers(min_value=1, max_value=10_000).map(lambda n: ("召回 OR *" * n)[:10_000]),
)


@pytest.fixture
def populated(db_path: Path) -> Iterator[recallbox.Box]:
    with recallbox.open(db_path, embedder="hash") as box:
        box.append_many(
            "ops",
            [
                {"role": "user", "content": "deploy billing; search_memory(query) said OR NEAR"},
                {"role": "assistant", "content": "召回系统 ok, 压缩摘要 done \\ % _ *"},
                {"role": "tool", "content": '"quoted" (paren) a.b/c'},
            ],
        )
        box.embed_all()
        yield box


@given(query=QUERIES, channel=st.sampled_from([None, "ops", "none"]))
def test_any_query_string_never_raises(populated: recallbox.Box, query: str, channel: str) -> None:
    for allow_embed in (True, False):
        hits = populated.search(query, channel=channel, allow_embed=allow_embed)
        assert len(hits) <= 10
        assert all(len(h.text) <= HIT_TEXT_MAX_CHARS for h in hits)
