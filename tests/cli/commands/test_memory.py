"""``remember``, ``memory list|export|import``, ``decay``, ``recall-context``, ``knowledge sync``
and ``search --domain memory|knowledge`` through the real CLI."""

from __future__ import annotations

from pathlib import Path

RUNBOOK = (
    "# Runbook\n\n## Rolling back\n- make rollback ENV=staging\n- check the pods\n\n## Other\nx\n"
)


def test_remember_prints_the_key_and_memory_list_shows_the_lifecycle(db: str, run) -> None:
    r = run("--db", db, "remember", "Run migrations before deploying billing", "--type", "pitfall")
    assert (r.code, r.out) == (0, "PIT01\n")
    r = run("--db", db, "remember", "Quote the error", "--type", "principle", "--title", "Evidence", "--json")  # fmt: skip
    assert r.json()["key"] == "PRI01" and r.json()["evergreen"] is True
    lines = run("--db", db, "memory", "list").out.splitlines()
    assert lines[0].startswith("PRI01   principle  active") and lines[0].endswith("Evidence")
    assert "[evergreen]" in lines[0] and lines[1].endswith(
        "Run migrations before deploying billing"
    )
    assert [e["key"] for e in run("--db", db, "memory", "list", "--json").json()["entries"]] == [
        "PRI01",
        "PIT01",
    ]
    assert run("--db", db, "memory", "list", "--state", "dormant").out == "no memory entries\n"
    r = run("--db", db, "remember", "x", "--type", "lesson")
    assert r.code == 2


def test_an_excluded_memory_md_lists_metadata_never_text(db: str, run) -> None:
    run("--db", db, "remember", "the vault canary hunter2-unique")
    run("--db", db, "policy", "exclude", "MEMORY.md")
    r = run("--db", db, "memory", "list")
    assert "hunter2" not in r.out and r.out.rstrip().endswith("excluded source")
    entry = run("--db", db, "memory", "list", "--json").json()["entries"][0]
    assert entry["notice"] == "excluded source" and "body" not in entry and "title" not in entry
    r = run("--db", db, "recall-context", "vault canary")
    assert (r.code, r.out) == (0, "recall_context: source not available\n")
    assert run("--db", db, "recall-context", "x", "--source", "nope.md").out == r.out


def test_export_edit_import_round_trip(db: str, run, tmp_path: Path) -> None:
    run("--db", db, "remember", "Run migrations first", "--type", "pitfall", "--title", "Order")
    path = tmp_path / "MEMORY.md"
    r = run("--db", db, "memory", "export", str(path))
    assert r.out == f"exported 1 memory entries to {path}\n"
    text = path.read_text(encoding="utf-8")
    assert run("--db", db, "memory", "export").out == text  # stdout without PATH
    path.write_text(text.replace("**Order**", "**Order matters**"), encoding="utf-8")
    r = run("--db", db, "memory", "import", str(path))
    assert r.code == 0 and "  updated PIT01: title" in r.out
    assert run("--db", db, "memory", "import", str(path), "--json").json()["unchanged"] == 1
    path.write_text(text.replace("ref_count=0", "ref_count=x"), encoding="utf-8")
    r = run("--db", db, "memory", "import", str(path))
    line = next(n for n, t in enumerate(text.split("\n"), start=1) if "key=PIT01" in t)
    assert r.code == 2 and f"line {line}: malformed metadata comment" in r.error_line
    fresh = str(tmp_path / "fresh.db")
    assert run("--db", fresh, "memory", "import", "-", input=text).code == 0
    assert run("--db", fresh, "memory", "export").out == text


def test_decay_reports_every_transition(db: str, run) -> None:
    run("--db", db, "remember", "an idle lesson")
    r = run("--db", db, "decay", "--dry-run", "--today", "2999-01-01")
    assert r.code == 0 and "(dry run: nothing written)" in r.out
    assert "  GDL01: active -> dormant on 2999-01-01 (idle" in r.out
    assert run("--db", db, "memory", "list", "--json").json()["entries"][0]["state"] == "active"
    report = run("--db", db, "decay", "--today", "2999-01-01", "--json").json()
    assert report["transitions"][0]["to_state"] == "dormant" and report["dry_run"] is False
    assert run("--db", db, "decay", "--today", "2999-01-01", "--json").json()["transitions"] == []
    r = run("--db", db, "decay", "--today", "soon")
    assert r.code == 2 and "is not a date" in r.error_line


def test_knowledge_sync_recall_context_and_search(db: str, run, tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "runbook.md").write_text(RUNBOOK, encoding="utf-8")
    (notes / "blob.md").write_bytes(b"\x00binary")
    r = run("--db", db, "knowledge", "sync", str(notes), "--scope", "ops")
    assert r.code == 0 and "into ops: 2 file(s) seen, 1 added" in r.out
    assert "  skipped blob.md: binary (holds a NUL byte)" in r.out
    again = run("--db", db, "knowledge", "sync", str(notes), "--scope", "ops", "--json").json()
    assert (again["files_unchanged"], again["sections_unchanged"]) == (1, 2)
    r = run("--db", db, "recall-context", "rollback pods", "--source", "runbook.md")
    assert r.out.splitlines()[1:] == ["## Rolling back", "", "- make rollback ENV=staging", "- check the pods"]  # fmt: skip
    assert run("--db", db, "recall-context", "kangaroo", "--source", "runbook.md").out == (
        "(no entry of this source shares a word with the query)\n"
    )
    data = run("--db", db, "recall-context", "rollback", "--source", "runbook.md", "--json").json()
    assert data["allowed"] is True and data["hit_layer"] == "keyword"
    hits = run(
        "--db", db, "search", "rollback", "--domain", "knowledge", "--scope", "ops", "--json"
    )
    assert [h["source"] for h in hits.json()] == ["runbook.md"] and hits.json()[0]["scope"] == "ops"
    assert run("--db", db, "search", "rollback", "--domain", "knowledge", "--scope", "web").out == (
        "no hits\n"
    )
    run("--db", db, "remember", "roll back with make rollback")
    r = run("--db", db, "search", "rollback", "--domain", "memory")
    assert r.out.startswith("1. ") and "GDL01 [MEMORY.md]" in r.out
    missing = run("--db", db, "knowledge", "sync", str(tmp_path / "nope"))
    assert (missing.code, missing.err) == (1, f"Error: {missing.error_line}\n")
    assert "no directory at" in missing.error_line


def test_reading_commands_refuse_a_missing_database(run, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.db")
    for args in (("memory", "list"), ("memory", "export"), ("decay",), ("recall-context", "x")):
        r = run("--db", missing, *args)
        assert r.code == 1 and "no database at" in r.error_line
    assert run("--db", missing, "remember", "a lesson").code == 0  # it stores content: created


def test_a_huge_scope_is_refused_in_one_short_line(db: str, run, tmp_path: Path) -> None:
    """Fix (cli-smoke, OVER CAP): `knowledge sync --scope <100 000 characters>` echoed the whole
    scope back; a scope is a project name of at most 200 characters, as in the code domain."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("## A\nhello\n", encoding="utf-8")
    for extra in ((), ("--json",)):
        r = run("--db", db, "knowledge", "sync", str(notes), "--scope", "x" * 100_000, *extra)
        assert r.code == 2 and len(r.out) + len(r.err) < 400
        assert "at most 200 characters (got 100000)" in (r.json()["error"] if extra else r.error_line)
    assert run("--db", db, "knowledge", "sync", str(notes), "--scope", "x" * 200).code == 0
