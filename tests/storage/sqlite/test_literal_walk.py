"""The walk of a phrase in search order (``literal_walk.py``) against a sort of every key.

Threads are written in any interleaving (an old thread active again comes first in search
order but last in key order), compacted anywhere, quarantined; the walk must hand out exactly
the phrase's keys of the allowed threads, in DESIGN §3.2 order, with every setting of its
blocks, its splits and its batches.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.storage.queries import SearchFilter
from recallbox.storage.sqlite import literal_walk
from recallbox.storage.sqlite.literal_index import LITERAL_TABLE
from recallbox.storage.sqlite.literal_plan import index_keys, load_scope, phrase_match
from recallbox.storage.sqlite.literal_walk import Walk

SETTINGS = {
    "default": {},
    "blocks of one thread": {"SPARSE_BLOCK_KEYS": 0},
    "every block split": {"BLOCK_READ_KEYS": 0, "FIRST_BATCH_KEYS": 1, "MAX_BATCH_KEYS": 2},
    "small reads": {"BLOCK_READ_KEYS": 2, "FIRST_BATCH_KEYS": 1, "MAX_BATCH_KEYS": 3},
}

STEP = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 5), st.booleans()),
    st.tuples(st.just("compact"), st.integers(0, 5), st.just(False)),
    st.tuples(st.just("quarantine"), st.integers(0, 5), st.just(False)),
)


def _walk_and_truth(box: recallbox.Box, channel: str | None) -> tuple[list[int], list[int]]:
    pool = box.store.pool
    with pool.snapshot() as conn:
        scope = load_scope(conn, SearchFilter(channel=channel))
        every = [k for k in index_keys(conn, phrase_match("needle"), scope) if scope.allows(k)]
        scope.load_generations(conn, scope.threads)
        truth = sorted(every, key=scope.sort_key)
        walk = Walk(
            pool,
            LITERAL_TABLE,
            phrase_match("needle"),
            scope.threads,
            lambda t: scope.firsts(pool, t),
        )
        walked = list(walk.each())
        assert list(walk.each()) == walked  # memoized: a second pass reads the same keys
    return walked, truth


@settings(max_examples=80, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=60), st.sampled_from(sorted(SETTINGS)))
def test_the_walk_hands_out_every_key_in_search_order(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, bool]], name: str
) -> None:
    path: Path = tmp_path_factory.mktemp("walk") / "w.db"
    patch = pytest.MonkeyPatch()
    for constant, value in SETTINGS[name].items():
        patch.setattr(literal_walk, constant, value)
    try:
        with recallbox.open(path) as box:
            for n, (kind, thread, holds) in enumerate(steps):
                channel = f"c{thread}"
                if kind == "append":
                    text = f"row {n} " + ("has the needle" if holds else "has none")
                    box.append(channel, "user", text)
                elif kind == "compact" and box.store.get_thread(channel) is not None:
                    box.append(channel, "user", f"needle before compaction {n}")
                    box.compact(channel, "summary")
                elif kind == "quarantine" and box.store.get_thread(channel) is not None:
                    box.quarantine(channel)
            box.store.indexer.drain()
            for channel in (None, "c0", "c3"):
                walked, truth = _walk_and_truth(box, channel)
                assert walked == truth
    finally:
        patch.undo()


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_an_old_thread_active_again_comes_first_and_big_threads_go_by_generation(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    for constant, value in SETTINGS[name].items():
        monkeypatch.setattr(literal_walk, constant, value)
    for t in range(12):  # c0 is the oldest thread (lowest id) ...
        box.append_many(f"c{t}", [{"role": "user", "content": f"needle {t}.{i}"} for i in range(3)])
        if t % 4 == 0:
            box.compact(f"c{t}", "summary")
            box.append(f"c{t}", "user", f"needle after {t}")
    box.append("c0", "user", "needle: c0 is active again")  # ... and now the newest
    box.append("c11", "user", "no match")
    box.store.indexer.drain()
    walked, truth = _walk_and_truth(box, None)
    assert walked == truth and len(truth) == 12 * 3 + 3 + 1
    ids = dict(box.store.pool.connection().execute("SELECT id, channel FROM threads"))
    threads = list(dict.fromkeys(ids[key >> 32] for key in walked))
    assert threads == ["c11", "c0", *(f"c{t}" for t in range(10, 0, -1))]
    for channel in ("c0", "c4", "c11"):
        walked, truth = _walk_and_truth(box, channel)
        assert walked == truth and truth


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_threads_gone_quiet_come_last_in_every_block_shape(
    box: recallbox.Box, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    for constant, value in SETTINGS[name].items():
        monkeypatch.setattr(literal_walk, constant, value)
    for t in range(6):  # every thread created first: c5 has the highest id ...
        box.append(f"c{t}", "user", f"needle at the start of {t}")
    for t in (0, 1, 2):  # ... but c0-c2 are active later: c3-c5 come last
        box.append_many(f"c{t}", [{"role": "user", "content": f"needle {t}.{i}"} for i in range(4)])
    box.quarantine("c1")
    box.store.indexer.drain()
    walked, truth = _walk_and_truth(box, None)
    assert walked == truth and len(truth) == 5 + 2 * 4
    ids = dict(box.store.pool.connection().execute("SELECT id, channel FROM threads"))
    assert list(dict.fromkeys(ids[key >> 32] for key in walked)) == ["c2", "c0", "c5", "c4", "c3"]
