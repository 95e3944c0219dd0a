"""Thread-search rules (DESIGN §3.2): terms, matching, order, windows, caps, notice."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

import recallbox
from recallbox.domains.threads import (
    FOOTER,
    HEADER,
    LITERAL_COUNT_LIMIT,
    MAX_QUERY_TERMS,
    THREAD_LITERAL_MAX_CHARS,
    LiteralCollector,
    match_spans,
    query_terms,
    term_weight,
)
from recallbox.storage.base import SearchableMessage

T0 = datetime(2026, 3, 1, tzinfo=UTC)


def ids_in(text: str) -> list[str]:
    return re.findall(r"\[message_id=(m_[0-9a-f]+)", text)


def fields_in(text: str) -> list[str]:
    return re.findall(r" field=(.*)\]$", text, re.MULTILINE)


def test_terms_whole_query_first_then_words() -> None:
    assert query_terms("ssh deploy@staging-03 -i") == [
        "ssh deploy@staging-03 -i",
        "ssh",
        "deploy@staging-03",
    ]
    assert query_terms("  `make deploy`  ") == ["`make deploy`", "make deploy", "make", "deploy"]
    assert query_terms("'~/.ssh/id_rsa'") == ["'~/.ssh/id_rsa'", "~/.ssh/id_rsa"]
    assert query_terms("召回 机制") == ["召回 机制", "召回", "机制"]
    assert query_terms("召 ab") == ["召 ab"]  # one CJK character weighs 2, "ab" 2: below 3
    assert query_terms("\x00 \t ") == []
    assert query_terms("a\x00b") == ["a b"]
    assert query_terms("x\ud800y") == ["x\ufffdy"]
    assert query_terms("abc abc ABC") == ["abc abc ABC", "abc", "ABC"]
    assert len(query_terms(" ".join(f"w{i:03d}" for i in range(100)))) == MAX_QUERY_TERMS


def test_terms_strip_surrounding_quotes_brackets_and_trailing_punctuation() -> None:
    """DESIGN §3.2 (#17 item 1): an agent's question finds the word it ends with."""
    assert query_terms("what happened to pg-primary-9?") == [
        "what happened to pg-primary-9?",
        "what happened to pg-primary-9",
        "what",
        "happened",
        "pg-primary-9",
    ]
    for wrapped in ("payments?", "(payments),", '"payments".', "`payments`;", "[payments]!"):
        assert query_terms(wrapped) == [wrapped, "payments"]
    assert query_terms("staging-07,") == ["staging-07,", "staging-07"]
    assert query_terms("pg-primary-9)") == ["pg-primary-9)", "pg-primary-9"]
    assert query_terms(".env") == [".env"]  # a leading dot is part of the word
    assert query_terms("./run.sh.") == ["./run.sh.", "./run.sh"]
    assert query_terms("?! ...") == ["?! ..."]  # nothing left of the words
    assert query_terms("“召回”？") == ["“召回”？", "召回"]  # full-width punctuation too
    assert query_terms('"召回"') == ['"召回"', "召回"]


def test_term_weight_counts_cjk_twice() -> None:
    assert (term_weight("召回"), term_weight("召"), term_weight("abc")) == (4, 2, 3)


def test_matching_is_literal_and_case_sensitive_first() -> None:
    text = "Foo foo FOO foo"
    assert list(match_spans(text, "foo", case_sensitive=True)) == [(4, 3), (12, 3)]
    assert list(match_spans(text, "foo", case_sensitive=False)) == [(0, 3), (8, 3)]
    assert list(match_spans("a%b a_b a.b", "a_b", case_sensitive=True)) == [(4, 3)]
    assert list(match_spans("ÄRGER ärger", "ärger", case_sensitive=False)) == [(0, 5)]
    assert list(match_spans("x", "", case_sensitive=True)) == []


def message(mid: str, content: str = "", seq: int = 1) -> SearchableMessage:
    return SearchableMessage(
        id=mid, channel="c", generation=1, seq=seq, role="tool", content=content, tool_calls=None
    )


def offer_all(collector: LiteralCollector, msg: SearchableMessage, term: str) -> None:
    collector.offer(
        msg, 0, "content", msg.content, match_spans(msg.content, term, case_sensitive=True)
    )


def test_a_match_inside_an_emitted_window_is_not_emitted_again() -> None:
    collector = LiteralCollector()
    msg = message("m_1", "k" + "." * 300 + "k" + "." * 2000 + "k")
    offer_all(collector, msg, "k")
    assert len(collector.blocks) == 2  # offsets 0 and 301 share a window; 2302 gets its own
    assert not collector.not_shown


def test_blocks_stop_at_the_first_that_does_not_fit_and_the_rest_is_counted() -> None:
    collector = LiteralCollector()
    for i in range(40):
        offer_all(collector, message(f"m_{i:02d}", "." * 500 + "hit" + "." * 500, seq=i), "hit")
    text = collector.render("hit", "all threads")
    assert len(text) <= THREAD_LITERAL_MAX_CHARS
    shown = len(collector.blocks)
    assert ids_in(text) == [f"m_{i:02d}" for i in range(len(ids_in(text)))]
    assert f"{40 - len(ids_in(text))} more hits not shown; narrow the query to see them." in text
    assert shown >= len(ids_in(text))
    assert text.startswith(HEADER + "\n\n") and text.endswith(FOOTER)


def test_the_count_stops_at_the_limit() -> None:
    collector = LiteralCollector()
    for i in range(LITERAL_COUNT_LIMIT + 50):
        offer_all(collector, message(f"m_{i}", "y" * 900 + "hit"), "hit")
        if collector.done:
            break
    assert collector.done
    assert f"{LITERAL_COUNT_LIMIT}+ more hits not shown" in collector.render("hit", "x")


def test_exactly_the_limit_is_printed_as_a_number() -> None:
    collector = LiteralCollector()
    collector.full = True
    for i in range(LITERAL_COUNT_LIMIT):
        offer_all(collector, message(f"m_{i}", "hit"), "hit")
    assert f"\n{LITERAL_COUNT_LIMIT} more hits not shown" in collector.render("hit", "x")


def test_no_hit_text() -> None:
    text = LiteralCollector().render('say "hi"', 'thread "ops"')
    assert text == f'{HEADER}\n\nNo matches for "say \\"hi\\"" in thread "ops".'


# -- order, through a real store ---------------------------------------------------------------


def test_order_terms_case_threads_generations_seq_fields(box: recallbox.Box) -> None:
    old = box.append("older", "user", "deploy key here", created_at=T0).id
    a1 = box.append("ops", "user", "the Deploy Key", created_at=T0 + timedelta(hours=1)).id
    box.compact("ops", "summary mentions deploy key")  # never a hit
    a2 = box.append(
        "ops",
        "assistant",
        "deploy",
        tool_calls=[{"id": "c", "name": "bash", "arguments": {"cmd": "deploy key", "x": ["key"]}}],
        created_at=T0 + timedelta(hours=2),
    ).id
    a3 = box.append("ops", "tool", "a deploy key line", created_at=T0 + timedelta(hours=2)).id
    result = box.search_memory("deploy key")
    # whole query (case-sensitive: newest thread first, then generation 2 before 1, seq
    # ascending, content before argument leaves), case-insensitive-only, then the words.
    assert list(zip(ids_in(result), fields_in(result), strict=True)) == [
        (a2, "tool_call.arguments.cmd"),
        (a3, "content"),
        (old, "content"),
        (a1, "content"),
        (a2, "content"),
        (a2, "tool_call.arguments.x[0]"),
    ]
    assert "summary mentions" not in result


def test_global_thread_order_follows_last_activity(box: recallbox.Box) -> None:
    first = box.append("a", "user", "needle one").id
    second = box.append("b", "user", "needle two").id
    assert ids_in(box.search_memory("needle")) == [second, first]
    third = box.append("a", "user", "needle three").id
    assert ids_in(box.search_memory("needle")) == [first, third, second]


def test_two_calls_with_the_same_leaf_path_are_separate_fields(box: recallbox.Box) -> None:
    calls = [
        {"id": f"c{i}", "name": "bash", "arguments": {"command": f"run zeta {i}"}} for i in range(2)
    ]
    mid = box.append("t", "assistant", "", tool_calls=calls).id
    result = box.search_memory("zeta", "t")
    assert ids_in(result) == [mid, mid]
    assert "run zeta 0" in result and "run zeta 1" in result


@pytest.mark.parametrize(
    "query",
    ["100%", "a_b", "*.py", "x OR y", "NEAR(a b)", 'say "hi"', "back\\slash", "[ab]c?"],
)
def test_no_syntax_is_interpreted(box: recallbox.Box, query: str) -> None:
    decoy = box.append(
        "t", "user", "100 percent, aXb, main.py, x y, NEAR a b, say hi, back/slash, ac"
    ).id
    hit = box.append("t", "user", f"literal: {query} end").id
    result = box.search_memory(query, "t")
    assert hit in ids_in(result)
    assert decoy not in ids_in(result)[:1]


def test_every_candidate_is_checked_with_no_cap_note(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.RECHECK_MAX", 1)
    monkeypatch.setattr("recallbox.storage.sqlite.literal_plan.WORDS_SORT_MAX", 2)
    ids = [box.append("t", "user", f"Zeta {i} 9Zeb").id for i in range(5)]
    box.store.indexer.drain()
    result = box.search_memory("zeta")
    assert ids_in(result) == ids and "checked" not in result and "more hits" not in result
    nothing = box.search_memory("9Zeta")  # every trigram is in every message, the term in none
    assert nothing.endswith('No matches for "9Zeta" in all threads.')
    assert ids_in(box.search_memory("Zeta 4"))[0] == ids[4]  # the whole query first
