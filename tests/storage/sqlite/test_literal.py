"""Thread-search reads on SQLite: index use, exclusions in SQL, order, limits, the protocol."""

from __future__ import annotations

import inspect

import pytest

import recallbox
from recallbox.storage.base import CandidateStream, LiteralQuery, SearchFilter, Store
from recallbox.storage.sqlite import literal, literal_rows
from recallbox.storage.sqlite.literal import (
    LIKE_PATTERN_MAX_CHARS,
    SQL_FILTER_MAX_CHARS,
    has_non_ascii_case,
    like_pattern,
    recent_source,
    text_filter,
)
from recallbox.storage.sqlite.literal_cjk import cjk_match
from recallbox.storage.sqlite.literal_plan import MATCH_MAX_TRIGRAMS, trigram_match
from recallbox.storage.sqlite.store import SQLiteStore


def candidates(
    box: recallbox.Box,
    term: str,
    *,
    channel: str | None,
    case_sensitive: bool,
    limit: int,
    recent: int = 0,
) -> CandidateStream:
    return box.store.literal_candidates(
        LiteralQuery(term, case_sensitive),
        where=SearchFilter(channel=channel),
        limit=limit,
        recent=recent,
    )


def test_patterns() -> None:
    assert like_pattern("a_b%") == "%a_b%%"
    assert like_pattern("x" * 1000) == "%" + "x" * LIKE_PATTERN_MAX_CHARS + "%"
    assert has_non_ascii_case("Ärger") and not has_non_ascii_case("召回 abc")
    assert trigram_match('ab"cd') == '"ab""" AND "b""c" AND """cd"'
    assert trigram_match("abcabc") == '"abc" AND "bca" AND "cab"'
    assert trigram_match("".join(chr(0x4E00 + i) for i in range(200))).count(" AND ") == (
        MATCH_MAX_TRIGRAMS - 1
    )
    assert (cjk_match("召回"), cjk_match("召"), cjk_match("x召"), cjk_match("ab")) == (
        '"召回"',
        '"召"*',
        '"召"*',
        None,
    )


def plan(box: recallbox.Box, query: tuple[str, tuple[object, ...]]) -> str:
    sql, params = query
    rows = box.store.pool.connection().execute("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    return "\n".join(str(r[3]) for r in rows)


@pytest.mark.parametrize("recheck_max", [0, 1_000])
def test_short_cjk_candidates_come_from_the_cjk_index_in_search_order(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, recheck_max: int
) -> None:
    """Sorted when few, walked in search order when many (``recheck_max`` 0): the same keys,
    queued rows merged in, whatever the index holds."""
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.RECHECK_MAX", recheck_max)
    first = [box.append("a", "user", f"召回 {i}").id for i in range(4)]
    box.append("a", "user", "回召 only the reverse")
    second = [box.append("b", "user", f"另一 召回 {i}").id for i in range(3)]
    box.compact("b", "s")
    box.store.indexer.drain()
    box.store.indexer.stop()
    queued = box.append("b", "user", "召回 queued, not indexed yet").id
    expected = [queued, *second, *first]
    found = candidates(box, "召回", channel=None, case_sensitive=True, limit=50)
    assert [m.id for m in found] == expected
    cut = candidates(box, "召回", channel=None, case_sensitive=True, limit=3)
    assert [m.id for m in cut] == expected[:3] and cut.truncated
    assert [
        m.id for m in candidates(box, "召回", channel="a", case_sensitive=True, limit=9)
    ] == first


def test_the_cjk_index_holds_only_rows_with_cjk_content(box: recallbox.Box) -> None:
    box.append(
        "a", "user", "plain text", tool_calls=[{"id": "c", "name": "n", "arguments": {"q": "召回"}}]
    )
    box.append("a", "user", "召 alone")
    box.store.indexer.drain()
    conn = box.store.pool.connection()
    assert conn.execute("SELECT count(*) FROM messages_cjk_docsize").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM messages_literal_docsize").fetchone()[0] == 2


@pytest.mark.parametrize("channel", [None, "ops"])
def test_the_recent_scan_is_bounded_by_an_index_order(
    box: recallbox.Box, channel: str | None
) -> None:
    text = plan(box, recent_source(SearchFilter(channel=channel), 50))
    assert "USE TEMP B-TREE" not in text  # read in index order, stopping after 50 rows


def test_the_exact_filter_is_instr_when_case_sensitive_else_like_without_escape(
    box: recallbox.Box,
) -> None:
    sql, values = text_filter("a_b*", case_sensitive=True, first=3)
    assert "instr(m.content, ?3)" in sql and "LIKE" not in sql and values == ["a_b*"]
    for case_sensitive in (True, False):  # long rows: the recheck alone
        _, values = text_filter("xxa", case_sensitive=case_sensitive, first=3)
        assert values[-1] == SQL_FILTER_MAX_CHARS
    sql, values = text_filter("a_b*", case_sensitive=False, first=3)
    assert "ESCAPE" not in sql and "instr" not in sql and values == ["%a_b*%"]
    sql, values = text_filter("Ärger", case_sensitive=False, first=3)
    assert "LIKE" not in sql and values == []
    box.append("t", "user", "x" * 500 + " A_b* " + "x" * 500)
    found = [m.content for m in box.store.literal_candidates(  # type: ignore[attr-defined]
        LiteralQuery("xxxx A_b*", True), where=SearchFilter())]  # fmt: skip
    assert len(found) == 1


def test_a_common_term_walks_the_order_instead_of_sorting(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [box.append("a", "user", f"common word {i}").id for i in range(5)]
    second = [box.append("b", "user", f"common word {i}").id for i in range(3)]
    box.compact("b", "s")
    third = box.append("b", "user", "common word again").id
    expected = [third, *second, *first]
    box.store.indexer.drain()
    sorted_ids = [
        m.id for m in candidates(box, "common", channel=None, case_sensitive=True, limit=50)
    ]
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.RECHECK_MAX", 0)
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.WORDS_SORT_MAX", 0)
    walked = [m.id for m in candidates(box, "common", channel=None, case_sensitive=True, limit=50)]
    assert walked == sorted_ids == expected
    found = candidates(box, "common", channel=None, case_sensitive=True, limit=4)
    assert [m.id for m in found] == expected[:4]
    assert ids_of(box, "common word again") == [third]


def ids_of(box: recallbox.Box, term: str) -> list[str]:
    rows = candidates(box, term, channel="b", case_sensitive=True, limit=9)
    return [m.id for m in rows]


def test_exclusions_order_and_limit_are_applied_in_sql(box: recallbox.Box) -> None:
    keep = [box.append("a", "user", f"needle {i}").id for i in range(3)]
    box.append("a", "user", "needle pending", pending=True)
    box.append("a", "user", "needle hidden", model_visible=False)
    box.append("a", "system", "needle event", kind="machine_event")
    box.append("q", "user", "needle quarantined")
    box.quarantine("q")
    box.compact("a", "needle summary")
    newer = box.append("a", "user", "needle after compaction").id
    found = [m.id for m in candidates(box, "needle", channel=None, case_sensitive=True, limit=10)]
    assert found == [newer, *keep]
    limited = candidates(box, "needle", channel="a", case_sensitive=True, limit=2)
    assert [m.id for m in limited] == [newer, keep[0]]
    recent = candidates(box, "ne", channel="a", case_sensitive=True, limit=10, recent=2)
    assert [m.id for m in recent] == [newer, keep[2]]


def test_case_sensitive_pass_is_exact_and_other_pass_widens(box: recallbox.Box) -> None:
    exact = box.append("a", "user", "Error: x").id
    other = box.append("a", "user", "ERROR: x").id
    wild = box.append("a", "user", "EXRor").id

    def ids(term: str, case_sensitive: bool) -> set[str]:
        rows = candidates(box, term, channel=None, case_sensitive=case_sensitive, limit=9)
        return {m.id for m in rows}

    assert ids("Error", True) == {exact}
    assert ids("Error", False) == {exact, other}
    assert ids("E_Ror", True) == ids("E_Ror", False) == set()  # "_" is a character, not a wildcard
    literal = box.append("a", "user", "e_ror").id
    assert ids("E_Ror", False) == {literal} and wild not in ids("E_R", False)


def test_sqlite_store_implements_the_protocol() -> None:
    wanted = {n for n, _ in inspect.getmembers(Store, inspect.isfunction) if not n.startswith("_")}
    missing = {n for n in wanted if not callable(getattr(SQLiteStore, n, None))}
    assert missing == set()


@pytest.mark.parametrize("recheck_max", [0, 1_000])
def test_the_stream_says_when_the_limit_cut_candidates(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, recheck_max: int
) -> None:
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.RECHECK_MAX", recheck_max)
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.WORDS_SORT_MAX", recheck_max)
    ids = [box.append("a", "user", f"omega {i}").id for i in range(5)]
    box.store.indexer.drain()
    cut = candidates(box, "omega", channel=None, case_sensitive=True, limit=3)
    assert [m.id for m in cut] == ids[:3] and cut.truncated
    whole = candidates(box, "omega", channel=None, case_sensitive=True, limit=5)
    assert [m.id for m in whole] == ids and not whole.truncated


def test_a_quarantine_committed_before_the_stream_is_read_lets_nothing_through(
    box: recallbox.Box,
) -> None:
    """The privacy race of #9: the lazy second step must re-apply the thread gate."""
    box.append_many("secret", [{"role": "user", "content": f"needle {i}"} for i in range(200)])
    stream = candidates(box, "needle", channel=None, case_sensitive=True, limit=1000)
    box.quarantine("secret")
    assert [m.id for m in stream] == []


def test_an_exclusion_committed_before_the_stream_is_read_lets_nothing_through(
    box: recallbox.Box,
) -> None:
    box.append_many("imported", [{"role": "user", "content": f"needle {i}"} for i in range(200)])
    box.store.set_thread_source("imported", "secret.jsonl", None)
    stream = candidates(box, "needle", channel=None, case_sensitive=True, limit=1000)
    box.exclude_source("secret.jsonl")
    assert [m.id for m in stream] == []


def test_a_search_keeps_no_plan_or_row_past_its_snapshot(box: recallbox.Box) -> None:
    # Each plan holds its scope (every allowed thread) and the row cache up to its cap of
    # text: kept past their search, they made a process's memory grow with the history.
    for i in range(6):
        box.append(f"ops-{i}", "user", f"deploy failed on host{i}")
    literal._plans.clear()
    for i in range(20):
        assert "deploy" in box.search_memory(f"deploy failed on host{i % 6}")
        assert literal._plans == {}
        assert literal_rows.RowCache._current is None
    pool = box.store.pool
    with pool.snapshot():
        assert "deploy" in box.search_memory("Deploy failed")
        assert {key[0] for key in literal._plans} == {pool.snapshot_id()}
        assert literal_rows.RowCache._current is not None
    assert literal._plans == {}
    assert literal_rows.RowCache._current is None


def test_long_candidate_rows_are_read_in_runs_of_bounded_text(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 64 long tool outputs read at once held 2.4 MiB at 1M messages: a read now takes at most
    # FILTER_CHUNK_BYTES of text (a longer row alone), and the order is unchanged.
    long = literal_rows.FILTER_CHUNK_BYTES // 3
    made = []
    for i in range(12):
        text = f"step {i} kakorfe " + ("z" * long if i % 4 else "short")
        made.append(box.append("ops", "tool", text).id)
    made.append(
        box.append("ops", "tool", "huge kakorfe " + "q" * 2 * literal_rows.FILTER_CHUNK_BYTES).id
    )
    runs: list[int] = []
    real = literal_rows._by_key

    def counted(pool, keys, term, case_sensitive, where):  # type: ignore[no-untyped-def]
        found = real(pool, keys, term, case_sensitive, where)
        runs.append(sum(len(row.content) + len(args) for row, args in found.values()))
        assert len(keys) == 1 or runs[-1] <= literal_rows.FILTER_CHUNK_BYTES
        return found

    monkeypatch.setattr(literal_rows, "_by_key", counted)
    stream = candidates(box, "kakorfe", channel="ops", case_sensitive=True, limit=1_000)
    assert [m.id for m in stream] == made
    assert len(runs) >= 5 and max(runs) > literal_rows.FILTER_CHUNK_BYTES  # the huge row alone


def test_a_failing_snapshot_hook_neither_raises_nor_stops_the_others(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from recallbox.storage import snapshots

    def broken(serial: int) -> None:
        raise RuntimeError(f"boom {serial}")

    monkeypatch.setattr(snapshots, "_hooks", [broken, *snapshots._hooks])
    box.append("ops", "user", "deploy failed on host1")
    assert "deploy" in box.search_memory("deploy failed")
    assert literal._plans == {}  # the hooks after the broken one still ran
    assert "snapshot-end hook failed" in caplog.text
