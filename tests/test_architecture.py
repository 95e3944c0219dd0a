"""Layering rules (STYLE §2, issue #9), checked on every module's source with ast.

* drivers (apsw, sqlite_vec, psycopg, …) only inside their backend package;
* domains, ranking and text import no backend and no driver; entrypoints no backend;
* no backend module or type is imported outside its package, except by ``storage/__init__``
  (``open_store``, the one place a backend is chosen);
* no SQL outside ``storage/``;
* no import cycle between recallbox modules (imports inside functions count);
* no module over :data:`MAX_MODULE_LINES` lines;
* every public ``Box`` method is a few lines of validate-and-delegate;
* no code compares a value with a domain name (dispatch goes through the registry);
* the person-facing audit verbs are never used on an agent-facing path.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import recallbox
from recallbox.domains.registry import DOMAINS

SRC = Path(__file__).resolve().parents[1] / "src" / "recallbox"
DRIVERS = {"apsw", "sqlite3", "sqlite_vec", "psycopg", "psycopg_pool", "pgvector"}
BACKENDS = {
    "storage/sqlite/": {"apsw", "sqlite_vec"},
    "storage/postgres/": {"psycopg", "psycopg_pool", "pgvector"},
}
MAX_MODULE_LINES = 500
LONG_MODULES_ALLOWED: set[str] = set()
#: A verb's body, its docstring aside: a keyword argument per line counts each line.
MAX_VERB_LINES = 12
MAX_VERB_STATEMENTS = 8
SQL = re.compile(
    r"\bSELECT\b.*\bFROM\b|\bINSERT\s+INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bCREATE\s+(TABLE|INDEX|VIRTUAL|TRIGGER)\b|\bPRAGMA\s+\w+|\bBEGIN\s+IMMEDIATE\b",
    re.DOTALL,
)
#: Agent-facing modules (DESIGN §5): the Box's person-facing audit verbs are forbidden there.
AGENT_FACING = {
    "mcp_server.py",
    "hooks.py",
    "recall.py",
    "injection.py",
    "search.py",
    "domains/threads.py",
    "domains/other_memory.py",
    "domains/reading.py",
    "domains/registry.py",
    "domains/hybrid.py",
    "domains/sessions.py",
    "domains/sessions_render.py",
    "domains/transcripts.py",
    "domains/knowledge.py",
    "domains/memory.py",
    "domains/context.py",
    "domains/code.py",
    "domains/code_calls.py",
}
AUDIT_VERBS = {"messages", "message", "threads", "memories"}
#: The store's audit reads, forbidden on the search paths this package owns.
STORE_AUDIT_READS = {
    "get_message",
    "list_threads",
    "iter_messages",
    "messages",
    "memory_entries",
    "memory_entry",
    "document_sections",
    "code_graph",
    "code_call_edges",
}
SEARCH_PATHS = AGENT_FACING - {"mcp_server.py", "hooks.py"}
#: The erasing verbs (DESIGN §7a): a person runs them (CLI, Python), never an agent or the web
#: inspector — neither the Box verbs nor the store methods under them.
ERASING = {"purge", "redact", "backup", "secure_delete", "purge_rows", "redact_rows"}
ERASING |= {"finish_erasure"}


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(SRC.rglob("*.py")):
        yield path.relative_to(SRC).as_posix(), path


@cache
def tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def module_name(rel: str) -> str:
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["recallbox", *parts])


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, anywhere in it (functions and TYPE_CHECKING included);
    ``from package import name`` counts ``package.name`` when that is a module."""
    names: set[str] = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


KNOWN = {module_name(rel) for rel, _ in modules()}


def test_drivers_only_inside_their_backend() -> None:
    offenders = []
    for rel, path in modules():
        used = {name.split(".")[0] for name in imports_of(path)} & DRIVERS
        allowed = next((d for prefix, d in BACKENDS.items() if rel.startswith(prefix)), set())
        if used - allowed:
            offenders.append((rel, sorted(used - allowed)))
    assert offenders == []


def test_domain_ranking_and_text_code_never_touch_backends_or_drivers() -> None:
    for rel, path in modules():
        if not rel.startswith(("domains/", "ranking/", "text/")):
            continue
        for name in imports_of(path):
            assert not name.startswith(("recallbox.storage.sqlite", "recallbox.storage.postgres"))
            assert not name.startswith(("recallbox.cli", "recallbox.mcp_server", "recallbox.box"))
            assert name.split(".")[0] not in DRIVERS, (rel, name)


def test_no_backend_module_outside_its_package() -> None:
    offenders = []
    for rel, path in modules():
        for backend in ("storage/sqlite/", "storage/postgres/"):
            package = "recallbox." + backend.strip("/").replace("/", ".")
            inside = rel.startswith(backend) or rel == "storage/__init__.py"
            used = [n for n in imports_of(path) if n == package or n.startswith(package + ".")]
            if used and not inside:
                offenders.append((rel, used))
    assert offenders == []


def test_entrypoints_do_not_import_backends() -> None:
    for rel, path in modules():
        if rel in ("cli.py", "mcp_server.py", "hooks.py") or rel.startswith(("cli/", "web/")):
            assert not any(i.startswith("recallbox.storage.sqlite") for i in imports_of(path))


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value
        elif isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
            yield node.lineno, "{}".join(str(p) for p in parts)


def test_no_sql_outside_storage() -> None:
    offenders = [
        (rel, line)
        for rel, path in modules()
        if not rel.startswith("storage/")
        for line, text in _strings(path)
        if SQL.search(text)
    ]
    assert offenders == []


def test_no_import_cycle_between_modules() -> None:
    graph = {
        module_name(rel): {n for n in imports_of(path) if n in KNOWN} - {module_name(rel)}
        for rel, path in modules()
    }
    cycles = [c for c in _strongly_connected(graph) if len(c) > 1]
    assert cycles == []


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                out.append(sorted(component))
    return out


def test_the_cycle_check_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [c for c in _strongly_connected(graph) if len(c) > 1] == [["a", "b", "c"]]


def test_no_module_is_too_long() -> None:
    long = {
        rel: n
        for rel, path in modules()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert set(long) <= LONG_MODULES_ALLOWED, long


#: Modules holding the Box and the verb mixins it is made of (``box_*.py``).
BOX_MODULES = ("box.py", "box_*.py")


def _box_verbs() -> Iterator[ast.FunctionDef]:
    for pattern in BOX_MODULES:
        for path in sorted(SRC.glob(pattern)):
            for klass in tree(path).body:
                if not isinstance(klass, ast.ClassDef):
                    continue
                for node in klass.body:
                    if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                        yield node


def test_the_box_is_made_of_its_verb_mixins() -> None:
    mixins = {klass.__name__ for klass in recallbox.Box.__mro__ if klass.__module__ != "builtins"}
    assert {"Box", "CuratedVerbs"} <= mixins


def test_every_public_box_method_is_a_thin_verb() -> None:
    fat = {}
    for verb in _box_verbs():
        body = verb.body[1:] if ast.get_docstring(verb) else verb.body
        lines = (body[-1].end_lineno or 0) - body[0].lineno + 1
        statements = sum(isinstance(n, ast.stmt) for stmt in body for n in ast.walk(stmt))
        if lines > MAX_VERB_LINES or statements > MAX_VERB_STATEMENTS:
            fat[verb.name] = (lines, statements)
    assert fat == {}
    assert len(list(_box_verbs())) > 20


def test_no_code_compares_with_a_domain_name() -> None:
    offenders = []
    for rel, path in modules():
        if rel == "domains/registry.py":
            continue
        for node in ast.walk(tree(path)):
            if not isinstance(node, ast.Compare):
                continue
            operands = [node.left, *node.comparators]
            names = {n.value for n in operands if isinstance(n, ast.Constant)}
            for n in operands:
                if isinstance(n, ast.Tuple | ast.List | ast.Set):
                    names |= {e.value for e in n.elts if isinstance(e, ast.Constant)}
            by_constant = any(
                (isinstance(n, ast.Attribute) and n.attr == "DOMAIN")
                or (isinstance(n, ast.Name) and n.id == "DOMAIN")
                for n in operands
            )
            if names & set(DOMAINS) or by_constant:
                offenders.append((rel, node.lineno))
    assert offenders == []


def _calls(path: Path, names: set[str]) -> list[tuple[int, str]]:
    return [
        (node.lineno, node.func.attr)
        for node in ast.walk(tree(path))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
    ]


def test_audit_verbs_never_serve_an_agent() -> None:
    offenders = {}
    for rel, path in modules():
        forbidden = AUDIT_VERBS | (STORE_AUDIT_READS if rel in SEARCH_PATHS else set())
        if rel in AGENT_FACING and (found := _calls(path, forbidden)):
            offenders[rel] = found
    assert offenders == {}
    assert {"domains/threads.py", "mcp_server.py"} <= {rel for rel, _ in modules()}


def test_erasing_verbs_never_serve_an_agent() -> None:
    offenders = {
        rel: found
        for rel, path in modules()
        if (rel in AGENT_FACING or rel.startswith("web/")) and (found := _calls(path, ERASING))
    }
    assert offenders == {}
