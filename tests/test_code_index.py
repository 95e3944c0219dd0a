"""``box.index_code`` end to end: the report, incremental re-indexing, staleness, deletions,
the privacy gate, recallbox's own source, and searching without the ``code`` extra."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.code import parse_repository, resolve_edges
from recallbox.domains.base import SearchContext
from recallbox.domains.registry import get_domain
from recallbox.storage.base import SearchFilter, Store
from recallbox.text.fts_query import build_fts_query

FIXTURES = Path(__file__).resolve().parent / "code" / "fixtures"
SRC = Path(__file__).resolve().parents[1] / "src"
EdgeKey = tuple[str, int]
EdgeValue = tuple[str, str, str, str | None, str]


def repo(tmp_path: Path, name: str = "python_repo") -> Path:
    return shutil.copytree(FIXTURES / name, tmp_path / name)


def ids(hits: list[recallbox.Hit]) -> list[str]:
    return [hit.id for hit in hits]


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def test_the_first_index_reports_what_it_stored(box: recallbox.Box, tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "blob.py").write_bytes(b"\x00\x01binary")
    report = box.index_code(root)
    assert (report.scope, report.root) == ("python_repo", str(root.resolve()))
    assert (report.files_seen, report.files_parsed, report.files_unchanged) == (6, 5, 0)
    assert report.skipped == {"binary": 1}
    assert (report.total_files, report.total_symbols, report.total_edges) == (5, 17, 20)
    assert report.full_resolution and report.commit is None
    again = box.index_code(root)
    assert (again.files_parsed, again.files_unchanged, again.total_symbols) == (0, 5, 17)
    assert not again.full_resolution and again.edges_updated == 0
    assert box.index_code(root, scope="Shop").scope == "Shop"


def test_the_commit_is_recorded_when_the_root_is_a_git_work_tree(
    box: recallbox.Box, tmp_path: Path
) -> None:
    root = repo(tmp_path)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n", encoding="utf-8")
    assert box.index_code(root).commit == "0123456789abcdef0123456789abcdef01234567"
    assert [s.commit for s in box.store.code_scopes()] == ["0123456789abcdef0123456789abcdef01234567"]


def test_an_edit_reparses_only_that_file_and_the_stale_flag_follows(
    box: recallbox.Box, tmp_path: Path
) -> None:
    root = repo(tmp_path)
    box.index_code(root)
    append(root / "shop" / "pricing.py", "\n\ndef discount(item):\n    return price_of(item) * 0.9\n")
    flags = {hit.id: hit.stale for hit in box.search("price", domain="code")}
    assert flags["shop/pricing.py::price_of"] is True
    assert not any(stale for hit_id, stale in flags.items() if not hit_id.startswith("shop/pricing.py"))
    report = box.index_code(root)
    assert (report.files_parsed, report.files_unchanged, report.files_deleted) == (1, 4, 0)
    assert not report.full_resolution  # only symbols and calls changed
    assert box.search("price_of", domain="code")[0].stale is False
    assert ids(box.callers("shop/pricing.py::price_of")) == [
        "shop/cart.py::Cart.total.line_total", "shop/pricing.py::discount",
    ]  # fmt: skip


def test_a_touched_file_is_not_stale_and_is_not_reparsed(box: recallbox.Box, tmp_path: Path) -> None:
    root = repo(tmp_path)
    box.index_code(root)
    target = root / "shop" / "base.py"
    os.utime(target, ns=(1_000_000_000, 1_000_000_000))
    assert all(not hit.stale for hit in box.search("Model", domain="code"))  # hashed: same text
    report = box.index_code(root)
    assert report.files_parsed == 0
    stored = next(g.file for g in box.store.code_graph("python_repo") if g.file.path == "shop/base.py")
    assert stored.mtime_ns == 1_000_000_000  # restamped: the next check needs no hash


def test_a_deleted_file_drops_its_symbols_and_edges(box: recallbox.Box, tmp_path: Path) -> None:
    root = repo(tmp_path)
    box.index_code(root)
    (root / "shop" / "pricing.py").unlink()
    assert box.search("price_of", domain="code")[0].stale is True  # gone from disk: stale
    report = box.index_code(root)
    assert (report.files_deleted, report.total_files) == (1, 4) and report.full_resolution
    assert "shop/pricing.py::price_of" not in ids(box.search("price_of", domain="code"))
    with pytest.raises(recallbox.NotFound):
        box.callers("shop/pricing.py::price_of")
    assert box.callees("shop/cart.py::Cart.total.line_total") == []
    assert all(not path.startswith("shop/pricing.py") for path in box.store.code_call_edges("python_repo"))


def test_a_failed_file_is_reported_and_the_rest_indexed(box: recallbox.Box, tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "broken.py").write_text("def ok():\n    pass\n\nclass (:\n", encoding="utf-8")
    report = box.index_code(root)
    assert [f.path for f in report.failed] == ["broken.py"] and report.files_parsed == 6
    assert "broken.py::ok" in ids(box.search("ok", domain="code"))


def test_bad_paths_and_scopes_are_refused(box: recallbox.Box, tmp_path: Path) -> None:
    (tmp_path / "file.py").write_text("x = 1\n", encoding="utf-8")
    for path in (tmp_path / "missing", tmp_path / "file.py"):
        with pytest.raises(recallbox.InvalidArgument, match="not a directory"):
            box.index_code(path)
    with pytest.raises(recallbox.InvalidArgument):
        box.index_code(3)  # type: ignore[arg-type]
    for scope in ("", "  ", "x" * 201, 7):
        with pytest.raises(recallbox.InvalidArgument, match="scope"):
            box.index_code(repo(tmp_path), scope=scope)  # type: ignore[arg-type]
        shutil.rmtree(tmp_path / "python_repo")


# --- the privacy gate -----------------------------------------------------------------------

def _visible(box: recallbox.Box, **kwargs: object) -> set[str]:
    hits = box.search("price", domain="code", **kwargs)  # type: ignore[arg-type]
    return {hit.id for hit in hits}


@pytest.mark.parametrize("exclusion", ["pricing.py", "shop/pricing.py", "./SHOP\\Pricing.py"])
def test_an_excluded_file_is_invisible_to_search_and_callers(
    box: recallbox.Box, tmp_path: Path, exclusion: str
) -> None:
    box.index_code(repo(tmp_path))
    assert "shop/pricing.py::price_of" in _visible(box)
    assert "shop/cart.py::Cart.total.line_total" in ids(box.callees("shop/cart.py::Cart.total"))
    box.exclude_source(exclusion)
    assert not any(hit_id.startswith("shop/pricing.py") for hit_id in _visible(box))
    with pytest.raises(recallbox.NotFound):
        box.callers("shop/pricing.py::price_of")
    assert box.callees("shop/cart.py::Cart.total.line_total") == []
    box.include_source(exclusion)
    assert "shop/pricing.py::price_of" in _visible(box)


def test_a_path_exclusion_names_one_file_and_a_denied_caller_is_never_listed(
    box: recallbox.Box, tmp_path: Path
) -> None:
    box.index_code(repo(tmp_path))
    box.exclude_source("other/cart.py")  # another path: nothing of shop/cart.py is denied
    assert ids(box.callers("shop/base.py::Model.save")) == ["shop/cart.py::Cart.add"]
    box.exclude_source("shop/cart.py")
    assert box.callers("shop/base.py::Model.save") == []
    top = box.search("Model", domain="code")[0]
    assert top.id == "shop/base.py::Model" and top.callers == () and top.explain["callers"] == 0.0


def test_per_call_exclusions_and_hard_links(box: recallbox.Box, tmp_path: Path) -> None:
    root = repo(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.link(root / "shop" / "pricing.py", outside / "prices-copy.py")
    box.index_code(root)
    assert not any(i.startswith("shop/pricing.py") for i in _visible(box, excluded=["shop/pricing.py"]))
    assert "shop/pricing.py::price_of" in _visible(box)  # the call stored nothing
    box.exclude_source(str(outside / "prices-copy.py"))  # a hard link: the same file
    assert not any(i.startswith("shop/pricing.py") for i in _visible(box))


def test_the_domain_applies_the_gate_for_recall(box: recallbox.Box, tmp_path: Path) -> None:
    box.index_code(repo(tmp_path))
    domain = get_domain("code")
    where = SearchFilter(excluded=("pricing.py",))
    hits = domain.search(SearchContext(box.store, where), build_fts_query("price line_total"), limit=10)
    assert hits and not any(hit.id.startswith("shop/pricing.py") for hit in hits)
    text = domain.render_bucket(SearchContext(box.store, where), hits, 6_000)
    assert "pricing.py" not in text


# --- incremental resolution equals a full one -------------------------------------------------

def _edit(path: str, old: str, new: str) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        target = root / path
        if target.exists():
            target.write_text(target.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")

    return run


def _append(path: str, text: str) -> Callable[[Path], None]:
    def run(root: Path) -> None:
        if (root / path).parent.exists():
            append(root / path, text)

    return run


def _delete(path: str) -> Callable[[Path], None]:
    return lambda root: (root / path).unlink(missing_ok=True)


OPERATIONS: dict[str, Callable[[Path], None]] = {
    "rename price_of": _edit("shop/pricing.py", "def price_of", "def price_for"),
    "add price_of again": _append("shop/pricing.py", "\n\ndef price_of(item):\n    return 1\n"),
    "add a validate function": _append("shop/pricing.py", "\n\ndef validate(x):\n    return x\n"),
    "Cart gets save": _append("shop/cart.py", "\n    def save(self):\n        return None\n"),
    "main calls model.save": _append("main.py", "\n\ndef persist(model):\n    model.save()\n"),
    "main calls line_total": _append("main.py", "\n\ndef t(i):\n    return line_total(i)\n"),
    "delete pricing": _delete("shop/pricing.py"),
    "new module": _append("shop/tax.py", "from shop.pricing import price_of\n\ndef taxed(i):\n    return price_of(i)\n"),
    "Cart without a base": _edit("shop/cart.py", "class Cart(Model):", "class Cart:"),
    "a comment": _append("shop/base.py", "\n# touched\n"),
    "re-export pricing": _edit("shop/__init__.py", "from .cart import Cart", "from .cart import Cart\nfrom .pricing import price_of"),
    "Model.save renamed": _edit("shop/base.py", "def save(self)", "def store(self)"),
}  # fmt: skip


def _stored(store: Store, scope: str) -> dict[EdgeKey, EdgeValue]:
    calls = store.code_call_edges(scope)
    return {
        (g.file.path, e.ordinal): (e.kind, e.source_id, e.target_name, e.target_id, e.confidence)
        for g in store.code_graph(scope)
        for e in (*g.edges, *calls.get(g.file.path, []))
    }


def _fresh(root: Path) -> dict[EdgeKey, EdgeValue]:
    parsed = parse_repository(root)
    edges = iter(resolve_edges(parsed.files, root_name=root.name))
    out: dict[EdgeKey, EdgeValue] = {}
    for file in parsed.files:
        for ordinal in range(len(file.edges)):
            e = next(edges)
            out[(file.path, ordinal)] = (e.kind, e.source_id, e.target_name, e.target_id, e.confidence)
    return out


@settings(max_examples=25)
@given(steps=st.lists(st.sampled_from(sorted(OPERATIONS)), min_size=1, max_size=4))
def test_an_incremental_reindex_resolves_edges_as_a_full_one_does(steps: list[str]) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = repo(Path(scratch))
        with recallbox.open(Path(scratch) / "i.db") as box:
            box.index_code(root)
            for step in steps:
                OPERATIONS[step](root)
                box.index_code(root)
                assert _stored(box.store, root.name) == _fresh(root), step


# --- recallbox's own source, and no code extra ------------------------------------------------

def test_recallbox_own_source(box: recallbox.Box) -> None:
    report = box.index_code(SRC)
    assert report.failed == () and report.scope == "src"
    hits = box.search("search_memory", domain="code")
    top = hits[0]
    assert (top.id, top.scope, top.source) == ("recallbox/box.py::Box.search_memory", "src", "recallbox/box.py")
    assert top.text.startswith("def search_memory(")
    assert "self, query: str, channel: str | None = None" in top.text
    assert {
        "recallbox/mcp_server.py::build_server.search_memory",
        "recallbox/cli/commands/search.py::search_memory",
    } <= set(top.callers)
    callers = ids(box.callers("recallbox/box.py::Box.search_memory"))
    assert "recallbox/mcp_server.py::build_server.search_memory" in callers
    assert "recallbox/cli/commands/search.py::search_memory" in callers


BLOCKED = ("tree_sitter", "tree_sitter_python", "tree_sitter_javascript", "tree_sitter_typescript",
           "tree_sitter_go", "tree_sitter_rust", "pathspec")  # fmt: skip


def test_the_stored_index_is_read_without_the_code_extra(db_path: Path, tmp_path: Path) -> None:
    with recallbox.open(db_path) as box:
        box.index_code(repo(tmp_path))
    script = textwrap.dedent(
        f"""
        import sys

        class Missing:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {BLOCKED!r}:
                    raise ModuleNotFoundError(f"No module named {{name!r}}")
                return None

        sys.meta_path.insert(0, Missing())
        import recallbox
        with recallbox.open({str(db_path)!r}) as box:
            hits = box.search("price_of", domain="code")
            print(hits[0].id)
            print([h.id for h in box.callers("shop/pricing.py::price_of")])
            bucket = box.recall("price_of", domains=["code"]).buckets["code"]
            print(bucket.error, bucket.hits[0].id)
            try:
                box.index_code({str(tmp_path)!r})
            except recallbox.DependencyMissing as exc:
                print(exc)
        print(sorted(m for m in sys.modules if m.startswith({BLOCKED!r})))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "shop/pricing.py::price_of",
        "['shop/cart.py::Cart.total.line_total']",
        "None shop/pricing.py::price_of",
        "code indexing needs tree-sitter: pip install 'recallbox[code]'",
        "[]",
    ]
