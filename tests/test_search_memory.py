"""``search_memory`` end to end (DESIGN §3.2): the four acceptance tests of seed 000, properties,
CJK, exclusions, the privacy gate and the concurrent other-memory part."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from backends import DbLocation
from recallbox import (
    OTHER_MEMORY_MAX_CHARS,
    RECALL_HEADER,
    THREAD_LITERAL_MAX_CHARS,
    THREAD_SEARCH_MAX_CHARS,
    bounded_thread_search,
)
from recallbox.domains.other_memory import MIN_SEARCH_MEMORY_MAX_CHARS
from recallbox.domains.threads import (
    GLOBAL_HEADER,
    HEADER,
    LITERAL_COUNT_BUDGET,
    LITERAL_COUNT_ROW_CHARS,
    search_literal,
)
from recallbox.text.windows import SEP
from table_dump import hit_log_rows

FILLER = "filler\n"  # 7 characters: 10 000 on each side makes a ~140 000-character output
HOST = "bastion-7.example"
KEY_PATH = "~/.ssh/bastion_ed25519"
WIN_PATH = "C:\\Users\\ops\\.ssh\\id_rsa"
COMMAND = f"ssh -i {KEY_PATH} ops@{HOST} 'tail -n 5 /var/log/replica.log'"
CONNECTED = f"connected to {HOST} as ops (replica lag 0.4 s)"


def ids_in(text: str) -> list[str]:
    return re.findall(r"message_id=(m_[0-9a-f]+)", text)


def literal_part(result: str) -> str:
    return result.split(SEP, 1)[0]


def build_compacted_thread(box: recallbox.Box, channel: str) -> dict[str, str]:
    """Generation 1 holds the remote login and its huge output; then one compaction."""
    ids = {}
    ids["event"] = box.append(
        channel, "system", f"framework: {HOST} reachable", kind="machine_event"
    ).id
    box.append(channel, "user", "Check the replica lag on the bastion.")
    ids["call"] = box.append(
        channel,
        "assistant",
        "Logging in to the bastion.",
        tool_calls=[
            {"id": "c1", "name": "bash", "arguments": {"command": COMMAND, "timeout": 60}},
            {"id": "c2", "name": "powershell", "arguments": {"files": [{"path": WIN_PATH}]}},
        ],
    ).id
    ids["output"] = box.append(
        channel, "tool", FILLER * 10_000 + CONNECTED + "\n" + FILLER * 10_000, tool_call_id="c1"
    ).id
    ids["hidden"] = box.append(
        channel,
        "tool",
        f"hidden copy: {CONNECTED} {KEY_PATH}",
        tool_call_id="c2",
        model_visible=False,
    ).id
    box.compact(channel, "Checked the replica lag on the bastion; it was fine.")
    return ids


def model_context(box: recallbox.Box, channel: str) -> list[dict[str, Any]]:
    """What the model sees at the start of a turn: the visible messages of the current generation."""
    current = box.thread(channel).generation_count
    return [
        {"role": m.role, "content": m.content, "tool_calls": m.tool_calls}
        for m in box.messages(channel, current)
        if m.model_visible and not m.pending
    ]


# -- acceptance 1: the model pulls, the engine never pushes -----------------------------------


def test_acceptance_end_to_end_pull(box: recallbox.Box) -> None:
    channel = "ops:bastion"
    ids = build_compacted_thread(box, channel)
    box.append(channel, "user", "What did the bastion print when you logged in last time?")
    before = [m.id for m in box.messages(channel)]

    def memory_answer(query: str, channel: str) -> str:
        # The LLM-written memory answer the seed merges in: verbose, so the merge must cut it.
        return f"Memory answer for {query!r}: " + "the replica was checked earlier. " * 700

    box.answerer = memory_answer
    seen: list[list[dict[str, Any]]] = []

    def scripted_model(context: list[dict[str, Any]]) -> dict[str, Any]:
        seen.append([dict(m) for m in context])
        if not any(m["role"] == "tool" for m in context[len(seen[0]) :]):
            return {"tool_call": {"name": "search_memory", "query": HOST, "channel": channel}}
        found = next(m["content"] for m in reversed(context) if m["role"] == "tool")
        return {"content": "Last time: " + found[found.index("connected to") :][:60]}

    context = model_context(box, channel)
    tool_results = []
    while True:
        reply = scripted_model(context)
        if "tool_call" not in reply:
            break
        call = reply["tool_call"]
        result = box.search_memory(call["query"], channel=call["channel"])
        tool_results.append(result)
        context = [
            *context,
            {"role": "assistant", "tool_call": call},
            {"role": "tool", "content": result},
        ]

    assert "connected to" not in repr(seen[0])
    assert CONNECTED in repr(seen[1])
    assert reply["content"].startswith("Last time: connected to bastion-7.example")
    [result] = tool_results
    assert "…truncated" in result
    assert len(result) == THREAD_SEARCH_MAX_CHARS
    assert ids["output"] in literal_part(result) and ids["call"] in literal_part(result)
    assert [m.id for m in box.messages(channel)] == before  # the engine wrote nothing
    assert not any(m.pending for m in box.messages(channel))


def test_end_to_end_with_the_default_answerer(box: recallbox.Box) -> None:
    ids = build_compacted_thread(box, "ops:bastion")
    result = box.search_memory(HOST, channel="ops:bastion")
    assert len(result) <= THREAD_SEARCH_MAX_CHARS
    assert CONNECTED in literal_part(result) and ids["output"] in literal_part(result)
    # Every match is in the literal part: the other-memory part has nothing new to add.
    assert SEP not in result
    assert "x" * 801 not in result and FILLER * 200 not in result


# -- acceptance 2: across generations and fields; exclusions; quarantine ----------------------


def test_acceptance_across_generations_and_fields(box: recallbox.Box) -> None:
    channel = "ops:bastion"
    ids = build_compacted_thread(box, channel)
    box.append(channel, "user", "Next: rotate the replica credentials.")
    box.compact(channel, "Started the credential rotation.")  # one more generation
    summaries = [m.id for m in box.messages(channel) if m.kind == "compaction_summary"]
    assert len(summaries) == 2 and HOST in box.message(summaries[0]).content  # the directory
    excluded = {ids["event"], ids["hidden"], *summaries}
    for query in (
        HOST,
        KEY_PATH,
        WIN_PATH,
        COMMAND,
        f'"{COMMAND}"',
        "bash_ed25519 bastion_ed25519",
    ):
        for scope in (channel, None):
            result = box.search_memory(query, scope)
            assert ids["call"] in ids_in(result), (query, scope)
            assert not excluded & set(ids_in(result)), (query, scope)
    assert "field=tool_call.arguments.command" in box.search_memory(COMMAND, channel)
    assert "field=tool_call.arguments.files[0].path" in box.search_memory(WIN_PATH, channel)

    nothing = box.search_memory("no such thing anywhere")
    box.quarantine(channel)
    for query in (HOST, KEY_PATH, WIN_PATH, COMMAND):
        result = box.search_memory(query)
        assert ids_in(result) == []
        assert result == nothing.replace('"no such thing anywhere"', recallbox_quoted(query))
    assert ids_in(box.search_memory(HOST, channel)) == []  # the thread's own view is gated too


def recallbox_quoted(text: str) -> str:
    from recallbox.domains.threads import quoted

    return quoted(text)


def test_excluded_kinds_never_appear_and_superseded_or_pending_drop_out(box: recallbox.Box) -> None:
    keep = box.append("t", "user", "quartz lamp on").id
    old = box.append("t", "user", "quartz lamp old").id
    pending = box.append("t", "user", "quartz lamp queued", pending=True).id
    box.supersede(old, keep)
    box.append("t", "system", "quartz lamp event", kind="machine_event")
    box.append("t", "tool", "quartz lamp hidden", model_visible=False)
    box.compact("t", "quartz lamp summary")
    assert ids_in(literal_part(box.search_memory("quartz lamp", "t"))) == [keep]
    assert ids_in(box.search_memory("quartz lamp")) == [keep]
    box.deliver(pending)
    assert ids_in(box.search_memory("quartz lamp")) == [keep, pending]


def test_unknown_and_quarantined_channels_look_the_same(box: recallbox.Box) -> None:
    box.append("secret", "user", "the launch code is swordfish")
    box.quarantine("secret")
    box.answerer = lambda q, c: ""
    assert box.search_memory("swordfish", "secret") == box.search_memory(
        "swordfish", "missing"
    ).replace('"missing"', '"secret"')
    assert "swordfish" not in box.search_memory("launch code", None).split("\n", 2)[2].split('"')[0]


# -- acceptance 3: stress ----------------------------------------------------------------------

STRESS_RESULTS = 120
STRESS_RESULT_CHARS = 60_000


@pytest.fixture(scope="module")
def stress_box(module_db_location: DbLocation) -> Iterator[recallbox.Box]:
    path = module_db_location("stress")
    half = STRESS_RESULT_CHARS // 2
    with recallbox.open(path) as box:
        box.append_many(
            "stress",
            (
                {
                    "role": "tool",
                    "content": "x" * half + f" keyword-{i % 7} " + "x" * half,
                    "tool_call_id": f"c{i}",
                }
                for i in range(STRESS_RESULTS)
            ),
        )
        yield box


def test_acceptance_stress_120_big_tool_results(stress_box: recallbox.Box) -> None:
    literal = search_literal(stress_box.store, "keyword", "stress")
    result = stress_box.search_memory("keyword", channel="stress")
    assert "more hits not shown; narrow the query to see them." in result
    assert "x" * 801 not in result
    assert len(result) <= THREAD_SEARCH_MAX_CHARS
    assert len(literal) <= THREAD_LITERAL_MAX_CHARS
    assert literal_part(result) == literal
    shown = len(ids_in(literal))
    # the hits left out when the blocks filled (the one that did not fit, and those whose
    # room the notice took), then the count budget's worth of long rows: a lower bound
    row_cost = 1 + (STRESS_RESULT_CHARS + len(" keyword-0 ")) // LITERAL_COUNT_ROW_CHARS
    counted = int(re.findall(r"\nAt least (\d+) more hits not shown", literal)[0])
    assert LITERAL_COUNT_BUDGET // row_cost < counted <= LITERAL_COUNT_BUDGET // row_cost + 3
    assert counted < STRESS_RESULTS - shown
    merged = bounded_thread_search("z" * 100_000, literal)
    assert len(merged) == THREAD_SEARCH_MAX_CHARS and literal in merged
    assert merged.endswith("…truncated")
    assert bounded_thread_search("short answer", literal) == literal + SEP + "short answer"


def test_stress_search_is_fast_and_global_view_is_bounded(stress_box: recallbox.Box) -> None:
    started = time.perf_counter()
    result = stress_box.search_memory("keyword-3")
    assert time.perf_counter() - started < 2.0
    assert len(result) <= THREAD_LITERAL_MAX_CHARS
    assert all("keyword-3" in block for block in result.split("[message_id=")[1:])


# -- CJK ----------------------------------------------------------------------------------------


def test_cjk_window_inside_a_long_chinese_tool_output(box: recallbox.Box) -> None:
    filler = "这是一段很长的中文工具输出，用来测试窗口。" * 1_500
    mid = box.append("zh", "tool", filler + "关键：召回机制在压缩后生效。" + filler).id
    other = box.append("zh", "user", "我们讨论一下机制的设计").id
    result = literal_part(box.search_memory("召回", "zh"))
    [block] = [b for b in result.split("[message_id=")[1:] if b.startswith(mid)]
    window = block.split("\n", 1)[1].split("\n\n")[0]
    assert "召回机制" in window and len(window) == 800 + 2
    both = box.search_memory("召回 机制", "zh")
    assert set(ids_in(literal_part(both))) == {mid, other}
    for one in ("召", "制", "x", "%", "  召 "):
        assert len(box.search_memory(one, "zh")) <= THREAD_SEARCH_MAX_CHARS


def test_cjk_three_characters_use_the_trigram_index(box: recallbox.Box) -> None:
    mid = box.append(
        "zh", "assistant", "", tool_calls=[{"id": "c", "name": "n", "arguments": {"q": "召回机制"}}]
    ).id
    assert ids_in(box.search_memory("回机制", "zh")) == [mid]


def test_short_query_says_it_was_bounded(box: recallbox.Box) -> None:
    mid = box.append("t", "user", "go ab go").id
    result = box.search_memory("ab", "t")
    assert mid in ids_in(result) and "Only the newest 2000 messages were searched" in result
    none = box.search_memory("qz", "t")
    assert none.endswith(
        'No matches for "qz" in thread "t" (terms under 3 characters: the newest 2000 messages only).'
    )


def test_case_insensitive_matches_come_after_case_sensitive_ones(box: recallbox.Box) -> None:
    upper = box.append("t", "user", "ÄRGER and ERROR").id
    exact = box.append("t", "user", "ärger and error").id
    assert ids_in(box.search_memory("error")) == [exact, upper]
    assert ids_in(box.search_memory("ärger")) == [exact, upper]
    assert ids_in(box.search_memory("ÄRGER")) == [upper, exact]


# -- properties -----------------------------------------------------------------------------------

CHAR = st.one_of(
    st.characters(),
    st.sampled_from(list("\"'`\\%_*()[]?-:^\x00\r\n\t\ud800\udfff召回机制🙂 ")),
)
PIECE = st.one_of(
    CHAR, st.sampled_from([" OR ", "NEAR(", "召回", "AND", "abc", "ABC", "x" * 50, "\\\\"])
)
QUERY = st.one_of(
    st.lists(PIECE, max_size=30).map("".join),
    st.builds(
        lambda s, n: (s * n)[:10_000],
        st.lists(PIECE, min_size=1, max_size=12).map("".join).filter(bool),
        st.integers(1, 10_000),
    ),
)
TEXT = st.lists(PIECE, max_size=60).map("".join)
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"]), "content": TEXT},
    optional={
        "kind": st.sampled_from(["message", "machine_event"]),
        "model_visible": st.booleans(),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "id": st.just("c"),
                    "name": st.just("n"),
                    "arguments": st.one_of(
                        TEXT, st.dictionaries(st.text(max_size=5), TEXT, max_size=3)
                    ),
                }
            ),
            max_size=2,
        ),
    },
)


@pytest.fixture(scope="module")
def prop_box(module_db_location: DbLocation) -> Iterator[recallbox.Box]:
    with recallbox.open(module_db_location("prop")) as box:
        yield box


@settings(max_examples=60)
@given(query=QUERY, messages=st.lists(MESSAGE, max_size=6), channel=st.sampled_from(["p", None]))
def test_any_query_any_content_is_bounded_and_never_raises(
    prop_box: recallbox.Box, query: str, messages: list[dict[str, Any]], channel: str | None
) -> None:
    if messages:
        prop_box.append_many("p", messages)
    result = prop_box.search_memory(query, channel)
    assert len(result) <= THREAD_SEARCH_MAX_CHARS
    assert result.startswith(HEADER if channel is not None else GLOBAL_HEADER)
    assert len(literal_part(result)) <= THREAD_LITERAL_MAX_CHARS


NEEDLE = st.text(CHAR, min_size=3, max_size=40).filter(
    lambda s: recallbox.normalize_text(s).strip() != ""
)


@settings(max_examples=80)
@given(
    needle=NEEDLE,
    before=st.lists(TEXT, max_size=8),
    after=st.lists(TEXT, max_size=8),
    left=TEXT,
    right=TEXT,
    compact_at=st.none() | st.integers(0, 8),
    data=st.data(),
)
def test_a_planted_needle_is_found_unless_the_literal_part_is_full(
    db_location: DbLocation,
    needle: str,
    before: list[str],
    after: list[str],
    left: str,
    right: str,
    compact_at: int | None,
    data: st.DataObject,
) -> None:
    channel = data.draw(st.sampled_from(["t1", "t2"]))
    with recallbox.open(db_location("needle", fresh=True)) as box:
        box.answerer = lambda q, c: ""
        box.append_many(
            "t2", [{"role": "user", "content": t} for t in before + after] or [{"role": "user"}]
        )
        box.append_many(channel, [{"role": "user", "content": t} for t in before])
        if compact_at is not None:
            box.compact(channel, f"summary {needle}")
        planted = box.append(channel, "tool", left + needle + right).id
        box.append_many(channel, [{"role": "assistant", "content": t} for t in after])
        result = box.search_memory(needle, channel)
        assert planted in ids_in(result) or "more hits not shown" in result, result[:2000]
        assert len(result) <= THREAD_SEARCH_MAX_CHARS


# -- the other-memory part: concurrent, pluggable, dropped when late or failing ---------------


def test_other_memory_default_answer_covers_other_threads(box: recallbox.Box) -> None:
    mine = box.append("mine", "user", "the flux capacitor needs 1.21 gigawatts").id
    theirs = box.append("theirs", "user", "flux capacitor wiring diagram").id
    result = box.search_memory("flux capacitor", "mine")
    literal, answer = result.split(SEP)
    assert ids_in(literal) == [mine]
    assert theirs in ids_in(answer) and 'channel="theirs"' in answer
    assert answer.startswith("The following is historical evidence from memory")
    box.quarantine("theirs")
    assert theirs not in box.search_memory("flux capacitor", "mine")
    assert SEP not in box.search_memory("nothing matches this", "mine")


@pytest.mark.parametrize("location", ["file", ":memory:"])
def test_other_memory_runs_concurrently_in_both_connection_modes(
    db_location: DbLocation, tmp_path: Path, location: str
) -> None:
    path = db_location("c") if location == "file" else ":memory:"
    with recallbox.open(path) as box:
        mid = box.append("a", "user", "walrus operator in python").id
        box.append("b", "user", "walrus habitat notes")
        callers = set()

        default = box.answerer

        def answerer(query: str, channel: str) -> str:
            callers.add(threading.current_thread().name)
            return default(query, channel)

        box.answerer = answerer
        results: list[str] = []

        def worker() -> None:
            results.extend(box.search_memory("walrus", "a") for _ in range(5))

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 20
        assert all(mid in r and SEP in r and "walrus habitat" in r for r in results)
        assert all(name.startswith("recallbox-answer") for name in callers)


def test_a_late_answer_is_dropped(box: recallbox.Box, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("recallbox.domains.other_memory.OTHER_MEMORY_TIMEOUT_S", 0.2)
    release = threading.Event()
    box.append("t", "user", "slow lorry")

    def slow(query: str, channel: str) -> str:
        release.wait(5)
        return "late answer"

    box.answerer = slow
    started = time.perf_counter()
    result = box.search_memory("slow lorry", "t")
    assert time.perf_counter() - started < 1.5
    assert SEP not in result and "late answer" not in result
    release.set()


@pytest.mark.parametrize("answer", [RuntimeError("boom"), 42, None])
def test_a_failing_answer_leaves_the_literal_part(box: recallbox.Box, answer: object) -> None:
    box.append("t", "user", "brittle answerer")

    def answerer(query: str, channel: str) -> Any:
        if isinstance(answer, Exception):
            raise answer
        return answer

    box.answerer = answerer
    result = box.search_memory("brittle", "t")
    assert SEP not in result and ids_in(result)


def test_without_channel_there_is_no_other_memory_part(box: recallbox.Box) -> None:
    calls = []
    box.answerer = lambda q, c: calls.append(q) or "answer"
    box.append("t", "user", "global only")
    assert SEP not in box.search_memory("global only")
    assert calls == []
    assert box.search_memory("global only", "t").endswith(SEP + "answer")


def test_invalid_arguments(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        box.search_memory(None)  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        box.search_memory("x", channel="")


def test_default_answerer_ranks_through_the_retrieval_core(box: recallbox.Box) -> None:
    best = box.append("a", "user", "walrus walrus walrus").id
    good = box.append("b", "user", "a walrus and many other words in a longer message").id
    hidden = box.append("c", "user", "walrus hidden", model_visible=False).id
    secret = box.append("q", "user", "walrus quarantined").id
    box.quarantine("q")
    answer = box.answerer("walrus %%", "a")
    assert answer.startswith(RECALL_HEADER)
    assert answer.index(best) < answer.index(good)
    assert hidden not in answer and secret not in answer
    assert len(answer) <= OTHER_MEMORY_MAX_CHARS
    assert box.answerer("%% ", "a") == ""
    assert box.answerer("   ", "a") == ""


@settings(max_examples=40)
@given(
    word=st.from_regex(r"[a-z][a-z0-9-]{3,12}", fullmatch=True),
    before=st.sampled_from(["", '"', "'", "`", "(", "[", "“"]),
    after=st.sampled_from(["", "?", "!", ".", ",", ";", ":", ")", "]", '"', "`", "”", "?)", ")."]),
)
def test_a_word_wrapped_in_punctuation_finds_the_bare_word(
    prop_box: recallbox.Box, word: str, before: str, after: str
) -> None:
    """DESIGN §3.2 (#17 item 1): surrounding quotes, backticks, brackets and trailing sentence
    punctuation are stripped from each word; the stripped whole query is tried too."""
    (message,) = prop_box.append_many("punct", [{"role": "tool", "content": f"saw {word} fail"}])
    for query in (f"{before}{word}{after}", f"what about {before}{word}{after}"):
        for channel in ("punct", None):
            assert f"[message_id={message.id} " in literal_part(
                prop_box.search_memory(query, channel)
            )


def test_global_hits_name_their_thread_and_use_the_global_header(box: recallbox.Box) -> None:
    """DESIGN §3.2 (#17 item 5): a search of every thread names each hit's channel."""
    a = box.append("ops:a", "user", "rotate the vault token")
    b = box.append("ops:b", "tool", "vault token rotated")
    text = box.search_memory("vault token")
    assert text.startswith(GLOBAL_HEADER + "\n\n")
    assert f'[message_id={b.id} channel="ops:b" generation=1 role=tool field=content]' in text
    assert f'[message_id={a.id} channel="ops:a" generation=1 role=user field=content]' in text
    scoped = literal_part(box.search_memory("vault token", "ops:a"))
    assert scoped.startswith(HEADER) and "channel=" not in scoped


def test_the_other_memory_part_never_repeats_the_literal_part(box: recallbox.Box) -> None:
    """#17 item 6: with a channel, the messages the literal part shows are left out below."""
    shown = [box.append("ops", "user", f"restart pg-primary-9 step {i}").id for i in range(2)]
    elsewhere = box.append("other", "user", "pg-primary-9 was restarted last week").id
    result = box.search_memory("pg-primary-9", "ops")
    literal, answer = result.split(SEP)
    assert ids_in(literal) == shown
    assert not set(shown) & set(ids_in(answer))
    assert elsewhere in ids_in(answer)
    assert "score=" not in answer and "rank=1" in answer  # a rank, never a min-max score
    assert f"follow-up=read_message({elsewhere})" in answer


def test_nothing_but_the_literal_part_means_no_other_memory_part(box: recallbox.Box) -> None:
    box.append("ops", "user", "only here: zebra-crossing-7")
    assert SEP not in box.search_memory("zebra-crossing-7", "ops")


def test_search_memory_records_literal_hit_rows(box: recallbox.Box, db_path: Path) -> None:
    mine = box.append("ops", "user", "kestrel-4 rebooted").id
    theirs = box.append("else", "user", "kestrel-4 again").id
    box.search_memory("kestrel-4", "ops")
    box.hits.flush()
    rows = hit_log_rows(db_path)
    assert ("sessions", "literal", mine, 0, None, "kestrel-4") in rows
    assert ("sessions", "keyword", theirs, 0, None, "kestrel-4") in rows  # the other-memory part


@pytest.mark.parametrize("bad", [0, 8_000, 12_001, True, "12000", 11_999.0])
def test_max_chars_out_of_range_is_refused(box: recallbox.Box, bad: object) -> None:
    with pytest.raises(recallbox.InvalidArgument, match="max_chars must be an integer"):
        box.search_memory("x", channel="ops", max_chars=bad)  # type: ignore[arg-type]


def test_a_smaller_max_chars_bounds_the_merge_and_the_default_answer(box: recallbox.Box) -> None:
    """``max_chars`` caps the whole text; a pluggable answer over it is cut, marked."""
    for i in range(20):
        box.append("ops", "tool", f"needle-77 line {i} " + "pad " * 300)
    full = box.search_memory("needle-77", channel="ops")
    box.answerer = lambda query, channel: "y" * 10_000
    cut = box.search_memory("needle-77", channel="ops", max_chars=MIN_SEARCH_MEMORY_MAX_CHARS)
    assert len(cut) <= MIN_SEARCH_MEMORY_MAX_CHARS and cut.endswith("…truncated")
    assert cut.split(SEP)[0] == full.split(SEP)[0]  # the literal part is untouched
