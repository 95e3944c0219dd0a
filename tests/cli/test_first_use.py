"""#17 acceptance, in one table: every bad path and bad input the first-use report names gives
one line naming the fix (no traceback), the documented exit code, and under ``--json`` the
error object ``{"error": …, "code": …}`` on stdout."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import recallbox
from recallbox.storage.sqlite.literal_index import LITERAL_TABLE
from recallbox.storage.sqlite.literal_words import WORDS_TABLE

NOT_A_DB = "this is not a database\n"
TRACEBACK = "Traceback (most recent call last)"
UNWRITABLE = Path("/proc/recallbox-first-use/x.db")

# (item, database, args, exit code, words of the fix, whether the command takes --json).
# database: "good" an initialised one, "notadb" a text file, "dir" a directory, "typo" a path
# under a missing folder, "unwritable" one in /proc, "damaged" one whose literal (trigram)
# index is broken, "" the empty --db.
CASES = [
    ("2", "notadb", ("search", "foo"), 1, "not a recallbox database", True),
    ("2", "notadb", ("search-memory", "foo"), 1, "not a recallbox database", True),
    ("2", "notadb", ("thread", "list"), 1, "not a recallbox database", True),
    ("2", "dir", ("search", "foo"), 1, "--db takes a database file", True),
    ("2", "unwritable", ("init",), 1, "choose a writable location", True),
    ("2", "unwritable", ("append", "ops", "user", "hi"), 1, "choose a writable location", True),
    ("2", "damaged", ("search-memory", "pg-primary"), 1, "run `recallbox doctor --repair`", True),
    ("2", "good", ("mcp", "--http", "--port", "99999"), 2, "--port", False),
    ("2", "notadb", ("mcp",), 1, "not a recallbox database", False),
    ("3", "typo", ("search", "foo"), 1, "(run `recallbox init`)", True),
    ("3", "typo", ("search-memory", "foo"), 1, "(run `recallbox init`)", True),
    ("3", "typo", ("read", "m_1"), 1, "(run `recallbox init`)", True),
    ("3", "typo", ("policy", "show"), 1, "(run `recallbox init`)", True),
    ("3", "typo", ("doctor",), 1, "(run `recallbox init`)", True),
    ("3", "", ("search", "foo"), 2, "omit --db for the default database", True),
    ("7", "good", ("mcp", "--host", "0.0.0.0"), 2, "--host needs --http", False),
    ("10", "good", ("read", "m_1", "--offset", "-1"), 2, "--offset", True),
    ("10", "good", ("search", "x", "--limit", "0"), 2, "--limit", True),
    ("10", "good", ("search", "x", "--domain", "bogus"), 2, "unknown domain 'bogus'", True),
    ("10", "good", ("append", "", "user", "hi"), 2, "channel must be a non-empty", True),
    ("10", "good", ("append", "ops", "user", "hi", "--metadata", "[1,2]"), 2, "mapping", True),
    ("11", "good", ("compact", "ops", "--summary", ""), 2, "summary is empty", True),
    ("11", "good", ("compact", "ops", "--summary", " \n "), 2, "summary is empty", True),
]


def database(kind: str, tmp_path: Path) -> str:
    path = tmp_path / "x.db"
    if kind == "good":
        with recallbox.open(path) as box:
            box.append("ops", "user", "deploy pg-primary-9 to staging")
    elif kind == "notadb":
        path.write_text(NOT_A_DB, encoding="utf-8")
    elif kind == "dir":
        path.mkdir()
    elif kind == "unwritable":  # a location no one can write to, root included (tests run as root)
        path = UNWRITABLE
    elif kind == "typo":
        path = tmp_path / "typo" / "x.db"
    elif kind == "damaged":
        with recallbox.open(path) as box:
            box.append("ops", "user", "deploy pg-primary-9 to staging")
            box.store.indexer.drain()  # the message is in the literal index, not its backlog
            conn = box.store.pool.connection()
            # its structure record (id 10) and leaves; id 1 (the averages) stays; the word
            # index too: a search reads whichever of the two the term needs
            for table in (LITERAL_TABLE, WORDS_TABLE):
                conn.execute(f"UPDATE {table}_data SET block = x'0102030405060708' WHERE id > 1")
    else:
        return ""
    return str(path)


def one_error_line(result: Any) -> str:
    """The run printed exactly one ``Error: …`` line (click's usage hint may precede it)."""
    assert TRACEBACK not in result.out + result.err
    assert result.out == ""
    lines = [line for line in result.err.splitlines() if line.strip()]
    assert lines and lines[-1].startswith("Error: "), result.err
    assert all(not line.startswith("Error: ") for line in lines[:-1])
    assert all(line.startswith(("Usage: ", " ", "Try ")) for line in lines[:-1]), result.err
    return lines[-1].removeprefix("Error: ")


@pytest.mark.parametrize(
    ("item", "kind", "args", "code", "fix", "takes_json"),
    CASES,
    ids=[f"item{c[0]}-{c[1] or 'empty'}-{'-'.join(c[2])[:40]}" for c in CASES],
)
def test_each_bad_path_and_input_is_one_line_the_exit_code_and_a_json_error(
    tmp_path: Path,
    run,
    item: str,
    kind: str,
    args: tuple[str, ...],
    code: int,
    fix: str,
    takes_json: bool,
) -> None:
    db = database(kind, tmp_path)
    result = run("--db", db, *args)
    assert result.code == code, result
    assert fix in one_error_line(result)
    if takes_json:
        as_json = run("--db", db, *args, "--json")
        assert as_json.code == code and TRACEBACK not in as_json.err
        document = as_json.json()
        assert document == {"error": document["error"], "code": code}
        assert fix in document["error"] and "\n" not in document["error"]
    if kind == "typo":
        assert not (tmp_path / "typo").exists()  # a reader never creates the database


def test_writers_and_mcp_create_the_database_a_reader_refuses(tmp_path: Path, run) -> None:
    """#17 item 3, the other half: a writer creates the missing path and says so on stderr."""
    db = tmp_path / "new" / "x.db"
    r = run("--db", str(db), "append", "ops", "user", "hi")
    assert r.code == 0 and db.exists() and f"created database {db}" in r.err


HUGE_CHARS = 100_000
OUTPUT_MAX_CHARS = 12_000


@pytest.mark.parametrize(
    "args",
    [
        ("recall", "{}", "--json"),
        ("recall", "{}"),
        ("search-memory", "{}", "--json"),
        ("search", "{}", "--json"),
        ("read", "{}", "--json"),
        ("recall-context", "{}", "--json"),
        ("recall-context", "x", "--source", "{}", "--json"),
        ("code", "search", "{}", "--json"),
        ("thread", "show", "{}", "--json"),
    ],
)
def test_a_huge_argument_never_makes_an_output_over_the_cap(
    tmp_path: Path, run, args: tuple[str, ...]
) -> None:
    """cli-smoke "OVER CAP": `recall QUERY --json` echoed a 100 000-character query whole."""
    db = database("good", tmp_path)
    huge = "x" * HUGE_CHARS
    result = run("--db", db, *(huge if a == "{}" else a for a in args))
    assert result.code in (0, 1) and len(result.out) <= OUTPUT_MAX_CHARS


def test_the_demo_shows_no_message_twice(tmp_path: Path, run) -> None:
    """#17 acceptance (item 6's fix, on main): the demo's search_memory shows each message in
    one part only — the other-memory part leaves out what the literal part shows."""
    r = run("demo", "--db", str(tmp_path / "demo.db"), "--json")
    assert r.code == 0, r
    literal, _, other = r.json()["search_memory"]["result"].partition("--- other memory ---")
    ids = [set(re.findall(r"\[message_id=(m_[0-9a-f]+)", part)) for part in (literal, other)]
    assert ids[0] and not ids[0] & ids[1]
