"""The code domain's vector leg (#11 item 3): ``embed_all`` embeds each symbol's signature and
first docstring line, a vector carries a symbol the keyword leg misses, and with
``allow_embed=False`` the embedder is never called."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

import recallbox
from backends import DbLocation
from recallbox.samples.demo import CODE_DEMO_FOLDER

SAMPLE = Path(recallbox.__file__).parent / "samples" / CODE_DEMO_FOLDER


class SpyEmbedder:
    """Texts about replicas point one way, everything else another."""

    model_id = "spy-3"
    dim = 3

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        return [[1.0, 0.0, 0.0] if "replica" in t.lower() else [0.0, 1.0, 0.0] for t in texts]


def test_symbols_are_embedded_and_a_vector_carries_a_keyword_miss(
    db_location: DbLocation,
    tmp_path: Path,
) -> None:
    spy = SpyEmbedder()
    repo = shutil.copytree(SAMPLE, tmp_path / "billing")
    with recallbox.open(db_location("v"), embedder=spy) as box:
        report = box.index_code(repo)
        assert spy.calls == []  # indexing never embeds
        assert box.embed_all() == report.total_symbols == 9
        embedded = [text for call in spy.calls for text in call]
        assert (
            "def replica_host(url: str) -> str:\n"
            "The host part of a postgresql:// URL (``pg-replica-2`` of ``…@pg-replica-2/billing``)."
        ) in embedded
        spy.calls.clear()
        assert box.search("replica_host", domain="code", allow_embed=False)[0].id == (
            "db.py::replica_host"
        )
        assert box.search("where does failover happen", domain="code", allow_embed=False) == []
        assert spy.calls == []
        # no symbol holds "failover" or "happen": only the vector leg finds anything
        hits = box.search("where does failover happen", domain="code")
        assert spy.calls == [["where does failover happen"]]  # one call, for the query
        assert hits and all(h.explain["leg"] == "vector" for h in hits)
        assert hits[0].score == pytest.approx(0.6) and hits[0].keyword == 0.0
        assert box.embed_all() == 0  # nothing left to embed
