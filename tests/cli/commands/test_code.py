"""``code index``, ``code search``, ``code callers`` and ``code callees`` through the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "code" / "fixtures"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return shutil.copytree(FIXTURES / "python_repo", tmp_path / "shop_repo")


def test_index_search_and_callers(tmp_path: Path, shop: Path, run) -> None:
    db = str(tmp_path / "new" / "code.db")
    r = run("--db", db, "code", "index", str(shop))  # creates its database
    assert r.code == 0 and "created database" in r.err
    assert r.out.startswith(f"indexed {shop} as scope 'shop_repo'")
    assert "5 parsed" in r.out and "17 symbol(s), 20 edge(s)" in r.out
    again = run("--db", db, "code", "index", str(shop), "--project", "shop_repo", "--json")
    report = again.json()
    assert (report["files_parsed"], report["files_unchanged"], report["scope"]) == (0, 5, "shop_repo")
    r = run("--db", db, "code", "search", "Model.save")
    assert r.code == 0 and r.out.startswith("1. ") and "shop/base.py::Model.save [shop_repo] shop/base.py:19-20" in r.out
    assert "   callers: shop/cart.py::Cart.add" in r.out
    hits = run("--db", db, "code", "search", "save", "--scope", "shop_repo", "--json").json()
    assert hits[0]["id"] == "shop/base.py::Model.save" and hits[0]["scope"] == "shop_repo"
    r = run("--db", db, "code", "callers", "shop/base.py::Model.save", "--depth", "2")
    assert r.out.splitlines()[0] == "1. depth 1 shop/cart.py::Cart.add [shop_repo] shop/cart.py:11-14"
    assert "2. depth 2 main.py::checkout" in r.out
    callers = run("--db", db, "code", "callers", "shop/base.py::Model.save", "--json").json()
    assert [c["id"] for c in callers] == ["shop/cart.py::Cart.add"]
    r = run("--db", db, "code", "callers", "main.py::checkout")
    assert r.code == 0 and r.out.strip() == "no callers of main.py::checkout"
    assert run("--db", db, "code", "search", "nothing-like-this").out.strip() == "no hits"


def test_callees(tmp_path: Path, shop: Path, run) -> None:
    db = str(tmp_path / "callees.db")
    run("--db", db, "code", "index", str(shop))
    r = run("--db", db, "code", "callees", "main.py::checkout")
    assert r.code == 0 and r.out.splitlines()[0] == "1. shop/cart.py::Cart [shop_repo] shop/cart.py:5-21"
    assert r.out.splitlines()[1].startswith("    class Cart(Model)")
    assert "2. shop/cart.py::Cart.add [shop_repo] shop/cart.py:11-14" in r.out
    callees = run("--db", db, "code", "callees", "main.py::checkout", "--json").json()
    assert [c["id"] for c in callees] == ["shop/cart.py::Cart", "shop/cart.py::Cart.add"]
    r = run("--db", db, "code", "callees", "shop/base.py::Model.validate")
    assert r.code == 0 and r.out.strip() == "no resolved calls from shop/base.py::Model.validate"
    r = run("--db", db, "code", "callees", "nope::x")
    assert r.code == 1 and "unknown symbol id 'nope::x'" in r.error_line


def test_a_changed_file_is_flagged_stale(tmp_path: Path, shop: Path, run) -> None:
    db = str(tmp_path / "c.db")
    run("--db", db, "code", "index", str(shop))
    with (shop / "shop" / "pricing.py").open("a", encoding="utf-8") as handle:
        handle.write("\n# changed\n")
    r = run("--db", db, "code", "search", "price_of")
    assert "STALE (changed since indexed; run `recallbox code index`)" in r.out.splitlines()[0]
    r = run("--db", db, "code", "index", str(shop))
    assert "1 parsed, 4 unchanged" in r.out
    assert "STALE" not in run("--db", db, "code", "search", "price_of").out


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("code", "index", "does-not-exist"), 2, "not a directory"),
        (("code", "index", ".", "--scope", "a", "--project", "b"), 2, "not both"),
        (("code", "index", ".", "--scope", " "), 2, "non-empty project name"),
        (("code", "callers", "nope::x"), 1, "unknown symbol id 'nope::x'"),
        (("code", "callers", "x", "--depth", "6"), 2, "not in the range"),
    ],
)
def test_errors(db: str, run, args: tuple[str, ...], code: int, says: str) -> None:
    r = run("--db", db, *args)
    assert r.code == code and says in r.error_line
    r = run("--db", db, *args, "--json")
    assert r.code == code and says in r.json()["error"]


@pytest.mark.parametrize("command", ["search", "callers", "callees"])
def test_reading_commands_refuse_a_missing_database(tmp_path: Path, run, command: str) -> None:
    db = tmp_path / "typo" / "x.db"
    r = run("--db", str(db), "code", command, "x")
    assert r.code == 1 and "no database at" in r.error_line and not db.exists()


def test_indexing_progress_never_reaches_stdout(tmp_path: Path, shop: Path, run) -> None:
    r = run("--db", str(tmp_path / "p.db"), "code", "index", str(shop), "--json")
    assert r.code == 0 and r.out.lstrip().startswith("{") and r.json()["total_symbols"] == 17


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("does-not-exist",), "not a directory"),
        (("{file}",), "is a file"),
        ((".", "--scope", " "), "non-empty project name"),
        ((".", "--project", "x" * 201), "non-empty project name"),
    ],
)
def test_index_checks_its_arguments_before_creating_the_database(
    tmp_path: Path, run, args: tuple[str, ...], says: str
) -> None:
    (tmp_path / "a_file.py").write_text("x = 1\n")
    db = tmp_path / "new" / "code.db"
    given = [arg.format(file=tmp_path / "a_file.py") for arg in args]
    for extra in ([], ["--json"]):
        r = run("--db", str(db), "code", "index", *given, *extra)
        assert r.code == 2 and says in (r.json()["error"] if extra else r.error_line)
        assert not db.exists() and not db.parent.exists()


def test_indexing_draws_a_progress_bar_on_a_terminal(tmp_path: Path, shop: Path, run_script) -> None:
    # Rich draws live bars only on an interactive terminal; these make the pipe count as one.
    terminal = {"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"}
    assert run_script("--db", str(tmp_path / "t.db"), "init").code == 0  # no migration bars below
    r = run_script("--db", str(tmp_path / "t.db"), "code", "index", str(shop), env=terminal)
    assert r.code == 0 and r.out.startswith(f"indexed {shop} as scope 'shop_repo'")
    assert "\x1b[" not in r.out  # the bar is on stderr only
    assert "\x1b[?25l" in r.err and ("indexing" in r.err or ".py" in r.err), r.err
    quiet = run_script("--db", str(tmp_path / "t.db"), "code", "index", str(shop), "--json", env=terminal)
    assert quiet.code == 0 and "indexing" not in quiet.err and ".py" not in quiet.err
