"""``recallbox migrate --from … --to …`` (#16 item 5): a whole store copied across backends,
both directions, with progress, verified counts, and resumable.

A store with every kind of row (the demo's thread, tool output, notes, memory and code index;
imported transcripts with their ledger; quarantine and exclusions; hit-log rows; vectors) is
copied SQLite → PostgreSQL → SQLite. Each copy holds the same canonical rows as its source,
table by table and vector by vector, answers the same searches, and is healthy; a copy
stopped half way finishes when run again; a destination holding other data is refused.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import recallbox
from postgres_server import RecallboxDatabases
from recallbox.cli import cli
from recallbox.samples.demo import demo_code, load_curated, load_sample
from recallbox.storage import transfer
from recallbox.storage.transfer import TABLES
from recallbox.transfer import migrate_store

FIXTURES = Path(__file__).parent / "importers" / "fixtures"


def fill(box: recallbox.Box) -> None:
    load_sample(box)
    load_curated(box)
    assert demo_code(box) is not None
    box.import_transcripts("claude-code", [FIXTURES / "claude-code" / "projects"])
    box.append("secret", "user", "hidden by quarantine")
    box.quarantine("secret")
    box.exclude_source("private.md")
    box.search("billing connection refused")
    box.recall("billing connection refused pg-replica-1")
    box.hits.flush()
    assert box.embed_all() > 0


def rows(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every canonical row and vector of a store."""
    out = {t.name: store.transfer_rows(t.name, None, 1_000_000) for t in TABLES}
    for space in out["embedding_spaces"]:
        out[f"vectors {space[0]}"] = [  # as the float32 both backends store
            (rid, part, list(struct.unpack(f"<{len(v)}f", struct.pack(f"<{len(v)}f", *v))))
            for rid, part, v in store.transfer_vectors(int(space[0]), 0, 1_000_000)
        ]
    return out


def answers(box: recallbox.Box) -> list[Any]:
    return [
        [(h.id, round(h.score, 9)) for h in box.search("billing replica", allow_embed=False)],
        box.search_memory("connection refused"),
        [(h.id, h.domain) for h in box.search("deploy", domain="knowledge", allow_embed=False)],
        [h.id for h in box.search("connect_replica", domain="code", allow_embed=False)],
        box.recall_context("rollback").content,
    ]


def test_a_store_round_trips_through_postgresql_with_every_row(
    tmp_path: Path, recallbox_databases: RecallboxDatabases
) -> None:
    source = str(tmp_path / "source.db")
    url = recallbox_databases.url("copy")
    back = str(tmp_path / "back.db")
    with recallbox.open(source, embedder="hash") as box:
        fill(box)
    with recallbox.open(source, embedder="hash", hit_log=False) as box:  # reads write nothing
        expected, asked = rows(box.store), answers(box)
    result = CliRunner().invoke(cli, ["migrate", "--from", source, "--to", url, "--json"], obj={})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["counts"]["messages"] == len(expected["messages"]) > 40
    assert report["copied"] == sum(len(v) for v in expected.values()) and not report["resumed"]
    with recallbox.open(url, embedder="hash", hit_log=False) as box:
        assert rows(box.store) == expected
        assert answers(box) == asked
        assert box.doctor().healthy
    again = CliRunner().invoke(cli, ["migrate", "--from", url, "--to", back], obj={})
    assert again.exit_code == 0, again.output
    assert "every count verified" in again.stdout and f"created database {back}" in again.stderr
    with recallbox.open(back, embedder="hash", hit_log=False) as box:
        assert rows(box.store) == expected
        assert answers(box) == asked
        assert box.doctor().healthy
    with recallbox.open(url) as box:  # the copied ids are behind every new one
        assert box.append("after", "user", "a new row").seq == 1


def test_a_stopped_copy_resumes_and_progress_is_reported(
    tmp_path: Path, recallbox_databases: RecallboxDatabases, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = str(tmp_path / "source.db")
    with recallbox.open(source) as box:
        for i in range(300):
            box.append(f"t{i % 7}", "user", f"message {i} about deploys and billing")
        expected = rows(box.store)
    url = recallbox_databases.url("resumed")
    monkeypatch.setattr(transfer, "BATCH_ROWS", 50)
    from recallbox.storage.postgres.transfer import TransferMixin

    real = TransferMixin.transfer_write
    writes = {"n": 0}

    def failing(self: Any, table: str, batch: Any) -> None:
        writes["n"] += 1
        if writes["n"] == 5:
            raise RuntimeError("power cut")
        real(self, table, batch)

    monkeypatch.setattr(TransferMixin, "transfer_write", failing)
    with pytest.raises(RuntimeError, match="power cut"):
        migrate_store(source, url)
    seen: list[tuple[str, int, int]] = []
    report = migrate_store(source, url, progress=lambda *p: seen.append(p))
    assert report.resumed and 0 < report.copied < sum(len(v) for v in expected.values())
    messages = [(done, total) for what, done, total in seen if what == "messages"]
    assert messages[-1] == (300, 300) and [d for d, _ in messages] == sorted(d for d, _ in messages)
    with recallbox.open(url) as box:
        assert rows(box.store) == expected


def test_a_destination_holding_other_data_is_refused(
    tmp_path: Path, recallbox_databases: RecallboxDatabases
) -> None:
    source = str(tmp_path / "source.db")
    with recallbox.open(source) as box:
        box.append("ops", "user", "the source")
    url = recallbox_databases.url("other")
    with recallbox.open(url) as box:
        box.append("elsewhere", "user", "another store's row")
    with pytest.raises(recallbox.StoreUnavailable, match="not the source's"):
        migrate_store(source, url)
    result = CliRunner().invoke(cli, ["migrate", "--from", source, "--to", url], obj={})
    assert result.exit_code == 1 and "migrate into an empty database" in result.stderr


def test_the_source_must_exist_and_differ_from_the_destination(tmp_path: Path) -> None:
    missing = CliRunner().invoke(
        cli, ["migrate", "--from", str(tmp_path / "nope.db"), "--to", str(tmp_path / "x.db")]
    )
    assert missing.exit_code == 1 and "no database at" in missing.stderr
    assert not (tmp_path / "x.db").exists()
    with recallbox.open(tmp_path / "a.db"):
        pass
    same = CliRunner().invoke(
        cli, ["migrate", "--from", str(tmp_path / "a.db"), "--to", str(tmp_path / "a.db")]
    )
    assert same.exit_code == 2 and "same database" in same.stderr
