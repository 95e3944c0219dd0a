"""The privacy gate on the read paths of a long history (#14's windows; DESIGN §5), through the
Box: ``search``, ``recall`` and ``search_memory``.

* The keyword window of a global search (``RankWindow``) ranks only the newest matches of a
  query: a query term held only by denied rows must give exactly what a term no row holds
  (counted in the window, the denied rows would fill it and widen it, and which visible rows
  are ranked would tell how many denied rows hold the term).
* The vector window of a big space (the newest threads' in-memory copy, and the distances of
  the keyword candidates outside it, read from the ``vec0`` chunks by row id): denied rows
  nearest to the query take no visible row's place, whatever their number — the output is
  that of a world where the same rows hold text far from the query.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import recallbox
from recallbox.domains import other_memory, sessions
from recallbox.storage.base import RankWindow
from recallbox.storage.sqlite import vector_cache, vectors

CANARY = "CANARYQ-7f3a"
NOTHING = "NOTHING-00x0"
ECHO = "<QUERY>"
#: Visible matches of "deploy": one more than the sessions domain's keyword pool, so that a
#: window of that pool's size is filled by visible rows alone and never widened.
VISIBLE = sessions.KEYWORD_CANDIDATES + 1
WINDOW = RankWindow(sessions.KEYWORD_CANDIDATES, 0)


@contextmanager
def small_windows() -> Iterator[None]:
    """The sessions domain's keyword window at the size of its pool; no answer is late."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sessions, "HISTORY_RANK_WINDOW", WINDOW)
        patch.setattr(other_memory, "OTHER_MEMORY_TIMEOUT_S", 120.0)
        yield


def outputs(box: recallbox.Box, query: str) -> list[str]:
    """What each verb shows for ``query``, its echo replaced."""
    shown = [
        " ".join(h.id for h in box.search(query, domain="sessions")),
        box.recall(query, domains=["sessions"]).render(),
        box.search_memory(query, "ops"),
    ]
    return [text.replace(query, ECHO) for text in shown]


def test_a_term_only_denied_rows_hold_takes_no_place_in_the_keyword_window(
    db_path: Path,
) -> None:
    with recallbox.open(db_path) as box:
        # the oldest row is the best match of "deploy"; the newer ones are weaker
        box.append("ops", "user", "deploy deploy deploy the billing service")
        box.append_many(
            "ops",
            [
                {"role": "user", "content": f"item {n}: deploy notes for the week, more words"}
                for n in range(VISIBLE - 1)
            ],
        )
        # the newest rows of the history hold the canary, in a quarantined thread
        box.append_many(
            "vault", [{"role": "user", "content": f"{CANARY} tag"} for _ in range(VISIBLE)]
        )
        box.quarantine("vault")
        with small_windows():
            assert outputs(box, f"deploy {CANARY}") == outputs(box, f"deploy {NOTHING}")


class NearEmbedder:
    """A text naming the canary, or ``NOTHING``, points along x; any other text along y with a
    tilt that grows with its number, so the visible rows are ranked by their distance."""

    model_id = "near-3"
    dim = 3

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        out: list[list[float] | None] = []
        for text in texts:
            if CANARY in text or NOTHING in text:
                out.append([1.0, 0.0, 0.0])
            else:
                found = re.search(r"\d+", text)
                tilt = float(found.group()) if found else 0.0
                out.append([0.5, 1.0, tilt / 100.0])
        return out


def _world(path: Path, vault_text: Callable[[int], str]) -> None:
    with recallbox.open(path, embedder=NearEmbedder()) as box:
        for thread in range(6):  # the oldest threads fall outside the window copy
            box.append_many(
                f"t{thread}",
                [
                    {"role": "user", "content": f"note {thread * 10 + n} about the build"}
                    for n in range(4)
                ],
            )
        box.append("ops", "user", "deploy the billing service")
        box.append_many("vault", [{"role": "user", "content": vault_text(n)} for n in range(12)])
        box.embed_all()
        box.quarantine("vault")


def _shown(path: Path, query: str) -> list[str]:
    """``search`` and ``recall`` over the window paths, ids and the echo replaced."""
    with pytest.MonkeyPatch.context() as patch:
        # every space is "big": no whole copy, a global search reads the newest threads' copy
        # (two threads' worth), the keyword candidates outside it by row id
        patch.setattr(vector_cache, "CACHE_MAX_VECTORS", 0)
        patch.setattr(vectors, "GLOBAL_EXACT_KNN_MAX", 0)
        patch.setattr(vectors, "GLOBAL_SCAN_VECTORS", 6)
        with recallbox.open(path, embedder=NearEmbedder()) as box:
            hits = box.search(query, domain="sessions", allow_embed=True)
            texts = [f"{h.channel} {h.text} {h.score:.9f}" for h in hits]
            rendered = box.recall(query, domains=["sessions"], allow_embed=True).render()
    texts.append(re.sub(r"m_[0-9a-f]{16}", "<ID>", rendered))
    return [t.replace(query, ECHO) for t in texts]


def test_denied_rows_nearest_the_query_take_no_place_in_the_vector_window(
    tmp_path: Path,
) -> None:
    near, far = tmp_path / "near.db", tmp_path / "far.db"
    _world(near, lambda n: f"{CANARY} secret {n}")  # the nearest rows of all, denied
    _world(far, lambda n: f"far away {90 + n}")  # the same rows, far from the query
    for query in (f"build {CANARY}", f"deploy {NOTHING}", f"note {CANARY}"):
        got: Any = _shown(near, query)
        assert got == _shown(far, query)
        assert len(got) > 1  # the vector leg found visible rows
