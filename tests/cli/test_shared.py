"""The shared CLI layer: the database table, ``--db`` anywhere, errors as one line or JSON."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.cli import cli
from recallbox.cli.shared import (
    DATABASE_USE,
    ERROR_LINE_MAX_CHARS,
    DbUse,
    clip,
    database_use,
    describe,
    edge_flags,
    one_line,
)

# DESIGN §8, word for word: the commands that create a missing explicit --db, and the others.
DESIGN_CREATES = (
    "init|append|import|hook claude-code|compact|remember|memory import|knowledge sync|code index|"
    "embed|policy quarantine|policy unquarantine|policy exclude|policy include|migrate --to|demo|mcp"
)
DESIGN_REFUSES = (
    "search|search-memory|read|thread|recall|recall-context|resume|expand|stats|policy show|"
    "memory list|memory export|code search|code callers|doctor|decay|redact|purge|backup|"
    "migrate --from|ui"
)
#: Read commands an issue added after DESIGN §8 was written (#11 item 4: `box.callees`).
ISSUE_REFUSES = "code callees"


def command_paths(group: click.Group, prefix: str = "") -> list[str]:
    paths = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            paths.extend(command_paths(command, f"{prefix}{name} "))
        else:
            paths.append(f"{prefix}{name}")
    return paths


def test_the_table_is_design_section_8() -> None:
    creates = set(DESIGN_CREATES.split("|"))
    assert {k for k, v in DATABASE_USE.items() if v is DbUse.CREATES} == creates
    assert {k for k, v in DATABASE_USE.items() if v is DbUse.REQUIRES} == set(
        DESIGN_REFUSES.split("|") + ISSUE_REFUSES.split("|")
    )


def test_every_real_command_declares_how_it_uses_the_database() -> None:
    assert [p for p in command_paths(cli) if database_use(p) is None] == []
    assert database_use("thread show") is DbUse.REQUIRES  # a group's entry covers it
    assert database_use("policy show") is DbUse.REQUIRES
    assert database_use("policy exclude") is DbUse.CREATES


@pytest.mark.parametrize(
    "args",
    [
        ("search", "foo"),
        ("search-memory", "foo"),
        ("read", "m_0123456789abcdef"),
        ("thread", "list"),
        ("thread", "show", "ops"),
        ("policy", "show"),
        ("doctor",),
    ],
)
def test_read_only_commands_refuse_a_missing_explicit_path(
    tmp_path: Path, run, args: tuple[str, ...]
) -> None:
    """Fix: a read-only command no longer creates `typo/x.db` and answers "no hits"."""
    db = tmp_path / "typo" / "x.db"
    r = run("--db", str(db), *args)
    assert (r.code, r.out) == (1, "")
    assert r.error_line == f"no database at {db} (run `recallbox init`)"
    assert not db.exists() and not db.parent.exists()
    j = run(*args, "--db", str(db), "--json")
    assert j.json() == {"error": f"no database at {db} (run `recallbox init`)", "code": 1}


def test_the_environment_path_is_refused_the_same_way(tmp_path: Path, monkeypatch, run) -> None:
    db = tmp_path / "env.db"
    monkeypatch.setenv("RECALLBOX_DB", str(db))
    r = run("search", "foo")
    assert r.code == 1 and r.error_line.startswith("no database at")
    assert run("append", "ops", "user", "hi").code == 0 and db.exists()
    assert run("search", "hi").code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("append", "ops", "user", "hi"),
        ("compact", "ops", "--summary", "s"),
        ("policy", "quarantine", "ops"),
        ("policy", "exclude", "notes.md"),
        ("import", "openai", "missing.json"),
        ("embed", "--all", "--embedder", "hash"),
        ("init",),
    ],
)
def test_writers_create_the_missing_path_and_say_so(
    tmp_path: Path, run, args: tuple[str, ...]
) -> None:
    db = tmp_path / "new" / "x.db"
    r = run("--db", str(db), *args)
    assert db.exists(), r
    assert f"recallbox: created database {db}\n" in r.err


def test_the_default_database_is_created_by_any_command(tmp_home: Path, run) -> None:
    r = run("search", "foo")
    assert (r.code, r.out.strip()) == (0, "no hits")
    assert (tmp_home / "recallbox.db").exists()


def test_an_empty_db_is_a_usage_error(run) -> None:
    for args in (("--db", "", "search", "x"), ("search", "x", "--db", "")):
        r = run(*args)
        assert r.code == 2 and "--db" in r.error_line and "is empty" in r.error_line
        assert run(*args, "--json").json()["code"] == 2


def test_a_directory_as_db_is_refused(tmp_path: Path, run) -> None:
    r = run("--db", str(tmp_path), "init")
    assert r.code == 1 and r.error_line.endswith("is a directory; --db takes a database file")


def test_db_is_accepted_after_any_subcommand(db: str, run) -> None:
    """Fix: `recallbox mcp --db PATH` and friends no longer say "No such option '--db'"."""
    assert run("append", "ops", "user", "deploy billing", "--db", db).code == 0
    assert "deploy billing" in run("thread", "show", "ops", "--db", db).out
    assert run("search", "billing", "--db", db, "--json").json()[0]["channel"] == "ops"
    r = run("--db", db, "thread", "list", "--db", db)
    assert r.code == 0 and "ops" in r.out
    r = run("--db", db, "thread", "list", "--db", db + ".other")
    assert r.code == 2 and "given twice" in r.error_line


def test_a_text_file_as_db_is_one_line_not_a_traceback(tmp_path: Path, run) -> None:
    """Fix: a text file as --db prints one line naming the fix; --json prints the object."""
    bad = tmp_path / "x.db"
    bad.write_text("this is not a database\n", encoding="utf-8")
    for args in (("search", "foo"), ("search-memory", "foo"), ("thread", "list"), ("init",)):
        r = run("--db", str(bad), *args)
        assert r.code == 1 and r.out == ""
        assert "not a recallbox database (check --db / RECALLBOX_DB)" in r.error_line
        j = run("--db", str(bad), *args, "--json")
        assert j.code == 1 and j.json()["code"] == 1 and "check --db" in j.json()["error"]


def test_a_damaged_index_names_the_repair(tmp_path: Path, run) -> None:
    db = tmp_path / "x.db"
    with recallbox.open(db) as box:
        box.append("ops", "user", "deploy pg-primary-9 to staging")
        box.store.indexer.drain()
        conn = box.store.pool.connection()
        for table in ("messages_literal", "messages_words"):  # a search reads either
            conn.execute(f"UPDATE {table}_data SET block = x'0102030405060708' WHERE id > 1")
    r = run("--db", str(db), "search-memory", "pg-primary")
    assert r.code == 1 and "run `recallbox doctor --repair`" in r.error_line


def test_a_path_under_a_file_is_one_line(tmp_path: Path, run) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    r = run("--db", str(blocker / "x.db"), "init")
    assert (r.code, r.out) == (1, "") and r.error_line.startswith("cannot create the database")
    assert "is a file, not a folder" in r.error_line and "--db" in r.error_line


def test_debug_shows_the_traceback_on_stderr(tmp_path: Path, monkeypatch) -> None:
    from click.testing import CliRunner

    bad = tmp_path / "x.db"
    bad.write_text("not a database", encoding="utf-8")
    result = CliRunner().invoke(cli, ["--debug", "--db", str(bad), "search", "x"])
    assert result.exit_code == 1 and "Traceback (most recent call last)" in result.stderr
    monkeypatch.setenv("RECALLBOX_DEBUG", "1")
    result = CliRunner().invoke(cli, ["--db", str(bad), "search", "x"])
    assert "Traceback (most recent call last)" in result.stderr


def test_an_interrupt_exits_130(db: str, monkeypatch, run) -> None:
    def interrupted(*_args: object, **_kwargs: object) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr(recallbox.Box, "search_memory", interrupted)
    r = run("--db", db, "search-memory", "x")
    assert (r.code, r.err.strip()) == (130, "interrupted")


def test_huge_arguments_are_cut_in_error_lines(db: str, run) -> None:
    big = "x" * 100_000
    for args in (("thread", "show", big), ("append", "t", big, "hi"), ("read", big, "--json")):
        r = run("--db", db, *args)
        assert r.code in (1, 2) and len(r.out + r.err) < 2 * ERROR_LINE_MAX_CHARS


def test_edge_flags_stop_at_the_end_of_options() -> None:
    assert edge_flags(["search", "x", "--json"]).as_json
    assert not edge_flags(["search", "--", "--json"]).as_json
    assert edge_flags(["--debug", "x"]).debug


@given(st.text(max_size=2_000))
def test_one_line_is_one_bounded_line(text: str) -> None:
    line = one_line(text)
    assert "\n" not in line and len(line) <= ERROR_LINE_MAX_CHARS
    if len(" ".join(text.split())) <= ERROR_LINE_MAX_CHARS:
        assert line == " ".join(text.split())
    assert len(clip(text)) <= 80


def test_describe_maps_library_errors_to_exit_codes() -> None:
    assert describe(recallbox.InvalidArgument("bad role"))[1] == 2
    assert describe(recallbox.NotFound("no such id"))[1] == 1
    assert describe(recallbox.StoreUnavailable("gone"))[1] == 1
    assert describe(recallbox.SchemaMismatch("newer"))[1] == 1
    assert describe(recallbox.DependencyMissing("pip install"))[1] == 1
    group = ExceptionGroup("tasks", [recallbox.NotFound("inner")])
    assert describe(group) == ("inner", 1)
    assert describe(KeyboardInterrupt())[1] == 130
    message, code = describe(RuntimeError("boom\nsecond line"))
    assert code == 1 and "\n" not in message and "RECALLBOX_DEBUG=1" in message
    assert json.dumps({"error": message})  # always serialisable


HOSTILE = st.one_of(
    st.text(max_size=300),
    st.sampled_from(["", "-", "--", "--json", "\x00", "\ud800", "召回", "m_0123456789abcdef"]),
)


@settings(max_examples=60)
@given(
    command=st.sampled_from(
        [
            ("read", "--json", "{}"),
            ("read", "--json", "--offset", "3", "{}"),
            ("thread", "show", "--json", "{}"),
            ("search-memory", "--json", "{}"),
            ("search-memory", "--json", "x", "--channel", "{}"),
            ("search", "--json", "--domain", "{}", "{}"),
            ("append", "--json", "{}", "user", "{}"),
            ("policy", "exclude", "--json", "{}"),
        ]
    ),
    value=HOSTILE,
)
def test_any_argument_gives_a_result_or_one_json_error(
    tmp_path_factory: pytest.TempPathFactory, run, command: tuple[str, ...], value: str
) -> None:
    """Whatever the value, `--json` prints one JSON document (a result or the error object)
    and the exit code is documented; there is never a traceback."""
    db = str(tmp_path_factory.getbasetemp() / "hostile.db")
    args = [part.replace("{}", value) for part in command]
    result = run("--db", db, *args)
    assert result.code in (0, 1, 2)
    document = json.loads(result.out)
    if result.code != 0:
        assert document == {"error": document["error"], "code": result.code}
        assert "\n" not in document["error"] and len(document["error"]) <= ERROR_LINE_MAX_CHARS
