"""JavaScript, TypeScript and TSX extraction on the fixture repositories."""

from __future__ import annotations

from tests.code.conftest import edge_rows, index_fixture, symbol_rows


def test_typescript_and_tsx_symbols() -> None:
    files, _ = index_fixture("ts_repo")
    assert [(f.path, f.language) for f in files] == [
        ("src/App.tsx", "tsx"),
        ("src/button.ts", "typescript"),
        ("src/util.ts", "typescript"),
    ]
    assert symbol_rows(files) == [
        ("src/App.tsx", "module", 1, 7),
        ("src/App.tsx::App", "function", 4, 7),
        ("src/button.ts", "module", 1, 9),
        ("src/button.ts::Button", "class", 3, 9),
        ("src/button.ts::Button.label", "method", 4, 4),
        ("src/button.ts::Button.name", "method", 6, 8),
        ("src/util.ts", "module", 1, 18),
        ("src/util.ts::slugify", "function", 2, 4),
        ("src/util.ts::Widget", "class", 6, 14),
        ("src/util.ts::Widget.render", "method", 7, 9),
        ("src/util.ts::Widget.name", "method", 11, 13),
        ("src/util.ts::Named", "interface", 16, 18),
        ("src/util.ts::Named.name", "method", 17, 17),
    ]
    by_id = {s.id: s for f in files for s in f.symbols}
    assert by_id["src/util.ts::slugify"].doc == "Turn a title into a slug."
    assert by_id["src/util.ts"].doc == ""  # that comment documents slugify, not the file
    assert by_id["src/util.ts::slugify"].signature == "function slugify(title: string): string"


def test_typescript_calls_imports_and_extends_across_files() -> None:
    _, edges = index_fixture("ts_repo")
    assert edge_rows(edges, "calls") == [
        ("src/App.tsx::App", "./button:Button", "src/button.ts::Button", "resolved"),
        ("src/App.tsx::App", "./util:slugify", "src/util.ts::slugify", "resolved"),
        ("src/App.tsx::App", "button.render", "src/util.ts::Widget.render", "name-only"),
        ("src/button.ts::Button.label", "./util:slugify", "src/util.ts::slugify", "resolved"),
        ("src/button.ts::Button.label", "Button.name", "src/button.ts::Button.name", "exact"),
        ("src/util.ts::slugify", "title.toLowerCase", None, "name-only"),
        ("src/util.ts::Widget.render", "Widget.name", "src/util.ts::Widget.name", "exact"),
    ]
    assert edge_rows(edges, "imports") == [
        ("src/App.tsx", "./util", "src/util.ts", "resolved"),
        ("src/App.tsx", "./button:Button", "src/button.ts::Button", "resolved"),
        ("src/button.ts", "./util:Widget", "src/util.ts::Widget", "resolved"),
        ("src/button.ts", "./util:Named", "src/util.ts::Named", "resolved"),
        ("src/button.ts", "./util:slugify", "src/util.ts::slugify", "resolved"),
    ]
    assert edge_rows(edges, "extends") == [
        ("src/button.ts::Button", "./util:Widget", "src/util.ts::Widget", "resolved"),
        ("src/button.ts::Button", "./util:Named", "src/util.ts::Named", "resolved"),
    ]


def test_javascript_require_arrow_functions_and_classes() -> None:
    files, edges = index_fixture("js_repo")
    assert symbol_rows(files) == [
        ("lib/index.js", "module", 1, 16),
        ("lib/index.js::Calculator", "class", 3, 12),
        ("lib/index.js::Calculator.constructor", "method", 4, 6),
        ("lib/index.js::Calculator.plus", "method", 8, 11),
        ("lib/index.js::double", "function", 14, 14),
        ("lib/math.js", "module", 1, 5),
        ("lib/math.js::add", "function", 1, 3),
    ]
    assert edge_rows(edges, "calls") == [
        ("lib/index.js::Calculator.plus", "./math:add", "lib/math.js::add", "resolved"),
        ("lib/index.js::double", "./math:add", "lib/math.js::add", "resolved"),
    ]
    assert edge_rows(edges, "imports") == [
        ("lib/index.js", "./math:add", "lib/math.js::add", "resolved"),
    ]
