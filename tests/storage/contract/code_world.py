"""A small code index for the contract suite, built with the code domain's pure helpers.

Scope ``app`` holds three files: ``app/core.py`` (``run`` calls ``helper``), ``app/secret.py``
(``leak`` calls ``run``) and ``app/main.py`` (``main`` calls ``run`` and ``leak``). Scope
``other`` holds another ``app/core.py::run``. ``run`` and ``leak`` mention "needle alpha".
"""

from __future__ import annotations

from collections.abc import Sequence

from recallbox.code.types import Edge, Symbol
from recallbox.domains.code_index import edge_record, symbol_record
from recallbox.domains.privacy import normalize_source_path
from recallbox.storage.base import Store
from recallbox.storage.values_code import CodeFile, CodeFileWrite, CodeIndexWrite, code_key

SCOPE = "app"
OTHER = "other"
#: The identity of ``app/secret.py`` (what an exclusion by file identity names).
SECRET_IDENTITY = "7:42"

RUN = "app/core.py::run"
HELPER = "app/core.py::helper"
LEAK = "app/secret.py::leak"
MAIN = "app/main.py::main"


def key(symbol: str, scope: str = SCOPE) -> str:
    return code_key(scope, symbol)


def symbol(path: str, name: str, line: int, doc: str = "") -> Symbol:
    return Symbol(
        id=f"{path}::{name}" if name else path,
        name=name or path.rsplit("/", 1)[-1].split(".")[0],
        qualname=name,
        kind="function" if name else "module",
        file=path,
        start_line=line,
        end_line=line + 1,
        language="python",
        signature=f"def {name}(task)" if name else "",
        doc=doc,
    )


def file_write(
    path: str,
    functions: Sequence[tuple[str, str]],
    calls: Sequence[tuple[str, str, str | None]] = (),
    *,
    identity: str | None = None,
    digest: str = "h1",
) -> CodeFileWrite:
    """``functions``: (name, doc); ``calls``: (caller name, target name, target id)."""
    lines = [f"def {name}(task):\n    pass" for name, _ in functions]
    source = "\n".join(lines).splitlines()
    symbols = [symbol(path, "", 1)] + [
        symbol(path, name, 1 + 2 * i, doc) for i, (name, doc) in enumerate(functions)
    ]
    edges = [
        Edge("calls", f"{path}::{caller}", target, 2 + i, target_id, "resolved")
        for i, (caller, target, target_id) in enumerate(calls)
    ]
    return CodeFileWrite(
        CodeFile(path, normalize_source_path(path), "python", digest, 10, 1, identity),
        tuple(symbol_record(s, source) for s in symbols),
        tuple(edge_record(i, e) for i, e in enumerate(edges)),
    )


def build(store: Store) -> None:
    """Write both scopes."""
    store.write_code_index(
        CodeIndexWrite(
            scope=SCOPE,
            root="/nowhere/app",
            commit="abc123",
            files=(
                file_write(
                    "app/core.py",
                    [("run", "run the needle alpha task"), ("helper", "")],
                    [("run", "helper", HELPER)],
                ),
                file_write(
                    "app/secret.py",
                    [("leak", "the needle alpha secret")],
                    [("leak", "core.run", RUN)],
                    identity=SECRET_IDENTITY,
                ),
                file_write(
                    "app/main.py",
                    [("main", "")],
                    [("main", "core.run", RUN), ("main", "secret.leak", LEAK),
                     ("main", "print", None)],
                ),
            ),
        )
    )  # fmt: skip
    store.write_code_index(
        CodeIndexWrite(
            scope=OTHER,
            root="/nowhere/other",
            commit=None,
            files=(file_write("app/core.py", [("run", "run elsewhere")]),),
        )
    )
