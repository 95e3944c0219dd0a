"""Embedding passes (DESIGN §4.2): resumable, interruptible, lazy, rebuild, model mismatch."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

import recallbox
from backends import execute, is_postgres
from recallbox.storage.base import CORPUS_MESSAGE, SearchFilter


class CountingEmbedder:
    """Every text gets a vector derived from its length; can be told to stop mid-pass."""

    def __init__(self, model_id: str = "count-2", *, dim: int = 2, stop_at_call: int = 0) -> None:
        self.model_id = model_id
        self.dim = dim
        self.stop_at_call = stop_at_call
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float] | None]:
        self.calls.append(list(texts))
        if self.stop_at_call and len(self.calls) == self.stop_at_call:
            raise KeyboardInterrupt
        return [[1.0, float(len(t))] if "novector" not in t else None for t in texts]


def vector_count(box: recallbox.Box) -> int:
    return sum(s.count for s in box.store.embedding_spaces(CORPUS_MESSAGE))  # type: ignore[attr-defined]


def add(box: recallbox.Box, count: int, channel: str = "ops") -> list[recallbox.Message]:
    return box.append_many(
        channel, [{"role": "user", "content": f"note number {i}"} for i in range(count)]
    )


def test_nothing_is_embedded_at_write_time(db_path: Path) -> None:
    embedder = CountingEmbedder()
    with recallbox.open(db_path, embedder=embedder) as box:
        add(box, 3)
        box.append("ops", "user", "one more")
        assert embedder.calls == [] and vector_count(box) == 0


def test_embed_all_embeds_what_is_missing_once(db_path: Path) -> None:
    embedder = CountingEmbedder()
    progress: list[tuple[int, int]] = []
    with recallbox.open(db_path, embedder=embedder) as box:
        add(box, 5)
        box.append("ops", "user", "novector please")
        box.append("ops", "user", "   ")
        box.append("ops", "system", "event", kind="machine_event")
        box.append("ops", "user", "invisible", model_visible=False)
        assert box.embed_all(batch_size=2, progress=lambda d, t: progress.append((d, t))) == 5
        assert progress == [(0, 6), (2, 6), (4, 6), (6, 6)]
        assert box.embed_all() == 0
        add(box, 1)
        assert box.embed_all() == 1
        assert vector_count(box) == 6


def test_an_interrupted_pass_keeps_its_finished_batches_and_resumes(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=CountingEmbedder(stop_at_call=3)) as box:
        add(box, 10)
        with pytest.raises(KeyboardInterrupt):
            box.embed_all(batch_size=3)
        assert vector_count(box) == 6
        assert box.doctor().healthy
    with recallbox.open(db_path, embedder=CountingEmbedder()) as box:
        assert box.embed_all(batch_size=3) == 4
        assert vector_count(box) == 10


def test_the_lazy_pass_embeds_only_drilled_targets(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=CountingEmbedder()) as box:
        first, second, _ = add(box, 3)
        box.read_message(second.id)  # a drill: the hit-log row the lazy pass follows
        assert box.embed_all(lazy=True) == 1
        assert box.embed_all(lazy=True) == 0
        assert box.embed_all() == 2
        assert first.id != second.id


def test_quarantined_threads_are_not_sent_to_the_embedder(db_path: Path) -> None:
    embedder = CountingEmbedder()
    with recallbox.open(db_path, embedder=embedder) as box:
        add(box, 2, "secret")
        box.quarantine("secret")
        add(box, 1)
        assert box.embed_all() == 1
        assert embedder.calls == [["note number 0"]]
        box.unquarantine("secret")
        assert box.embed_all() == 2


def test_a_changed_text_is_re_embedded_and_its_old_vector_is_not_used(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=CountingEmbedder()) as box:
        (message,) = add(box, 1)
        box.embed_all()
        seg = "" if is_postgres(db_path) else ", content_seg = 'redacted'"  # (SQLite's copy)
        execute(
            box,
            f"UPDATE messages SET content = 'redacted'{seg}, content_hash = 'changed' WHERE uid = ?",
            [message.id],
        )
        store = box.store
        space = store.embedding_spaces(CORPUS_MESSAGE)[0]  # type: ignore[attr-defined]
        assert store.distances([1.0, 1.0], [message.id], space=space, where=SearchFilter()) == {}  # type: ignore[attr-defined]
        assert (
            store.nearest([1.0, 1.0], space=space, where=SearchFilter(channel=None), limit=5) == []
        )  # type: ignore[attr-defined]
        assert box.embed_all() == 1
        assert store.distances([1.0, 1.0], [message.id], space=space, where=SearchFilter())  # type: ignore[attr-defined]


def test_no_embedder(box: recallbox.Box) -> None:
    with pytest.raises(recallbox.InvalidArgument, match="no embedder"):
        box.embed_all()


def test_another_models_vectors_are_never_mixed(db_path: Path) -> None:
    with recallbox.open(db_path, embedder=CountingEmbedder("model-a")) as box:
        add(box, 3)
        assert box.embed_all() == 3
    with recallbox.open(db_path, embedder=CountingEmbedder("model-b")) as box:
        with pytest.raises(recallbox.SchemaMismatch, match="recallbox embed --rebuild"):
            box.search("note")
        with pytest.raises(recallbox.SchemaMismatch, match="model-a"):
            box.embed_all()
        assert len(box.search("note", allow_embed=False)) == 3
        assert box.embed_all(rebuild=True) == 3
        spaces = box.store.embedding_spaces(CORPUS_MESSAGE)  # type: ignore[attr-defined]
        assert [(s.model_id, s.count) for s in spaces] == [("model-b", 3)]
        assert len(box.search("note")) == 3
    with (
        recallbox.open(db_path, embedder=CountingEmbedder("model-b", dim=3)) as box,
        pytest.raises(recallbox.SchemaMismatch, match="2-d"),
    ):
        box.search("note")


def test_an_embedder_that_learns_its_dimension(db_path: Path) -> None:
    embedder = CountingEmbedder("learns", dim=0)
    with recallbox.open(db_path, embedder=embedder) as box:
        add(box, 2)
        assert box.embed_all() == 2
        assert box.store.embedding_spaces(CORPUS_MESSAGE)[0].dim == 2  # type: ignore[attr-defined]
        assert len(box.search("note number")) == 2


def test_open_resolves_embedder_names(db_path: Path) -> None:
    with recallbox.open(db_path, embedder="hash") as box:
        assert box.embedder is not None and box.embedder.model_id.startswith("hash")
    with pytest.raises(recallbox.InvalidArgument):
        recallbox.open(db_path, embedder="no-such-model")
    with recallbox.open(db_path) as box:
        assert box.embedder is None


def test_a_missing_extra_raises_at_open(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(recallbox.DependencyMissing, match=r"recallbox\[embed\]"):
        recallbox.open(db_path, embedder="minilm")
    assert is_postgres(db_path) or not Path(db_path).exists()  # no file made for nothing
