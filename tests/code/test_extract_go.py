"""Go extraction on the fixture repository: receiver methods, packages across files."""

from __future__ import annotations

from tests.code.conftest import edge_rows, index_fixture, symbol_rows


def test_go_symbols() -> None:
    files, _ = index_fixture("go_repo")
    assert symbol_rows(files) == [
        ("server/logger.go", "module", 1, 13),
        ("server/logger.go::Logger", "struct", 4, 4),
        ("server/logger.go::Logger.Log", "method", 7, 9),
        ("server/logger.go::format", "function", 11, 13),
        ("server/server.go", "module", 1, 23),
        ("server/server.go::Server", "struct", 10, 13),
        ("server/server.go::Server.Handle", "method", 16, 19),
        ("server/server.go::New", "function", 21, 23),
        ("util/strings.go", "module", 1, 9),
        ("util/strings.go::Slug", "function", 7, 9),
    ]
    by_id = {s.id: s for f in files for s in f.symbols}
    assert by_id["server/server.go::Server.Handle"].doc == "Handle answers one request."
    assert by_id["server/server.go::Server"].signature == "type Server struct"
    assert by_id["util/strings.go"].name == "util"
    assert by_id["util/strings.go"].doc == "Package util holds helpers."


def test_go_calls_through_receiver_embedding_and_imports() -> None:
    _, edges = index_fixture("go_repo")
    assert edge_rows(edges, "calls") == [
        ("server/logger.go::Logger.Log", "format", "server/logger.go::format", "exact"),
        # s.Log: Server embeds Logger, declared in another file of the package.
        ("server/server.go::Server.Handle", "Server.Log", "server/logger.go::Logger.Log", "resolved"),
        ("server/server.go::Server.Handle", "fmt:Sprintf", None, "name-only"),
        (
            "server/server.go::Server.Handle",
            "example.com/shop/util:Slug",
            "util/strings.go::Slug",
            "resolved",
        ),
        ("util/strings.go::Slug", "strings:ToLower", None, "name-only"),
    ]
    assert edge_rows(edges, "extends") == [
        ("server/server.go::Server", "Logger", "server/logger.go::Logger", "resolved"),
    ]
    assert edge_rows(edges, "imports") == [
        ("server/server.go", "fmt", None, "name-only"),
        ("server/server.go", "example.com/shop/util", "util/strings.go", "resolved"),
        ("util/strings.go", "strings", None, "name-only"),
    ]
