"""Which indexed file an import names, per language (used by :mod:`recallbox.code.resolve`).

Each language's ``split`` turns a qualified target name into candidate ``(file, rest)`` pairs:
the file a module prefix of the name lives in and the parts left to look up inside it,
longest module prefix first.

* Python: ``a.b.c`` by dotted-path suffix (``recallbox.box`` is ``src/recallbox/box.py`` or
  ``…/box/__init__.py``); ``.m.x``/``..m.x`` relative to the importing file's package.
* JavaScript/TypeScript: ``./m:x`` relative to the importing file, trying the usual extensions
  and ``index`` files; bare specifiers (``react``) are outside the repository.
* Go: ``path/to/pkg:X`` by the longest directory whose path ends the import path; a name
  without ``:`` is looked up in the other files of the importing file's directory (its package).
* Rust: ``crate::a::b`` from the crate root (the nearest ``src/`` directory above the file, or
  the file's directory), ``self::``/``super::`` relative to the file's module.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

JS_FAMILY = frozenset({"javascript", "typescript", "tsx"})
JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
JS_INDEXES = tuple(f"/index{suffix}" for suffix in JS_SUFFIXES)

Candidate = tuple[str, tuple[str, ...]]


@dataclass(slots=True)
class ModuleMap:
    """The indexed files by module name, for every language at once."""

    paths: dict[str, str] = field(default_factory=dict)  # path -> language
    python: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    go_dirs: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    _absolute: dict[str, list[Candidate]] = field(default_factory=dict)  # Python names, by name

    @classmethod
    def build(cls, files: Iterable[tuple[str, str]], root_name: str | None = None) -> ModuleMap:
        """Index ``(path, language)`` pairs; ``root_name`` names the root if it is a package."""
        modules = cls()
        listed = list(files)
        root_package = root_name if root_name and ("__init__.py", "python") in listed else None
        for path, language in listed:
            modules.paths[path] = language
            if language == "python":
                parts = _python_parts(path)
                if root_package:
                    parts.insert(0, root_package)
                for start in range(len(parts)):
                    modules.python[".".join(parts[start:])].append(path)
            elif language == "go":
                modules.go_dirs[posixpath.dirname(path)].append(path)
        for paths in modules.python.values():
            paths.sort(key=lambda item: (item.count("/"), item))
        return modules

    def split(self, path: str, language: str, name: str) -> list[Candidate]:
        """Candidate ``(file, rest)`` pairs for ``name`` written in ``path`` (see module docstring)."""
        if language == "python":
            return self._python(path, name)
        if language in JS_FAMILY:
            return self._javascript(path, name)
        if language == "go":
            return self._go(path, name)
        if language == "rust":
            return self._rust(path, name)
        return []

    def package_files(self, path: str) -> list[str]:
        """The other Go files of ``path``'s package (its directory)."""
        return [other for other in self.go_dirs.get(posixpath.dirname(path), []) if other != path]

    def _python(self, path: str, name: str) -> list[Candidate]:
        if name.startswith("."):
            level = len(name) - len(name.lstrip("."))
            base = posixpath.dirname(path)
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            parts = tuple(part for part in name[level:].split(".") if part)
            found: list[Candidate] = []
            for cut in range(len(parts), -1, -1):
                stem = posixpath.join(base, *parts[:cut]) if cut else base
                options = (
                    (f"{stem}.py", f"{stem}.pyi", f"{stem}/__init__.py")
                    if cut
                    else (f"{stem}/__init__.py",)
                )
                found += [
                    (file.lstrip("/"), parts[cut:])
                    for file in options
                    if file.lstrip("/") in self.paths
                ]
            return found
        cached = self._absolute.get(name)
        if cached is not None:
            return cached
        parts = tuple(name.split("."))
        found = []
        for cut in range(len(parts), 0, -1):
            for file in self.python.get(".".join(parts[:cut]), ()):
                found.append((file, parts[cut:]))
        self._absolute[name] = found
        return found

    def _javascript(self, path: str, name: str) -> list[Candidate]:
        spec, _, member = name.partition(":")
        if not spec.startswith("."):
            return []
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), spec))
        rest = tuple(part for part in member.split(".") if part)
        # TypeScript imports "./m.js" for ./m.ts.
        stems = [
            joined,
            *(
                joined.removesuffix(s)
                for s in (".js", ".jsx", ".mjs", ".cjs")
                if joined.endswith(s)
            ),
        ]
        for stem in stems:
            for file in (
                stem,
                *(stem + suffix for suffix in JS_SUFFIXES),
                *(stem + index for index in JS_INDEXES),
            ):
                if self.paths.get(file) in JS_FAMILY:
                    return [(file, rest)]
        return []

    def _go(self, path: str, name: str) -> list[Candidate]:
        if ":" not in name:
            rest = tuple(name.split("."))
            return [(other, rest) for other in self.package_files(path)]
        package, _, member = name.partition(":")
        rest = tuple(part for part in member.split(".") if part)
        best = ""
        for directory in self.go_dirs:
            if directory and (package == directory or package.endswith("/" + directory)):
                best = max(best, directory, key=len)
        return [(file, rest) for file in self.go_dirs.get(best, [])] if best else []

    def _rust(self, path: str, name: str) -> list[Candidate]:
        parts = name.split("::")
        if parts[0] == "crate":
            base, parts = _rust_crate_root(path), parts[1:]
        elif parts[0] == "self":
            base, parts = _rust_module_dir(path), parts[1:]
        elif parts[0] == "super":
            base = _rust_module_dir(path)
            while parts and parts[0] == "super":
                base, parts = posixpath.dirname(base), parts[1:]
        else:
            return []
        found: list[Candidate] = []
        for cut in range(len(parts), -1, -1):
            stem = posixpath.join(base, *parts[:cut]) if cut else base
            options = (f"{stem}.rs", f"{stem}/mod.rs") if cut else _rust_root_files(path, stem)
            found += [(file, tuple(parts[cut:])) for file in options if file in self.paths]
        return found


def first_part(names: Sequence[str]) -> set[str]:
    """The first dotted part of each name (``{"os"}`` for ``["os.path"]``)."""
    return {name.split(".", 1)[0] for name in names}


def _python_parts(path: str) -> list[str]:
    stem = path.removesuffix(".pyi").removesuffix(".py")
    parts = stem.split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return parts


def _rust_crate_root(path: str) -> str:
    directory = posixpath.dirname(path)
    probe = directory
    while probe:
        if posixpath.basename(probe) == "src":
            return probe
        probe = posixpath.dirname(probe)
    return directory


def _rust_module_dir(path: str) -> str:
    """The directory holding the submodules of ``path``'s module."""
    directory, base = posixpath.split(path)
    if base in ("mod.rs", "lib.rs", "main.rs"):
        return directory
    return posixpath.join(directory, base.removesuffix(".rs"))


def _rust_root_files(path: str, stem: str) -> tuple[str, ...]:
    if stem == _rust_module_dir(path):
        return (path,)
    return (f"{stem}.rs", f"{stem}/mod.rs", f"{stem}/lib.rs", f"{stem}/main.rs")


__all__ = ["JS_FAMILY", "ModuleMap", "first_part"]
