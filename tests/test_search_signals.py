"""The ranking signals in ``box.search`` (#21), on real SQLite: episodes from ``created_at``,
neighbours, participants, dates, ``Hit.explain``; stored fields only, never ``metadata``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import recallbox
from recallbox.domains.sessions import PLAIN_RANKING, SessionsDomain
from recallbox.ranking.episodes import EPISODE_GAP
from recallbox.search import search

T0 = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)


def rows(texts: list[str], *, start: datetime = T0, step: timedelta = timedelta(minutes=1)):
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": t,
            "created_at": start + i * step,
        }
        for i, t in enumerate(texts)
    ]


PLAIN = SessionsDomain(PLAIN_RANKING)
LEGS = {"bm25", "keyword", "vector", "fused", "leg"}
FILLER = [f"we talked about item number {n} for a while" for n in range(12)]
QUESTION = "Which tea does Ann prefer for her afternoon break?"
ANSWER = "Oh, definitely a smoky lapsang, she says."


def test_a_thread_of_one_message_ranks_on_its_base(box: recallbox.Box) -> None:
    (only,) = box.append_many("solo", rows(["the kettle is broken again"]))
    (hit,) = box.search("kettle broken")
    assert hit.id == only.id
    # no neighbour in its episode, no vector, no date or person named: base and episode only
    assert set(hit.explain) == (LEGS - {"vector"}) | {"episode", "score"}
    assert hit.explain["episode"] == hit.explain["fused"]
    assert hit.score == pytest.approx(hit.explain["fused"]) and hit.neighbours == ()


def test_the_answer_next_to_the_matching_turn_is_found(box: recallbox.Box) -> None:
    texts = [*FILLER[:5], QUESTION, ANSWER, *FILLER[5:], "a smoky afternoon in the garden"]
    msgs = box.append_many("chat", rows(texts))  # one sitting: one episode
    answer = msgs[6]
    hits = box.search("Ann tea afternoon break smoky", channel="chat")
    ids = [h.id for h in hits]
    assert answer.id in ids[:3]
    hit = hits[ids.index(answer.id)]
    assert float(hit.explain["neighbour"]) > float(hit.explain["fused"])
    assert [n.id for n in hit.neighbours] == [msgs[5].id, msgs[7].id]
    assert [n.offset for n in hit.neighbours] == [-1, 1]
    assert hit.neighbours[0].text == QUESTION and hit.neighbours[0].role == "assistant"


def test_an_episode_ends_at_a_long_gap(db_path: Path) -> None:
    with recallbox.open(db_path) as box:
        first = box.append_many("chat", rows([*FILLER[:3], QUESTION]))
        later = box.append_many(
            "chat", rows([ANSWER, *FILLER[3:6]], start=T0 + EPISODE_GAP + timedelta(hours=1))
        )
        hits = {h.id: h for h in box.search("Ann tea afternoon break smoky", channel="chat")}
    assert first[-1].id in hits
    answer = hits[later[0].id]
    # the question is in the previous episode: not a neighbour, not shown beside it
    assert (
        answer.explain["neighbour"] == 0.0 and answer.explain["episode"] == answer.explain["fused"]
    )
    assert [n.id for n in answer.neighbours] == [later[1].id]


def test_a_date_named_in_the_query_prefers_that_day(box: recallbox.Box) -> None:
    day = timedelta(days=1)
    # different texts of equal length (equal texts collapse into one hit by content hash)
    box.append_many("diary", rows(["I went swimming in the lake with Tom"], start=T0))
    june = box.append_many(
        "diary", rows(["I went swimming in the lake with Sue"], start=T0 + 30 * day)
    )
    box.append_many("diary", rows(["I went swimming in the lake with Jim"], start=T0 + 60 * day))
    hits = box.search("Where did I go swimming on June 7, 2023?", channel="diary")
    assert hits[0].id == june[0].id
    assert hits[0].explain["date"] == 1.0 and hits[1].explain["date"] == 0.0


def test_a_relative_date_is_resolved_against_the_newest_message(box: recallbox.Box) -> None:
    old = box.append_many("diary", rows(["the garden party was lovely, Tom"], start=T0))
    new = box.append_many(
        "diary", rows(["the garden party was lovely, Sue"], start=T0 + timedelta(days=40))
    )
    box.append_many("diary", rows(["nothing else happened"], start=T0 + timedelta(days=41)))
    hits = box.search("how was the garden party yesterday?", channel="diary")
    assert [h.id for h in hits[:2]] == [new[0].id, old[0].id]


def test_the_participant_the_query_names_comes_first(box: recallbox.Box) -> None:
    ann, bob = box.append_many(
        "pair",
        [
            {"role": "user", "content": "Ann: I really love green tea", "created_at": T0},
            {
                "role": "assistant",
                "content": "Bob: I really love green tea",
                "created_at": T0 + timedelta(days=3),
                "metadata": {"speaker": "Ann"},  # metadata is the caller's: never read
            },
        ],
    )
    hits = box.search("What tea does Bob love?", channel="pair")
    assert [h.id for h in hits] == [bob.id, ann.id]
    assert hits[0].explain["participant"] == 1.0
    assert (hits[0].participant, hits[1].participant) == ("Bob", "Ann")


def test_the_plain_ranking_is_the_hybrid_alone(box: recallbox.Box) -> None:
    box.append_many("chat", rows([*FILLER[:5], QUESTION, ANSWER]))
    plain = search(box.store, None, "Ann tea smoky", using=PLAIN)
    assert plain and all(set(h.explain) == LEGS - {"vector"} for h in plain)
    assert all(h.score == h.explain["fused"] for h in plain)
    assert [h.score for h in plain] == sorted((h.score for h in plain), reverse=True)


def test_signals_never_change_which_rows_are_found(box: recallbox.Box) -> None:
    box.append_many("chat", rows([*FILLER, QUESTION, ANSWER]))
    for query in ("Ann tea", "item number 4", "yesterday in May", "Bob: who?"):
        full = {h.id for h in box.search(query, limit=100)}
        plain = {h.id for h in search(box.store, None, query, limit=100, using=PLAIN)}
        assert full == plain


def test_a_thread_without_time_gaps_is_one_episode_and_ranks_its_match_first(
    box: recallbox.Box,
) -> None:
    same = [{"role": "user", "content": t, "created_at": T0} for t in [*FILLER, ANSWER]]
    msgs = box.append_many("flat", same)  # every created_at equal: one episode
    hits = box.search("smoky lapsang", channel="flat")
    assert hits[0].id == msgs[-1].id
    best = hits[0].explain["fused"]
    assert all(h.explain["episode"] == best for h in hits)  # one episode: one prior for all
    assert [n.id for n in hits[0].neighbours] == [msgs[-2].id]  # the last message: one side


class TableEmbedder:
    """Vectors from a fixed table (a unit vector per known text), None for any other text."""

    model_id = "table-2"
    dim = 2

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: list[str]) -> list[list[float] | None]:
        return [self.table.get(t) for t in texts]


def test_a_lone_message_with_a_vector_ranks_on_its_own_evidence(db_path: Path) -> None:
    lone_text = "the kettle is broken again"
    query = "kettle broken"
    table = {lone_text: [1.0, 0.0], query: [1.0, 0.0]} | {t: [0.0, 1.0] for t in FILLER}
    with recallbox.open(db_path, embedder=TableEmbedder(table)) as box:
        box.append_many("long", rows([*FILLER, "a kettle on the stove"]))
        (lone,) = box.append_many("solo", rows([lone_text], start=T0 + timedelta(days=9)))
        assert box.embed_all() == len(FILLER) + 1
        for channel in ("solo", None):
            hits = box.search(query, channel=channel)
            assert hits[0].id == lone.id, channel
            best = hits[0].explain
            # its own episode: context is its own similarity, no neighbour, prior = its base
            assert best["context"] == pytest.approx(float(best["vector"]))
            assert "neighbour" not in best and best["episode"] == best["fused"]
            assert hits[0].neighbours == ()
            assert all(0.0 <= h.score <= 1.0 for h in hits)
