"""parse_repository: the report, incremental re-parsing, failures; recallbox's own source."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.code.conftest import FIXTURES

from recallbox.code import parse_repository, resolve_edges

SRC = Path(__file__).resolve().parents[2] / "src"


def copy_fixture(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    shutil.copytree(FIXTURES / name, root)
    return root


def test_first_index_report(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "python_repo")
    (root / "notes.md").write_text("# not code\n", encoding="utf-8")
    (root / "blob.py").write_bytes(b"\x00\x01binary")
    report = parse_repository(root).report
    assert (report.scope, report.files_seen, report.files_parsed) == ("python_repo", 6, 5)
    assert (report.files_unchanged, report.files_deleted) == (0, 0)
    assert report.symbols == 17
    assert report.skipped == {"binary": 1}
    assert [(s.path, s.reason) for s in report.skipped_files] == [("blob.py", "binary")]
    assert report.languages == {"python": 5}
    assert report.languages_skipped == {}
    assert report.failed == ()
    assert parse_repository(root, scope="shop").report.scope == "shop"


def test_reindex_parses_only_the_changed_file_and_lists_deletions(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "python_repo")
    first = parse_repository(root)
    previous = {file.path: file.hash for file in first.files}
    again = parse_repository(root, previous=previous)
    assert (again.report.files_parsed, again.report.files_unchanged) == (0, 5)
    assert again.files == ()

    with (root / "shop" / "pricing.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef discount(item):\n    return price_of(item) * 0.9\n")
    (root / "main.py").unlink()
    edited = parse_repository(root, previous=previous)
    assert [file.path for file in edited.files] == ["shop/pricing.py"]
    assert edited.changes.changed == ("shop/pricing.py",)
    assert edited.changes.deleted == ("main.py",)
    assert (edited.report.files_parsed, edited.report.files_unchanged, edited.report.files_deleted) == (1, 3, 1)
    symbols = [symbol.id for symbol in edited.files[0].symbols]
    assert symbols == ["shop/pricing.py", "shop/pricing.py::price_of", "shop/pricing.py::discount"]


def test_a_file_with_a_syntax_error_is_reported_and_the_rest_indexed(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "python_repo")
    (root / "broken.py").write_text("def ok():\n    pass\n\nclass (:\n", encoding="utf-8")
    parsed = parse_repository(root)
    assert [(failure.path, failure.error.split(",")[0]) for failure in parsed.report.failed] == [
        ("broken.py", "syntax error at line 4"),
    ]
    assert parsed.report.files_parsed == 6
    broken = next(file for file in parsed.files if file.path == "broken.py")
    assert "broken.py::ok" in [symbol.id for symbol in broken.symbols]


def test_progress_is_reported_per_file(tmp_path: Path) -> None:
    root = copy_fixture(tmp_path, "go_repo")
    seen: list[tuple[int, int, str]] = []
    parse_repository(root, progress=lambda done, total, path: seen.append((done, total, path)))
    assert seen == [
        (1, 3, "server/logger.go"), (2, 3, "server/server.go"), (3, 3, "util/strings.go"),
    ]


def test_recallbox_own_source() -> None:
    parsed = parse_repository(SRC)
    assert parsed.report.failed == ()
    symbols = {symbol.id: symbol for file in parsed.files for symbol in file.symbols}
    method = symbols["recallbox/box.py::Box.search_memory"]
    assert (method.kind, method.name, method.language) == ("method", "search_memory", "python")
    assert method.signature.startswith("def search_memory(")
    assert "self, query: str, channel: str | None = None" in method.signature
    edges = resolve_edges(parsed.files, root_name=SRC.name)
    callers = {
        edge.source_id for edge in edges
        if edge.kind == "calls" and edge.target_id == "recallbox/box.py::Box.search_memory"
    }
    mcp_tools = {caller for caller in callers if caller.startswith("recallbox/mcp_server.py::")}
    assert mcp_tools, callers
    assert all(symbols[caller].kind == "function" for caller in mcp_tools)
    assert any(
        edge.target_name.endswith("search_memory")
        for edge in edges
        if edge.source_id in mcp_tools and edge.kind == "calls"
    )
