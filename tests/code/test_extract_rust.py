"""Rust extraction on the fixture repository: impl methods, traits, crate paths."""

from __future__ import annotations

from tests.code.conftest import edge_rows, index_fixture, symbol_rows


def test_rust_symbols() -> None:
    files, _ = index_fixture("rust_repo")
    assert symbol_rows(files) == [
        ("src/lib.rs", "module", 1, 13),
        ("src/lib.rs::total_area", "function", 7, 9),
        ("src/lib.rs::unit", "function", 11, 13),
        ("src/shapes.rs", "module", 1, 24),
        ("src/shapes.rs::Shape", "trait", 4, 6),
        ("src/shapes.rs::Shape.area", "method", 5, 5),
        ("src/shapes.rs::Circle", "struct", 10, 12),
        ("src/shapes.rs::Circle.new", "method", 15, 17),
        ("src/shapes.rs::Circle.area", "method", 21, 23),
        ("src/util.rs", "module", 1, 6),
        ("src/util.rs::square", "function", 4, 6),
    ]
    by_id = {s.id: s for f in files for s in f.symbols}
    assert by_id["src/shapes.rs::Circle"].doc == "A circle."  # above #[derive]
    assert by_id["src/lib.rs"].doc == "Shapes and their areas."
    assert by_id["src/util.rs::square"].signature == "pub fn square(x: f64) -> f64"


def test_rust_calls_uses_and_trait_impls() -> None:
    _, edges = index_fixture("rust_repo")
    calls = edge_rows(edges, "calls")
    assert [row for row in calls if row[2] is not None] == [
        ("src/lib.rs::unit", "crate::shapes::Circle::new", "src/shapes.rs::Circle.new", "resolved"),
        ("src/shapes.rs::Circle.area", "crate::util::square", "src/util.rs::square", "resolved"),
    ]
    # s.area() on a closure parameter: two methods named area, no receiver match.
    assert ("src/lib.rs::total_area", "s::area", None, "name-only") in calls
    assert edge_rows(edges, "extends") == [
        ("src/shapes.rs::Circle", "Shape", "src/shapes.rs::Shape", "exact"),
    ]
    assert edge_rows(edges, "imports") == [
        ("src/lib.rs", "self::shapes", "src/shapes.rs", "resolved"),
        ("src/lib.rs", "self::util", "src/util.rs", "resolved"),
        ("src/lib.rs", "crate::shapes::Circle", "src/shapes.rs::Circle", "resolved"),
        ("src/lib.rs", "crate::shapes::Shape", "src/shapes.rs::Shape", "resolved"),
        ("src/shapes.rs", "crate::util", "src/util.rs", "resolved"),
    ]
