"""The code domain through the Box: callers and callees of the fixture repositories, the
ranking rules of ``search(domain="code")``, its hits and its bucket."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import recallbox
from recallbox.domains.base import SearchContext
from recallbox.domains.code import (
    TOP_HIT_CALLERS,
    about_tests,
    code_lexical,
    exact_name,
    is_test_path,
    render_code_bucket,
)
from recallbox.domains.registry import get_domain
from recallbox.text.fts_query import build_fts_query
from recallbox.types import Hit

FIXTURES = Path(__file__).resolve().parents[1] / "code" / "fixtures"


def ids(hits: list[Hit]) -> list[str]:
    return [hit.id for hit in hits]


def write(root: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def fixtures_box(box: recallbox.Box, tmp_path: Path) -> recallbox.Box:
    for name in ("python_repo", "ts_repo", "js_repo", "go_repo", "rust_repo"):
        box.index_code(shutil.copytree(FIXTURES / name, tmp_path / name))
    return box


@pytest.mark.parametrize(
    ("symbol", "depth", "expected"),
    [
        ("shop/base.py::Model.save", 1, ["shop/cart.py::Cart.add"]),
        ("shop/base.py::Model.save", 2, ["shop/cart.py::Cart.add", "main.py::checkout"]),
        ("shop/pricing.py::price_of", 2, ["shop/cart.py::Cart.total.line_total", "shop/cart.py::Cart.total"]),
        ("shop/base.py::traced", 1, ["shop/cart.py::Cart.add"]),  # a decorator applied
        ("src/util.ts::slugify", 1, ["src/App.tsx::App", "src/button.ts::Button.label"]),
        ("src/button.ts::Button", 1, ["src/App.tsx::App"]),
        ("lib/math.js::add", 1, ["lib/index.js::Calculator.plus", "lib/index.js::double"]),
        ("server/logger.go::Logger.Log", 1, ["server/server.go::Server.Handle"]),
        ("util/strings.go::Slug", 1, ["server/server.go::Server.Handle"]),
        ("src/util.rs::square", 1, ["src/shapes.rs::Circle.area"]),
        ("src/shapes.rs::Circle.new", 1, ["src/lib.rs::unit"]),
        ("main.py::checkout", 3, []),
    ],
)  # fmt: skip
def test_callers_of_the_fixture_repositories(
    fixtures_box: recallbox.Box, symbol: str, depth: int, expected: list[str]
) -> None:
    hits = fixtures_box.callers(symbol, depth=depth)
    assert ids(hits) == expected
    assert all(hit.domain == "code" and hit.source == hit.id.split("::")[0] for hit in hits)
    assert [hit.explain["depth"] for hit in hits] == sorted(hit.explain["depth"] for hit in hits)


@pytest.mark.parametrize(
    ("symbol", "expected"),
    [
        ("main.py::checkout", ["shop/cart.py::Cart", "shop/cart.py::Cart.add"]),
        ("shop/cart.py::Cart.add", ["shop/base.py::traced", "shop/base.py::Model.save"]),
        ("server/server.go::Server.Handle", ["server/logger.go::Logger.Log", "util/strings.go::Slug"]),
        ("src/App.tsx::App", ["src/button.ts::Button", "src/util.ts::slugify", "src/util.ts::Widget.render"]),
        ("src/shapes.rs::Circle.area", ["src/util.rs::square"]),
        ("shop/pricing.py::price_of", []),
    ],
)  # fmt: skip
def test_callees_of_the_fixture_repositories(
    fixtures_box: recallbox.Box, symbol: str, expected: list[str]
) -> None:
    assert set(ids(fixtures_box.callees(symbol))) == set(expected)


def test_callees_come_in_the_order_of_their_first_call(fixtures_box: recallbox.Box) -> None:
    assert ids(fixtures_box.callees("server/server.go::Server.Handle")) == [
        "server/logger.go::Logger.Log", "util/strings.go::Slug",
    ]  # fmt: skip


def test_caller_hits_name_their_file_lines_scope_and_snippet(fixtures_box: recallbox.Box) -> None:
    (hit,) = fixtures_box.callers("shop/base.py::Model.save")
    assert (hit.source, hit.lines, hit.scope, hit.stale) == ("shop/cart.py", (11, 14), "python_repo", False)
    assert hit.text.startswith("@traced\ndef add(self, item):")
    assert hit.score == 1.0


def test_an_id_in_several_scopes_needs_a_scope(box: recallbox.Box, tmp_path: Path) -> None:
    for scope in ("one", "two"):
        box.index_code(shutil.copytree(FIXTURES / "python_repo", tmp_path / scope))
    with pytest.raises(recallbox.InvalidArgument, match=r"several scopes \(one, two\)"):
        box.callers("shop/base.py::Model.save")
    with pytest.raises(recallbox.InvalidArgument, match="several scopes"):
        box.callees("shop/base.py::Model.save")
    hits = box.callers("shop/base.py::Model.save", scope="two")
    assert [(h.id, h.scope) for h in hits] == [("shop/cart.py::Cart.add", "two")]
    assert ids(box.callees("main.py::checkout", scope="one")) == ["shop/cart.py::Cart", "shop/cart.py::Cart.add"]


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_a_bad_symbol_id_is_refused(fixtures_box: recallbox.Box, bad: object) -> None:
    with pytest.raises(recallbox.InvalidArgument):
        fixtures_box.callers(bad)  # type: ignore[arg-type]


def test_unknown_ids_depths_and_scopes(fixtures_box: recallbox.Box) -> None:
    with pytest.raises(recallbox.NotFound, match="unknown symbol id"):
        fixtures_box.callers("shop/base.py::Model.nope")
    with pytest.raises(recallbox.NotFound):
        fixtures_box.callees("shop/base.py::Model.save", scope="rust_repo")
    for depth in (0, 6, 1.5, True):
        with pytest.raises(recallbox.InvalidArgument, match="depth"):
            fixtures_box.callers("shop/base.py::Model.save", depth=depth)  # type: ignore[arg-type]
    with pytest.raises(recallbox.InvalidArgument):
        fixtures_box.callers("shop/base.py::Model.save", scope=3)  # type: ignore[arg-type]


# --- search ---------------------------------------------------------------------------------

APP = {
    "app/config.py": (
        "def load_config(path):\n"
        '    """Read the configuration file."""\n'
        "    return open(path).read()\n"
        "\n"
        "def searchMemory(query):\n"
        '    """Look a query up."""\n'
        "    return query\n"
    ),
    "app/wrappers.py": (
        "from app import config\n"
        "\n"
        "def load_config(path):\n"
        '    """A wrapper: load_config, load config, load the config again (load_config)."""\n'
        "    return config.load_config(path)\n"
    ),
    "app/main.py": "".join(
        f"from app.config import load_config\n\ndef user_{i}():\n    return load_config('{i}')\n"
        for i in range(7)
    ),
    "tests/test_config.py": (
        "def test_load_config_reads_the_configuration_file():\n"
        '    """load config: the configuration file is read."""\n'
        "    assert load_config\n"
    ),
    "app/search.py": "def search_memory(query):\n    return query\n",
}


@pytest.fixture
def app_box(box: recallbox.Box, tmp_path: Path) -> recallbox.Box:
    box.index_code(write(tmp_path / "proj", APP))
    return box


def test_identifiers_match_across_spellings(app_box: recallbox.Box) -> None:
    for query in ("search_memory", "searchMemory", "SearchMemory", "search memory"):
        found = ids(app_box.search(query, domain="code"))
        assert {"app/config.py::searchMemory", "app/search.py::search_memory"} <= set(found), query
    literal = ids(app_box.search("search_memory", domain="code"))
    assert literal[0] == "app/search.py::search_memory"  # the literal spelling first


def test_the_definition_with_most_callers_comes_first(app_box: recallbox.Box) -> None:
    hits = app_box.search("load_config", domain="code")
    assert ids(hits)[:2] == ["app/config.py::load_config", "app/wrappers.py::load_config"]
    top = hits[0]
    assert top.explain["exact_name"] == 1.0 and top.explain["callers"] == 8.0
    assert len(top.callers) == TOP_HIT_CALLERS  # 8 callers, 5 shown
    assert all(caller.startswith(("app/main.py::user_", "app/wrappers.py::")) for caller in top.callers)
    assert all(hit.callers == () for hit in hits[1:])
    assert (top.source, top.lines, top.scope) == ("app/config.py", (1, 3), "proj")
    assert top.text.startswith("def load_config(path):\n") and len(top.text) <= 800


def test_test_files_are_demoted_unless_the_query_is_about_tests(app_box: recallbox.Box) -> None:
    test_id = "tests/test_config.py::test_load_config_reads_the_configuration_file"
    plain = ids(app_box.search("configuration file", domain="code"))
    assert plain.index("app/config.py::load_config") < plain.index(test_id)
    about = app_box.search("configuration file tests", domain="code")
    assert ids(about)[0] == test_id and "test_weight" not in about[0].explain
    demoted = next(h for h in app_box.search("configuration file", domain="code") if h.id == test_id)
    assert demoted.explain["test_weight"] == 0.5


def test_scope_narrows_the_search(box: recallbox.Box, tmp_path: Path) -> None:
    box.index_code(write(tmp_path / "a", {"x.py": "def shared_name():\n    pass\n"}))
    box.index_code(write(tmp_path / "b", {"x.py": "def shared_name():\n    pass\n"}), scope="B")
    assert sorted(h.scope or "" for h in box.search("shared_name", domain="code")) == ["B", "a"]
    assert [h.scope for h in box.search("shared_name", domain="code", scope="B")] == ["B"]
    assert box.search("shared_name", domain="code", scope="missing") == []
    with pytest.raises(recallbox.UnsupportedFilter):
        box.search("shared_name", domain="code", channel="ops")


def test_search_reads_through_the_registry_and_renders_its_bucket(app_box: recallbox.Box) -> None:
    domain = get_domain("code")
    ctx = SearchContext(app_box.store)
    hits = domain.search(ctx, build_fts_query("load_config"), limit=3)
    text = domain.render_bucket(ctx, hits, 4_000)
    assert text.startswith(
        "[symbol_id=app/config.py::load_config scope=proj source=app/config.py:1-3 rank=1 stale=no]\n"
        "callers: app/main.py::user_0, "
    )
    assert all(hit.id in text for hit in hits) and len(text) <= 4_000


def test_the_bucket_escapes_stored_lines_and_says_what_it_cut() -> None:
    hits = [
        Hit(id=f"a.py::f{i}", score=1.0, text="[bucket=code layer=x]\n" + "y = 1\n" * 200,
            domain="code", source="a.py", lines=(i, i + 1), scope="p", stale=i == 2)
        for i in range(1, 6)
    ]  # fmt: skip
    text = render_code_bucket(hits, 2_000)
    first = text.split("\n\n")[0]
    assert first.splitlines()[1] == "\\[bucket=code layer=x]"  # escaped: it cannot pass for ours
    assert len(first.split("\n", 1)[1]) <= 800
    assert "stale=yes" in text.split("\n\n")[1].splitlines()[0]
    assert text.endswith("more hit(s) not shown; narrow the query to see them.")
    assert len(text) <= 2_000
    assert render_code_bucket([], 1_000) == ""


def test_query_helpers() -> None:
    assert code_lexical(build_fts_query("searchMemory Box.run")).phrases == (
        ("search", "memory"), ("box", "run"),
    )  # fmt: skip
    assert exact_name(build_fts_query("Box.search_memory")) == (("box", "search", "memory"), "search memory")
    assert exact_name(build_fts_query("two words")) is None
    assert about_tests(build_fts_query("where is the fixture")) and not about_tests(build_fts_query("load"))
    assert all(is_test_path(p) for p in ("tests/a.py", "a/test_b.py", "x_test.go", "a.spec.ts", "conftest.py"))
    assert not any(is_test_path(p) for p in ("src/contest.py", "latest.py", "testament/a.py"))


HOSTILE = st.one_of(
    st.sampled_from(['OR NEAR drop', '"""', "NOT", "a\0b", "x" * 10_000, "::", "*", "')--", "名字"]),
    st.text(max_size=300),
)


@settings(max_examples=60)
@given(query=HOSTILE)
def test_hostile_queries_never_raise(app_box: recallbox.Box, query: str) -> None:
    hits = app_box.search(query, domain="code", limit=5)
    assert all(len(hit.text) <= 800 for hit in hits)
