"""Cross-file resolution rules: receivers, ambiguity, outside libraries, re-resolution."""

from __future__ import annotations

from recallbox.code.extract import extract_file
from recallbox.code.resolve import resolve_edges, resolved_counts
from recallbox.code.types import Edge, FileIndex


def files(sources: dict[str, str], language: str = "python") -> list[FileIndex]:
    return [extract_file(path, text.encode(), language) for path, text in sources.items()]


def calls(edges: list[Edge], source: str) -> list[tuple[str, str | None, str]]:
    return [(e.target_name, e.target_id, e.confidence) for e in edges if e.kind == "calls" and e.source_id == source]


SOURCES = {
    "store.py": "class Store:\n    def get(self):\n        pass\n",
    "cache.py": "class Cache:\n    def get(self):\n        pass\n",
    "app.py": (
        "import json\n"
        "def run(store, thing):\n"
        "    store.get()\n"
        "    thing.get()\n"
        "    json.loads('1')\n"
        "    undefined_helper()\n"
    ),
}


def test_receiver_name_picks_among_methods_of_the_same_name() -> None:
    edges = resolve_edges(files(SOURCES))
    assert calls(edges, "app.py::run") == [
        ("store.get", "store.py::Store.get", "name-only"),  # the receiver names the class
        ("thing.get", None, "name-only"),  # two candidates, nothing to choose by
        ("json.loads", None, "name-only"),  # an outside library: never matched by name
        ("undefined_helper", None, "name-only"),
    ]


def test_outside_library_call_is_not_matched_to_a_local_method_of_that_name() -> None:
    sources = {
        "codec.py": "class Codec:\n    def loads(self):\n        pass\n",
        "app.py": "import json\ndef run():\n    json.loads('1')\n",
    }
    assert calls(resolve_edges(files(sources)), "app.py::run") == [("json.loads", None, "name-only")]


def test_a_root_package_name_qualifies_its_modules() -> None:
    sources = {
        "__init__.py": "",
        "box.py": "class Box:\n    def go(self):\n        pass\n",
        "cli.py": "from mypkg.box import Box\ndef main():\n    Box().go()\n    Box()\n",
    }
    edges = resolve_edges(files(sources), root_name="mypkg")
    assert ("mypkg.box.Box", "box.py::Box", "resolved") in calls(edges, "cli.py::main")
    assert resolve_edges(files(sources))[0].target_id is None  # without the root's name


def test_resolving_stored_edges_again_gives_the_same_edges() -> None:
    parsed = files(SOURCES)
    once = resolve_edges(parsed)
    stored = []
    position = 0
    for file in parsed:
        count = len(file.edges)
        stored.append(FileIndex(file.path, file.language, file.hash, file.symbols, tuple(once[position : position + count])))
        position += count
    assert resolve_edges(stored) == once


def test_a_deleted_target_is_unresolved_on_re_resolution() -> None:
    parsed = files(SOURCES)
    once = resolve_edges(parsed)
    remaining = [file for file in parsed if file.path != "store.py"]
    edges_app = [e for e in once if e.source_id.startswith("app.py")]
    app = next(file for file in remaining if file.path == "app.py")
    stored = [f for f in remaining if f.path != "app.py"]
    stored.append(FileIndex(app.path, app.language, app.hash, app.symbols, tuple(edges_app)))
    again = resolve_edges(stored)
    # Cache.get is now the only method named get: name-only, by elimination.
    assert calls(again, "app.py::run")[:2] == [
        ("store.get", "cache.py::Cache.get", "name-only"),
        ("thing.get", "cache.py::Cache.get", "name-only"),
    ]


def test_inherited_method_in_the_same_file_is_exact() -> None:
    source = {
        "m.py": (
            "class Base:\n    def hello(self):\n        pass\n"
            "class Child(Base):\n    def run(self):\n        self.hello()\n"
        ),
    }
    edges = resolve_edges(files(source))
    assert calls(edges, "m.py::Child.run") == [("Child.hello", "m.py::Base.hello", "exact")]


def test_resolved_counts() -> None:
    counts = resolved_counts(resolve_edges(files(SOURCES)))
    assert counts == {"name-only": 1, "unresolved": 4}
