"""Python extraction on the hand-written fixture repository: exact symbols and edges."""

from __future__ import annotations

from tests.code.conftest import edge_rows, index_fixture, symbol_rows

from recallbox.code.extract import extract_file


def test_python_symbols_methods_nested_functions_and_decorators() -> None:
    files, _ = index_fixture("python_repo")
    assert symbol_rows(files) == [
        ("main.py", "module", 1, 8),
        ("main.py::checkout", "function", 4, 8),
        ("shop/__init__.py", "module", 1, 5),
        ("shop/base.py", "module", 1, 23),
        ("shop/base.py::traced", "function", 6, 13),
        ("shop/base.py::traced.wrapper", "function", 9, 11),
        ("shop/base.py::Model", "class", 16, 23),
        ("shop/base.py::Model.save", "method", 19, 20),
        ("shop/base.py::Model.validate", "method", 22, 23),
        ("shop/cart.py", "module", 1, 21),
        ("shop/cart.py::Cart", "class", 5, 21),
        ("shop/cart.py::Cart.__init__", "method", 8, 9),
        ("shop/cart.py::Cart.add", "method", 11, 14),
        ("shop/cart.py::Cart.total", "method", 16, 21),
        ("shop/cart.py::Cart.total.line_total", "function", 18, 19),
        ("shop/pricing.py", "module", 1, 6),
        ("shop/pricing.py::price_of", "function", 4, 6),
    ]
    by_id = {s.id: s for f in files for s in f.symbols}
    assert by_id["shop/cart.py::Cart.add"].decorators == ("traced",)
    assert by_id["shop/cart.py::Cart.total"].decorators == ("property",)
    assert by_id["shop/base.py::traced.wrapper"].decorators == ("functools.wraps(function)",)
    assert by_id["shop/base.py::traced"].signature == "def traced(function):"
    assert by_id["shop/base.py::traced"].doc == "Log each call."
    assert by_id["shop/cart.py::Cart"].doc == "A shopping cart."
    assert by_id["shop/__init__.py"].name == "shop"
    assert by_id["shop/__init__.py"].doc == "A tiny shop package."
    assert by_id["shop/pricing.py::price_of"].name_seg == "price of"
    assert by_id["shop/cart.py::Cart.total.line_total"].parent_id == "shop/cart.py::Cart.total"


def test_python_calls_resolved_in_file_across_files_and_through_bases() -> None:
    _, edges = index_fixture("python_repo")
    assert edge_rows(edges, "calls") == [
        ("main.py::checkout", "shop.Cart", "shop/cart.py::Cart", "resolved"),
        ("main.py::checkout", "cart.add", "shop/cart.py::Cart.add", "name-only"),
        ("shop/base.py::traced.wrapper", "functools.wraps", None, "name-only"),
        ("shop/base.py::traced.wrapper", "function", None, "name-only"),
        ("shop/base.py::Model.save", "Model.validate", "shop/base.py::Model.validate", "exact"),
        ("shop/cart.py::Cart.add", "shop.base.traced", "shop/base.py::traced", "resolved"),
        ("shop/cart.py::Cart.add", "Cart.items.append", None, "name-only"),
        ("shop/cart.py::Cart.add", "Cart.save", "shop/base.py::Model.save", "resolved"),
        ("shop/cart.py::Cart.total", "property", None, "name-only"),
        (
            "shop/cart.py::Cart.total.line_total",
            "shop.pricing.price_of",
            "shop/pricing.py::price_of",
            "resolved",
        ),
        ("shop/cart.py::Cart.total", "sum", None, "name-only"),
        ("shop/cart.py::Cart.total", "line_total", "shop/cart.py::Cart.total.line_total", "exact"),
        ("shop/pricing.py::price_of", "round", None, "name-only"),
    ]


def test_python_imports_and_extends() -> None:
    _, edges = index_fixture("python_repo")
    assert edge_rows(edges, "imports") == [
        ("main.py", "shop.Cart", "shop/cart.py::Cart", "resolved"),  # through the re-export
        ("shop/__init__.py", ".cart.Cart", "shop/cart.py::Cart", "resolved"),
        ("shop/base.py", "functools", None, "name-only"),
        ("shop/cart.py", "shop.base.Model", "shop/base.py::Model", "resolved"),
        ("shop/cart.py", "shop.base.traced", "shop/base.py::traced", "resolved"),
        ("shop/cart.py", "shop.pricing", "shop/pricing.py", "resolved"),
    ]
    assert edge_rows(edges, "extends") == [
        ("shop/cart.py::Cart", "shop.base.Model", "shop/base.py::Model", "resolved"),
    ]


def test_a_name_defined_twice_gets_a_unique_id() -> None:
    source = b"""def f():\n    pass\n\ndef f():\n    g()\n\nclass C:\n    @property\n    def v(self):\n        return 1\n\n    @v.setter\n    def v(self, value):\n        pass\n"""
    file = extract_file("pkg/m.py", source, "python")
    assert [(s.id, s.name, s.start_line) for s in file.symbols] == [
        ("pkg/m.py", "m", 1),
        ("pkg/m.py::f", "f", 1),
        ("pkg/m.py::f#2", "f", 4),
        ("pkg/m.py::C", "C", 7),
        ("pkg/m.py::C.v", "v", 8),
        ("pkg/m.py::C.v#2", "v", 12),
    ]
    assert [e.source_id for e in file.edges if e.kind == "calls" and e.target_name == "g"] == ["pkg/m.py::f#2"]
