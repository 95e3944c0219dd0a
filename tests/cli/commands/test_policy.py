"""``policy show|quarantine|unquarantine|exclude|include`` through the real CLI."""

from __future__ import annotations

from pathlib import Path

import recallbox
from backends import DbLocation


def test_policy_round_trip(db: str, run) -> None:
    """Fix: the privacy policy can be read and changed from the CLI."""
    run("--db", db, "append", "secret:1", "user", "the vault password is hunter2-unique")
    assert run("--db", db, "policy", "show").out.splitlines() == [
        "quarantined threads:",
        "  (none)",
        "excluded sources:",
        "  (none)",
    ]
    r = run("--db", db, "policy", "quarantine", "secret:1")
    assert (r.code, r.out) == (0, "quarantined secret:1\n")
    r = run("--db", db, "policy", "exclude", "./Notes/Private.MD", "--json")
    # kept whole, as its normalised path (DESIGN §5: a path matches documents by path)
    assert r.json() == {"quarantined": ["secret:1"], "excluded_sources": ["notes/private.md"]}
    assert run("--db", db, "policy", "show").out.splitlines() == [
        "quarantined threads:",
        "  secret:1",
        "excluded sources:",
        "  notes/private.md",
    ]
    assert "No matches" in run("--db", db, "search-memory", "hunter2-unique").out
    assert run("--db", db, "policy", "unquarantine", "secret:1").out == "released secret:1\n"
    r = run("--db", db, "policy", "include", "private.md")  # another exclusion: lifts nothing
    assert (r.code, r.out) == (
        0,
        "nothing to include: private.md is not excluded; excluded: notes/private.md\n",
    )
    assert run("--db", db, "policy", "show", "--json").json()["excluded_sources"] == [
        "notes/private.md"
    ]
    r = run("--db", db, "policy", "include", "notes/private.md")
    assert r.out == "included notes/private.md\n"
    assert run("--db", db, "policy", "show", "--json").json() == {
        "quarantined": [],
        "excluded_sources": [],
    }
    assert "hunter2-unique" in run("--db", db, "search-memory", "hunter2-unique").out


def test_policy_errors(db: str, tmp_path: Path, run) -> None:
    r = run("--db", db, "policy", "unquarantine", "nobody")
    assert r.code == 1 and "unknown channel" in r.error_line
    r = run("--db", db, "policy", "exclude", "..", "--json")
    assert r.code == 2 and "not a usable source name" in r.json()["error"]
    r = run("--db", str(tmp_path / "none.db"), "policy", "show")
    assert r.code == 1 and r.error_line.startswith("no database at")


def test_policy_changes_create_the_database(db_location: DbLocation, tmp_path: Path, run) -> None:
    db = db_location("new")
    assert run("--db", str(db), "policy", "quarantine", "later:1").code == 0
    with recallbox.open(db) as box:
        assert box.policy().quarantined == ("later:1",)


def test_include_says_when_nothing_matched(db: str, run) -> None:
    """Fix (#17 leftover): `policy include NAME` when NAME is not excluded says so instead of
    "included NAME"; the Python verb says whether it lifted anything."""
    r = run("--db", db, "policy", "include", "never-excluded.jsonl")
    assert r.code == 0
    assert r.out == "nothing to include: never-excluded.jsonl is not excluded; excluded: (none)\n"
    with recallbox.open(db) as box:
        box.exclude_source("a.jsonl")
        assert box.include_source("b.jsonl") is False
        assert box.include_source("A.jsonl") is True  # names are casefolded
        assert box.include_source("a.jsonl") is False
