"""Upgrading databases written by earlier releases (``fixtures/make_release_db.py``).

``release-schema4.db`` was written before #14: opening it applies the literal index by thread
and text stored once, in resumable batches with progress. ``release-schema12.db`` was written
by main at schema 12, ``release-schema15.db`` at schema 15 (the current release; both by
``fixtures/make_schema12_db.py``): opening them applies the migrations since.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from test_literal_index import assert_complete, ids_in

import recallbox
from recallbox.storage.sqlite import upgrades
from recallbox.storage.sqlite.literal_index import backlog_size
from recallbox.storage.sqlite.schema import LATEST_VERSION, MIGRATION_LITERAL_INDEX, MIGRATIONS
from recallbox.text.cjk import has_cjk

FIXTURE = Path(__file__).parent / "fixtures" / "release-schema4.db"
TERMS = ("plantmark-alpha", "pg-primary-3", "Connection refused", "召回机制", "召回", "ssh host-7")


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    db = tmp_path / "old.db"
    shutil.copyfile(FIXTURE, db)
    return db


def _texts(db: Path) -> list[tuple[str, str, str]]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    rows = conn.execute("SELECT uid, content, args_text FROM messages ORDER BY id").fetchall()
    conn.close()
    return [(str(a), str(b), str(c)) for a, b, c in rows]


def test_the_release_database_upgrades_in_place(
    old_db: Path, caplog: pytest.LogCaptureFixture
) -> None:
    before = _texts(old_db)
    caplog.set_level(logging.INFO, "recallbox.storage.sqlite.migrations")
    with recallbox.open(old_db) as box:
        assert box.store.schema_version() == LATEST_VERSION
        assert box.doctor().healthy
        conn = box.store.pool.connection()
        assert backlog_size(conn) == 0
        blanked = conn.execute("SELECT count(*) FROM messages WHERE content_seg = ''").fetchone()
        kept = conn.execute("SELECT count(*) FROM messages WHERE content_seg != ''").fetchone()
        assert blanked[0] > 150 and kept[0] == 1  # the CJK run of 3+ characters keeps bigrams
        assert (
            conn.execute("SELECT count(*) FROM generations WHERE first_seq IS NULL").fetchone()[0]
            == 0
        )
        for term in TERMS:
            assert_complete(box, term)
        assert len(ids_in(box.search_memory("plantmark-alpha"))) == 1  # the live one only
        assert box.search("召回机制", allow_embed=False)
        assert box.search("staging attempt", allow_embed=False)
        assert box.search("Oslo", allow_embed=False, domain="transcripts")
        assert box.policy().quarantined == ("secret",)
    assert _texts(old_db) == before
    reports = [r for r in caplog.records if hasattr(r, "migration")]
    assert {r.migration for r in reports} == {  # type: ignore[attr-defined]
        MIGRATION_LITERAL_INDEX,
        upgrades.MIGRATION_TEXT_ONCE,
        upgrades.MIGRATION_WORD_INDEX,
        upgrades.MIGRATION_CJK_INDEX,
    }
    assert all(r.done <= r.total or r.total == 0 for r in reports)  # type: ignore[attr-defined]


def test_an_interrupted_migration_resumes_where_it_stopped(
    old_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(upgrades, "MIGRATION_INDEX_ROWS", 7)
    monkeypatch.setattr(upgrades, "TEXT_ONCE_ID_RANGE", 11)
    real = upgrades.TEXT_ONCE.step
    batches = {"n": 0}

    def crashing(conn: apsw.Connection, progress: upgrades.Progress) -> bool:
        batches["n"] += 1
        if batches["n"] == 4:
            raise KeyboardInterrupt  # the process dies in the middle of a batch
        return real(conn, progress)

    monkeypatch.setitem(
        upgrades.BATCHED,
        upgrades.MIGRATION_TEXT_ONCE,
        upgrades.Batched(upgrades.TEXT_ONCE.total, crashing, upgrades.TEXT_ONCE.finish),
    )
    with pytest.raises(KeyboardInterrupt):
        recallbox.open(old_db)
    conn = apsw.Connection(str(old_db))
    progress = conn.execute("SELECT name, phase, cursor FROM migration_progress").fetchall()
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
    conn.close()
    assert progress == [(upgrades.MIGRATION_TEXT_ONCE, 0, 33)]  # three batches committed
    # the interrupted migration is recorded (an older recallbox refuses the file from now on);
    # no later migration runs before it finishes
    assert max(versions) == next(v for v, n, _ in MIGRATIONS if n == upgrades.MIGRATION_TEXT_ONCE)
    monkeypatch.setitem(upgrades.BATCHED, upgrades.MIGRATION_TEXT_ONCE, upgrades.TEXT_ONCE)
    with recallbox.open(old_db) as box:
        assert box.doctor().healthy
        for term in TERMS:
            assert_complete(box, term)
        conn = box.store.pool.connection()
        assert conn.execute("SELECT count(*) FROM migration_progress").fetchone()[0] == 0


def test_a_new_database_and_an_upgraded_one_answer_alike(old_db: Path, tmp_path: Path) -> None:
    with recallbox.open(old_db) as box:
        upgraded = {t: box.search_memory(t) for t in TERMS}
        conn = box.store.pool.connection()
        sql = conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'messages_fts'").fetchone()
    with recallbox.open(tmp_path / "new.db") as fresh:
        conn = fresh.store.pool.connection()
        assert (
            conn.execute("SELECT sql FROM sqlite_schema WHERE name = 'messages_fts'").fetchone()
            == sql
        )
    assert all(
        text.startswith("The following is historical evidence") for text in upgraded.values()
    )


# -- the word index (migration 14) on a database written by main before it ----------------------

SCHEMA12 = Path(__file__).parent / "fixtures" / "release-schema12.db"
WORD_TERMS = (
    *TERMS,
    "pg-primary-3 to staging",
    "Connection refused on host-7.prod",
    "deploy pg-primary",
    "refused on host",
    "ssh host-7.prod said",
)


def _indexed(conn: apsw.Connection, table: str) -> set[int]:
    return {int(r[0]) for r in conn.execute(f"SELECT rowid FROM {table}_docsize")}


@contextlib.contextmanager
def _upgraded(
    tmp_path: Path, fixture: Path, caplog: pytest.LogCaptureFixture
) -> Iterator[tuple[recallbox.Box, apsw.Connection]]:
    """A copy of ``fixture`` opened (upgraded) with its indexer stopped; its texts unchanged."""
    db = tmp_path / fixture.name
    shutil.copyfile(fixture, db)
    before = _texts(db)
    caplog.set_level(logging.INFO, "recallbox.storage.sqlite.migrations")
    with recallbox.open(db) as box:
        box.store.indexer.stop()
        conn = box.store.pool.connection()
        assert box.store.schema_version() == LATEST_VERSION
        assert backlog_size(conn) == 3  # the rows queued by the old code stay queued
        yield box, conn
    assert _texts(db) == before


def test_a_schema12_database_gets_the_word_index_in_place(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _upgraded(tmp_path, SCHEMA12, caplog) as (box, conn):
        literal, words = _indexed(conn, "messages_literal"), _indexed(conn, "messages_words")
        assert words == literal and len(words) == 191  # ... every indexed row has its words
        for term in WORD_TERMS:
            assert_complete(box, term)
        box.store.indexer.drain()
        assert _indexed(conn, "messages_words") == _indexed(conn, "messages_literal")
        assert len(_indexed(conn, "messages_words")) == 194
        for term in WORD_TERMS:
            assert_complete(box, term)
        assert box.doctor().healthy
    reports = [r for r in caplog.records if hasattr(r, "migration")]
    names = {r.migration for r in reports}  # type: ignore[attr-defined]
    assert names == {upgrades.MIGRATION_WORD_INDEX, upgrades.MIGRATION_CJK_INDEX}
    words = [r for r in reports if r.migration == upgrades.MIGRATION_WORD_INDEX]  # type: ignore[attr-defined]
    assert words[-1].done == words[-1].total == 191  # type: ignore[attr-defined]


def _interrupt(
    monkeypatch: pytest.MonkeyPatch, db: Path, name: str, batched: upgrades.Batched, at: int
) -> list[tuple[str, int, int]]:
    """Open ``db`` with migration ``name``'s batch ``at`` interrupted; its saved progress."""
    batches = {"n": 0}

    def crashing(conn: apsw.Connection, progress: upgrades.Progress) -> bool:
        batches["n"] += 1
        if batches["n"] == at:
            raise KeyboardInterrupt
        return batched.step(conn, progress)

    monkeypatch.setitem(
        upgrades.BATCHED, name, upgrades.Batched(batched.total, crashing, batched.finish)
    )
    with pytest.raises(KeyboardInterrupt):
        recallbox.open(db)
    monkeypatch.setitem(upgrades.BATCHED, name, batched)
    conn = apsw.Connection(str(db))
    progress = conn.execute("SELECT name, done, total FROM migration_progress").fetchall()
    conn.close()
    return [(str(a), int(b), int(c)) for a, b, c in progress]


def test_an_interrupted_word_index_migration_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "v12.db"
    shutil.copyfile(SCHEMA12, db)
    monkeypatch.setattr(upgrades, "MIGRATION_INDEX_ROWS", 20)
    progress = _interrupt(monkeypatch, db, upgrades.MIGRATION_WORD_INDEX, upgrades.WORD_INDEX, 4)
    conn = apsw.Connection(str(db))
    words = len(_indexed(conn, "messages_words"))
    conn.close()
    assert progress == [(upgrades.MIGRATION_WORD_INDEX, 60, 191)] and words == 60
    with recallbox.open(db) as box:
        box.store.indexer.drain()
        conn = box.store.pool.connection()
        assert _indexed(conn, "messages_words") == _indexed(conn, "messages_literal")
        assert box.doctor().healthy
        for term in WORD_TERMS:
            assert_complete(box, term)


def _index_names(db: Path) -> set[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    names = {str(r[0]) for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'index'")}
    conn.close()
    return names


def test_the_current_release_database_upgrades_in_place(tmp_path: Path) -> None:
    """The index on ``tool_call_id`` (no query reads it) is dropped; nothing else changes: the
    same rows, the same answers, and a tool result still shows the call it answers."""
    db = tmp_path / "current.db"
    shutil.copyfile(SCHEMA12, db)
    before = _texts(db)
    assert "messages_by_tool_call" in _index_names(db)
    with recallbox.open(db) as box:
        assert box.store.schema_version() == LATEST_VERSION
        assert box.doctor().healthy
        for term in TERMS:
            assert_complete(box, term)
        linked = [m for t in box.threads() for m in box.messages(t.channel) if m.tool_call_id]
        assert linked and all(m.role == "tool" for m in linked)
    assert "messages_by_tool_call" not in _index_names(db)
    assert _texts(db) == before
    with recallbox.open(db) as box:  # reopening applies nothing more
        assert box.store.schema_version() == LATEST_VERSION
    fresh = tmp_path / "fresh.db"
    recallbox.open(fresh).close()
    assert _index_names(fresh) == _index_names(db)


SCHEMA15 = Path(__file__).parent / "fixtures" / "release-schema15.db"
CJK_TERMS = ("召回", "召", "回", "机制", "制", "回机")


def _cjk_rows(conn: apsw.Connection) -> set[int]:
    """Keys of the indexed (searchable, not queued) rows whose content holds CJK."""
    rows = conn.execute(
        "SELECT (m.thread_id << 32) | m.seq, m.content FROM messages m WHERE m.kind = 'message' "
        "AND m.model_visible = 1 AND m.pending = 0 AND m.superseded_by IS NULL "
        "AND m.id NOT IN (SELECT id FROM literal_backlog)"
    ).fetchall()
    return {int(key) for key, content in rows if has_cjk(str(content or ""))}


def test_the_current_release_database_gets_the_cjk_index_in_place(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with _upgraded(tmp_path, SCHEMA15, caplog) as (box, conn):
        cjk = _indexed(conn, "messages_cjk")
        assert cjk == _cjk_rows(conn) and len(cjk) == 2  # ... every indexed CJK row is in
        for term in (*CJK_TERMS, *TERMS):
            assert_complete(box, term)
        box.store.indexer.drain()
        assert _indexed(conn, "messages_cjk") == _cjk_rows(conn) and len(_cjk_rows(conn)) == 3
        for term in CJK_TERMS:
            assert_complete(box, term)
        assert box.doctor().healthy
    reports = [r for r in caplog.records if hasattr(r, "migration")]
    assert {r.migration for r in reports} == {upgrades.MIGRATION_CJK_INDEX}  # type: ignore[attr-defined]
    assert reports[-1].done == reports[-1].total == 200  # type: ignore[attr-defined]


def test_an_interrupted_cjk_index_migration_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "v15.db"
    shutil.copyfile(SCHEMA15, db)
    monkeypatch.setattr(upgrades, "CJK_ID_RANGE", 50)
    progress = _interrupt(monkeypatch, db, upgrades.MIGRATION_CJK_INDEX, upgrades.CJK_INDEX, 3)
    assert progress == [(upgrades.MIGRATION_CJK_INDEX, 100, 200)]
    with recallbox.open(db) as box:
        box.store.indexer.stop()
        conn = box.store.pool.connection()
        assert _indexed(conn, "messages_cjk") == _cjk_rows(conn)
        for term in CJK_TERMS:
            assert_complete(box, term)
        box.store.indexer.drain()
        assert box.doctor().healthy
