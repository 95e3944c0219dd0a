"""``doctor`` and ``demo`` through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

import recallbox


def test_doctor_exit_one_when_unhealthy(tmp_path: Path, run) -> None:
    db = tmp_path / "x.db"
    with recallbox.open(db) as box:
        box.append("t", "user", "alpha beta")
        box.store.pool.connection().execute("DROP TRIGGER messages_fts_ai")
    r = run("--db", str(db), "doctor")
    assert r.code == 1 and "UNHEALTHY" in r.out
    r = run("--db", str(db), "doctor", "--json")
    assert r.code == 1 and r.json()["healthy"] is False  # a report, not an error object
    r = run("--db", str(db), "doctor", "--repair")
    assert r.code == 0 and "healthy" in r.out


def test_demo_on_a_fresh_path(tmp_path: Path, run) -> None:
    db = tmp_path / "demo" / "demo.db"
    r = run("demo", "--db", str(db), "--json")
    assert r.code == 0, r
    data = r.json()
    assert data["db"] == str(db) and data["replaced_previous"] is False
    assert data["thread"]["generation_count"] == 2 and data["indexes_healthy"] is True
    assert set(data["notes"]) == {"agent-memory.md", "deploy-runbook.md"}
    found = data["search_memory"]
    assert found["query"] == "pg-replica-1" and "generation=1 role=tool" in found["result"]
    assert data["ui"] == f"recallbox ui --db {db}"  # #20: the inspector command for it
    r = run("--db", str(db), "demo")
    assert r.code == 1 and "needs a fresh database path" in r.error_line


def test_demo_searches_the_compacted_thread(tmp_path: Path, run) -> None:
    r = run("demo", "--db", str(tmp_path / "d.db"))
    assert r.code == 0
    assert r.out.splitlines()[0] == f"demo database: {tmp_path / 'd.db'} (kept)"
    assert "full-text indexes: healthy" in r.out  # the original lines are still there
    assert "search_memory('pg-replica-1', channel='demo:deploy-staging')" in r.out
    assert "FATAL could not connect to server: connection refused (host pg-replica-1" in r.out
    # #20: the demo ends with the inspector command for its database
    assert r.out.rstrip("\n").splitlines()[-1] == f"browse it: recallbox ui --db {tmp_path / 'd.db'}"


def test_demo_keeps_one_database_and_leaves_no_temporary_folder(
    tmp_path: Path, tmp_home: Path, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    """Fix: `demo` no longer leaves a `recallbox-demo-*` temporary folder behind unannounced:
    it keeps one database under $RECALLBOX_HOME, says where, and replaces it next time."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setenv("RECALLBOX_DB", str(tmp_path / "mine.db"))  # never loaded into yours
    kept = tmp_home / "demo" / "demo.db"
    r = run("demo")
    assert r.code == 0 and r.out.splitlines()[0] == f"demo database: {kept} (kept)"
    r = run("demo")
    assert r.out.splitlines()[0] == (
        f"demo database: {kept} (kept; the previous demo database was replaced)"
    )
    with recallbox.open(kept) as box:
        assert [t.message_count for t in box.threads()] == [16]  # one sample, not two
    assert list(tmp.iterdir()) == [] and not (tmp_path / "mine.db").exists()


@pytest.mark.parametrize(
    "location", ["postgresql://me@127.0.0.1:9/x", "postgres://h/x", ":memory:"]
)
def test_demo_refuses_a_url_and_makes_no_file(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    """The demo makes a fresh SQLite file: a URL (or ``:memory:``) given to ``--db`` is a usage
    error, where it once made a SQLite file under a folder named ``postgresql:`` here."""
    monkeypatch.chdir(tmp_path)
    r = run("demo", "--db", location, "--json")
    assert r.code == 2 and r.json()["error"].startswith("the demo makes a fresh SQLite file")
    r = run("--db", location, "demo")
    assert r.code == 2 and "--db takes a path here" in r.error_line
    assert list(tmp_path.iterdir()) == []
