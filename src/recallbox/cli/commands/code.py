"""The code domain: ``code index``, ``code search``, ``code callers``, ``code callees``
(DESIGN §4.5, issue #11)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from recallbox.cli.commands.search import embedder_option
from recallbox.cli.shared import RecallboxGroup, emit_json, json_option, open_box, usage_error

if TYPE_CHECKING:
    from recallbox.code.types import CodeIndexReport
    from recallbox.types import Hit

DEFAULT_CODE_LIMIT = 10
#: Skipped files listed by ``code index`` (the rest are counted).
SKIPPED_SHOWN = 10


@click.group(cls=RecallboxGroup)
def code() -> None:
    """The code index: symbols and call edges of your repositories (needs the code extra to
    index: pip install 'recallbox[code]'; searching does not).

    Example: recallbox code index . && recallbox code search search_memory
    """


def render_report(report: CodeIndexReport) -> str:
    """The text form of ``code index``."""
    resolution = "every edge" if report.full_resolution else f"{report.edges_reresolved} edge(s)"
    lines = [
        f"indexed {report.root} as scope {report.scope!r}"
        + (f" (commit {report.commit[:12]})" if report.commit else ""),
        f"  files: {report.files_seen} seen, {report.files_parsed} parsed, "
        f"{report.files_unchanged} unchanged, {report.files_deleted} deleted",
        f"  scope now holds {report.total_files} file(s), {report.total_symbols} symbol(s), "
        f"{report.total_edges} edge(s); resolved {resolution}, {report.edges_updated} changed",
    ]
    if report.languages:
        lines.append(
            "  parsed: " + ", ".join(f"{k} {v}" for k, v in sorted(report.languages.items()))
        )
    if report.skipped:
        lines.append(
            "  skipped: " + ", ".join(f"{k} {v}" for k, v in sorted(report.skipped.items()))
        )
        lines.extend(f"    {s.path} ({s.reason})" for s in report.skipped_files[:SKIPPED_SHOWN])
    if report.languages_skipped:
        missing = ", ".join(f"{k} {v}" for k, v in sorted(report.languages_skipped.items()))
        lines.append(f"  no grammar installed: {missing}")
    lines.extend(f"  failed: {failure.path}: {failure.error}" for failure in report.failed)
    return "\n".join(lines)


def _where(hit: Hit) -> str:
    lines = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines is not None else ""
    stale = " STALE (changed since indexed; run `recallbox code index`)" if hit.stale else ""
    return f"[{hit.scope}] {hit.source}{lines}{stale}"


def render_code_hits(
    hits: list[Hit], *, callers_of: str | None = None, callees_of: str | None = None
) -> str:
    """Ranked code hits (or callers, with their depth, or callees in call order): a head line,
    callers, the snippet."""
    if not hits:
        if callees_of is not None:
            return f"no resolved calls from {callees_of}"
        return f"no callers of {callers_of}" if callers_of else "no hits"
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        if callees_of is not None:
            lines.append(f"{rank}. {hit.id} {_where(hit)}")
        elif callers_of is not None:
            lines.append(f"{rank}. depth {int(hit.explain.get('depth', 1))} {hit.id} {_where(hit)}")
        else:
            lines.append(f"{rank}. {hit.score:.3f} {hit.id} {_where(hit)}")
        if hit.callers:
            lines.append("   callers: " + ", ".join(hit.callers))
        lines.extend("    " + line for line in hit.text.splitlines()[:8] or [""])
    return "\n".join(lines)


@code.command("index")
@click.argument("path", type=click.Path(file_okay=False))
@click.option("--scope", default=None, help="The project name (default: the folder's name).")
@click.option("--project", default=None, help="The same as --scope.")
@json_option
@click.pass_context
def code_index(
    ctx: click.Context, path: str, scope: str | None, project: str | None, as_json: bool
) -> None:
    """Index (or re-index) the repository at PATH: only changed files are parsed again.

    Example: recallbox code index ~/src/myapp --project myapp
    """
    if scope is not None and project is not None and scope != project:
        raise usage_error("give --scope or --project, not both", ctx)
    from rich.console import Console
    from rich.progress import Progress

    from recallbox.code.arguments import check_root, check_scope

    # The arguments first: a missing folder or a bad name must not create the database.
    check_scope(scope if scope is not None else project, check_root(path).name)

    with (
        open_box(ctx) as box,
        Progress(console=Console(stderr=True), transient=True, disable=as_json) as bar,
    ):
        task = bar.add_task("indexing", total=None)

        def progress(done: int, total: int, current: str) -> None:
            bar.update(task, completed=done, total=total, description=current[-40:])

        report = box.index_code(path, scope if scope is not None else project, progress=progress)
    if as_json:
        emit_json(report)
    else:
        click.echo(render_report(report))


@code.command("search")
@click.argument("query")
@click.option("--scope", default=None, help="Only this project's code.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=DEFAULT_CODE_LIMIT,
    show_default=True,
    help="At most this many hits.",
)
@click.option("--no-embed", is_flag=True, help="Keyword ranking only (no embedder call).")
@embedder_option(None)
@json_option
@click.pass_context
def code_search(
    ctx: click.Context,
    query: str,
    scope: str | None,
    limit: int,
    no_embed: bool,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Find symbols: where is QUERY defined and who calls it (the top hit lists its callers).

    Example: recallbox code search searchMemory --scope src --json
    """
    with open_box(ctx, embedder=embedder) as box:
        hits = box.search(query, domain="code", scope=scope, limit=limit, allow_embed=not no_embed)
    if as_json:
        emit_json(hits)
    else:
        click.echo(render_code_hits(hits))


@code.command("callers")
@click.argument("symbol")
@click.option(
    "--depth",
    type=click.IntRange(min=1, max=5),
    default=1,
    show_default=True,
    help="Follow callers of callers this many hops.",
)
@click.option("--scope", default=None, help="The project, when SYMBOL is in several.")
@json_option
@click.pass_context
def code_callers(
    ctx: click.Context, symbol: str, depth: int, scope: str | None, as_json: bool
) -> None:
    """The symbols that call SYMBOL (an id such as src/app.py::App.run), nearest first.

    Example: recallbox code callers 'recallbox/box.py::Box.search_memory' --depth 2
    """
    with open_box(ctx) as box:
        hits = box.callers(symbol, depth=depth, scope=scope)
    if as_json:
        emit_json(hits)
    else:
        click.echo(render_code_hits(hits, callers_of=symbol))


@code.command("callees")
@click.argument("symbol")
@click.option("--scope", default=None, help="The project, when SYMBOL is in several.")
@json_option
@click.pass_context
def code_callees(ctx: click.Context, symbol: str, scope: str | None, as_json: bool) -> None:
    """The symbols SYMBOL calls (resolved calls only), in the order of its first calls.

    Example: recallbox code callees 'recallbox/box.py::Box.search_memory'
    """
    with open_box(ctx) as box:
        hits = box.callees(symbol, scope=scope)
    if as_json:
        emit_json(hits)
    else:
        click.echo(render_code_hits(hits, callees_of=symbol))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(code)
