"""The ``recallbox`` command: parse, call the Box, render text or ``--json``.

Exit codes: 0 ok, 1 runtime error, 2 usage error, 130 interrupted.
Heavy modules are imported inside commands so ``recallbox --version`` stays fast.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from recallbox.box import Box
    from recallbox.types import DoctorReport, ImportReport

F = TypeVar("F", bound=Callable[..., Any])
VERSION = "0.1.0"
EXIT_INTERRUPTED = 130
DEMO_DB_NAME = "demo.db"
DEMO_QUERY = "pg-replica-1"

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def emit_json(value: Any) -> None:
    """Print exactly one JSON document on stdout."""
    click.echo(json.dumps(_jsonable(value), ensure_ascii=False, indent=2))


def json_option(func: F) -> F:
    """The shared ``--json`` flag."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(func)


@contextmanager
def open_box(ctx: click.Context, embedder: str | None = None) -> Iterator[Box]:
    """Open the Box for the command's ``--db`` and turn library errors into exit code 1."""
    from recallbox import RecallError
    from recallbox import open as open_recallbox
    from recallbox.config import load_settings

    settings = load_settings(ctx.obj.get("db"))
    try:
        with open_recallbox(settings.db, embedder=embedder) as box:
            yield box
    except RecallError as exc:
        raise click.ClickException(str(exc)) from exc


class RecallboxGroup(click.Group):
    """A group that maps Ctrl-C to exit code 130."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().main(*args, **kwargs)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)

    def invoke(self, ctx: click.Context) -> Any:
        # click's own main() turns KeyboardInterrupt into "Aborted!" and exit 1 before main()
        # above sees it; catching it here keeps the documented exit code 130.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)


@click.group(cls=RecallboxGroup)
@click.version_option(VERSION, prog_name="recallbox")
@click.option(
    "--db",
    envvar="RECALLBOX_DB",
    default=None,
    help="Database path (env RECALLBOX_DB; default $RECALLBOX_HOME/recallbox.db).",
)
@click.pass_context
def cli(ctx: click.Context, db: str | None) -> None:
    """recallbox: verbatim, bounded recall for AI agents.

    Example: recallbox demo
    """
    ctx.ensure_object(dict)
    ctx.obj["db"] = db


@cli.command()
@json_option
@click.pass_context
def init(ctx: click.Context, as_json: bool) -> None:
    """Create the database (idempotent) and print where it is.

    Example: recallbox --db ./agent.db init
    """
    with open_box(ctx) as box:
        info = {"db": box.location, "schema_version": box.store.schema_version()}
    if as_json:
        emit_json(info)
    else:
        click.echo(f"recallbox database ready at {info['db']} (schema {info['schema_version']})")


@cli.command()
@click.argument("channel")
@click.argument("role", type=click.Choice(["user", "assistant", "tool", "system"]))
@click.argument("content", required=False)
@click.option("--tool-call-id", default=None, help="Link a tool result to its call.")
@click.option(
    "--tool-calls",
    "tool_calls",
    default=None,
    help="Tool calls as a JSON list of {id,name,arguments}.",
)
@click.option(
    "--kind",
    type=click.Choice(["message", "machine_event", "compaction_summary"]),
    default="message",
    show_default=True,
)
@click.option("--hidden", is_flag=True, help="Store with model_visible=false.")
@click.option("--pending", is_flag=True, help="Queued, not yet delivered to the model.")
@click.option("--metadata", default=None, help="A JSON object stored verbatim.")
@json_option
@click.pass_context
def append(
    ctx: click.Context,
    channel: str,
    role: str,
    content: str | None,
    tool_call_id: str | None,
    tool_calls: str | None,
    kind: str,
    hidden: bool,
    pending: bool,
    metadata: str | None,
    as_json: bool,
) -> None:
    """Append one message to a thread (CONTENT, or stdin when omitted).

    Example: recallbox append ops user "deploy billing to staging"
    """
    if content is None:
        content = sys.stdin.read()
    try:
        calls = json.loads(tool_calls) if tool_calls else None
        meta = json.loads(metadata) if metadata else None
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not valid JSON: {exc}") from exc
    with open_box(ctx) as box:
        message = box.append(
            channel,
            role,
            content,
            tool_calls=calls,
            tool_call_id=tool_call_id,
            kind=kind,
            model_visible=not hidden,
            pending=pending,
            metadata=meta,
        )
    if as_json:
        emit_json(message)
    else:
        click.echo(message.id)


@cli.group()
def thread() -> None:
    """Inspect threads.

    Example: recallbox thread list
    """


@thread.command("list")
@json_option
@click.pass_context
def thread_list(ctx: click.Context, as_json: bool) -> None:
    """List every thread.

    Example: recallbox thread list --json
    """
    with open_box(ctx) as box:
        threads = box.threads()
    if as_json:
        emit_json(threads)
        return
    if not threads:
        click.echo("no threads yet")
    for t in threads:
        flag = " [quarantined]" if t.quarantined else ""
        click.echo(
            f"{t.channel}{flag}  generations={t.generation_count} messages={t.message_count}"
            + (f"  {t.title}" if t.title else "")
        )


@thread.command("show")
@click.argument("channel")
@click.option("--generation", type=int, default=None, help="Only this generation (1-based).")
@click.option("--width", type=int, default=160, show_default=True, help="Characters per message.")
@json_option
@click.pass_context
def thread_show(
    ctx: click.Context, channel: str, generation: int | None, width: int, as_json: bool
) -> None:
    """Show a thread's messages (the audit view), generation by generation.

    Example: recallbox thread show demo:deploy-staging --generation 1
    """
    with open_box(ctx) as box:
        messages = box.messages(channel, generation)
        info = box.thread(channel)
    if as_json:
        emit_json({"thread": info, "messages": messages})
        return
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[bold]{escape(info.channel)}[/bold] {escape(info.title or '')}")
    current = 0
    for m in messages:
        if m.generation != current:
            current = m.generation
            console.print(f"[bold cyan]── generation {current} ──[/bold cyan]")
        flags = [
            f
            for f, on in (
                ("hidden", not m.model_visible),
                ("pending", m.pending),
                ("superseded", m.superseded_by is not None),
            )
            if on
        ]
        head = f"{m.id} #{m.seq} {m.role}/{m.kind}" + (f" ({', '.join(flags)})" if flags else "")
        text = (
            m.content
            if len(m.content) <= width
            else m.content[:width] + f"… [{len(m.content)} chars]"
        )
        console.print(f"[dim]{escape(head)}[/dim] {escape(text)}")
        for call in m.tool_calls or []:
            args = json.dumps(call["arguments"], ensure_ascii=False)[:width]
            console.print(f"    [magenta]→ {escape(call['name'])}[/magenta] {escape(args)}")


def render_doctor(report: DoctorReport) -> str:
    """Doctor's text report."""
    lines = [f"schema version {report.schema_version}"]
    lines += [f"repaired: {line}" for line in report.repaired]
    for ix in report.indexes:
        state = "ok" if ix.healthy else "UNHEALTHY"
        lines.append(
            f"{ix.table}: {state} (integrity={'ok' if ix.integrity_ok else 'FAILED'}, "
            f"probes {ix.probes - ix.probe_misses}/{ix.probes}, rows {ix.index_rows}/"
            f"{ix.content_rows}, triggers={'ok' if ix.triggers_ok else 'MISSING'})"
            + (f" {ix.detail}" if ix.detail else "")
        )
    lines.append("healthy" if report.healthy else "unhealthy: run `recallbox doctor --repair`")
    return "\n".join(lines)


@cli.command()
@click.option("--repair", is_flag=True, help="Rebuild unhealthy indexes (never loses a row).")
@json_option
@click.pass_context
def doctor(ctx: click.Context, repair: bool, as_json: bool) -> None:
    """Check the full-text indexes against the stored messages; exit 1 when unhealthy.

    Example: recallbox doctor --repair
    """
    with open_box(ctx) as box:
        report = box.doctor(repair=repair)
    if as_json:
        emit_json({**_jsonable(report), "healthy": report.healthy})
    else:
        click.echo(render_doctor(report))
    if not report.healthy:
        ctx.exit(1)


@cli.command()
@click.option("--db", "demo_db", default=None, help="Where to create the demo database.")
@json_option
def demo(demo_db: str | None, as_json: bool) -> None:
    """Load the bundled sample agent thread into a fresh database and show what recallbox does.

    Example: recallbox demo --db /tmp/recallbox-demo.db
    """
    import recallbox
    from recallbox.samples.demo import load_sample, sample_notes

    if demo_db is None:
        demo_db = str(Path(tempfile.mkdtemp(prefix="recallbox-demo-")) / DEMO_DB_NAME)
    elif Path(demo_db).exists():
        raise click.ClickException(f"{demo_db} exists; the demo needs a fresh database path")
    with recallbox.open(demo_db) as box:
        channel = load_sample(box)
        info = box.thread(channel)
        gens = box.generations(channel)
        per_gen = {g.number: len(box.messages(channel, g.number)) for g in gens}
        report = box.doctor()
        found = box.search_memory(DEMO_QUERY, channel)
    notes = sample_notes()
    result = {
        "db": demo_db,
        "thread": info,
        "messages_per_generation": per_gen,
        "notes": sorted(notes),
        "indexes_healthy": report.healthy,
        "search_memory": {"query": DEMO_QUERY, "channel": channel, "result": found},
    }
    if as_json:
        emit_json(result)
        return
    click.echo(f"demo database: {demo_db}")
    click.echo(f"thread {info.channel!r} ({info.title})")
    click.echo(
        f"  {info.message_count} messages in {info.generation_count} generations: "
        + ", ".join(f"gen {n}: {c}" for n, c in per_gen.items())
    )
    click.echo(f"  sample notes: {', '.join(sorted(notes))}")
    click.echo(f"  full-text indexes: {'healthy' if report.healthy else 'UNHEALTHY'}")
    click.echo(f"next: recallbox --db {demo_db} thread show {channel}")
    click.echo(
        f"\nsearch_memory({DEMO_QUERY!r}, channel={channel!r}) reaches back across the "
        f"compaction ({len(found)} characters, cap 12 000):\n"
    )
    click.echo(found)
    click.echo(f"\nnext: recallbox --db {demo_db} read <message_id>")


@cli.command("search-memory")
@click.argument("query")
@click.option(
    "--channel", default=None, help="Search this thread (and other memory); default: all."
)
@json_option
@click.pass_context
def search_memory(ctx: click.Context, query: str, channel: str | None, as_json: bool) -> None:
    """Literal search over every generation: bounded windows with message ids (<= 12 000 chars).

    Example: recallbox search-memory "ssh -i ~/.ssh/staging_ed25519" --channel demo:deploy-staging
    """
    with open_box(ctx) as box:
        result = box.search_memory(query, channel)
    if as_json:
        emit_json({"query": query, "channel": channel, "result": result})
    else:
        click.echo(result)


@cli.command("read")
@click.argument("message_id")
@click.option("--offset", type=int, default=0, show_default=True, help="Character offset.")
@click.option(
    "--view",
    type=click.Choice(["audit", "model"]),
    default="audit",
    show_default=True,
    help="audit: everything stored; model: what the model saw.",
)
@json_option
@click.pass_context
def read(ctx: click.Context, message_id: str, offset: int, view: str, as_json: bool) -> None:
    """Print one message in full, a page (<= 12 000 chars) at a time.

    Example: recallbox read m_0123456789abcdef --offset 12000
    """
    with open_box(ctx) as box:
        text = box.read_message(message_id, view=view, offset=offset)
    if as_json:
        emit_json({"message_id": message_id, "view": view, "offset": offset, "text": text})
    else:
        click.echo(text)


@cli.command("compact")
@click.argument("channel")
@click.option(
    "--summary-file",
    type=click.File("r", encoding="utf-8"),
    required=True,
    help="The summary text ('-' reads stdin).",
)
@json_option
@click.pass_context
def compact(ctx: click.Context, channel: str, summary_file: Any, as_json: bool) -> None:
    """Close the thread's generation; the next one opens with the summary + resource directory.

    Example: recallbox compact ops --summary-file summary.md
    """
    summary = summary_file.read()
    with open_box(ctx) as box:
        generation = box.compact(channel, summary)
    if as_json:
        emit_json(generation)
    else:
        click.echo(f"{channel}: generation {generation.number} opened ({generation.id})")


TRANSCRIPT_FORMATS = ("claude-code", "codex", "openai")
WATCH_INTERVAL_S = 5.0
"""How often ``recallbox import --watch`` re-syncs."""
PROGRESS_MIN_BYTES = 4 << 20
"""Imports reading less than this show no progress bar."""
REPORT_SKIPPED_LINES = 20
"""Skipped lines listed per file in the text report (the rest are counted)."""


def render_import(report: ImportReport, *, verbose: bool = True) -> str:
    """The text report of an import: totals, then one block per file that did something."""
    lines = [
        f"{report.format}: {len(report.files)} file(s), {report.records} record(s) read, "
        f"{report.added} message(s) added, {report.skipped} line(s) skipped, "
        f"{len(report.errors)} error(s)"
    ]
    for f in report.files:
        if f.status == "unchanged" and not verbose:
            continue
        if f.error is not None:
            lines.append(f"  error      {f.path}: {f.error}")
            continue
        detail = f"{f.records} record(s), +{f.added} message(s)"
        if f.merged:
            detail += f", {f.merged} merged"
        if f.superseded:
            detail += f", {f.superseded} superseded"
        if f.truncated_tail:
            detail += ", unfinished last line left for the next sync"
        lines.append(
            f"  {f.status:<10} {f.path}" + ("" if f.status == "unchanged" else f"  {detail}")
        )
        lines.extend(
            f"    skipped line {s.line}: {s.reason}" for s in f.skipped[:REPORT_SKIPPED_LINES]
        )
        if len(f.skipped) > REPORT_SKIPPED_LINES:
            lines.append(f"    … {len(f.skipped) - REPORT_SKIPPED_LINES} more skipped line(s)")
        if f.unknown_records:
            counts = ", ".join(f"{k} ×{v}" for k, v in f.unknown_records.items())
            lines.append(f"    not messages (kept as events or counted): {counts}")
    return "\n".join(lines)


def _import_json(report: ImportReport) -> dict[str, Any]:
    return {
        "format": report.format,
        "files": _jsonable(report.files),
        "records": report.records,
        "added": report.added,
        "skipped": report.skipped,
        "errors": len(report.errors),
        "unknown_records": report.unknown_records,
    }


def _run_import(box: Box, format: str, paths: list[str] | None, *, bar: bool) -> ImportReport:
    """One sync, with a rich progress bar on stderr for long imports at a terminal."""
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not (bar and console.is_terminal):
        return box.import_transcripts(format, paths)
    progress = Progress(
        TextColumn("importing {task.fields[records]} records"),
        BarColumn(),
        DownloadColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
    )
    task = None

    def update(state: Any) -> None:
        nonlocal task
        if state.bytes_total < PROGRESS_MIN_BYTES:
            return
        if task is None:
            progress.start()
            task = progress.add_task("import", total=state.bytes_total, records=0)
        progress.update(task, completed=state.bytes_done, records=state.records)

    try:
        return box.import_transcripts(format, paths, progress=update)
    finally:
        progress.stop()


@cli.command("import")
@click.argument("format", type=click.Choice(TRANSCRIPT_FORMATS))
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--watch", is_flag=True, help="Re-sync every --interval seconds until Ctrl-C.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.1),
    default=WATCH_INTERVAL_S,
    show_default=True,
    help="Seconds between syncs with --watch.",
)
@json_option
@click.pass_context
def import_command(
    ctx: click.Context,
    format: str,
    paths: tuple[str, ...],
    watch: bool,
    interval: float,
    as_json: bool,
) -> None:
    """Import agent transcripts (files or directories); re-running adds only what is new.

    Without PATH, claude-code reads ~/.claude/projects and codex ~/.codex/sessions (and
    archived_sessions). Each transcript becomes the thread FORMAT:<session id>. With --watch
    the import repeats every --interval seconds until Ctrl-C (with --json: one JSON document
    per line per sync). Exit code 1 when a file failed (the others are still imported).

    Example: recallbox import claude-code ~/.claude/projects/-home-me-app --json
    """
    import time

    if format == "openai" and not paths:
        raise click.UsageError("OpenAI-format chats have no default location; name the files")
    named = list(paths) or None
    first = True
    with open_box(ctx) as box:
        while True:
            report = _run_import(box, format, named, bar=not as_json)
            quiet = not first and all(f.status == "unchanged" for f in report.files)
            if as_json and watch:
                click.echo(json.dumps(_jsonable(_import_json(report)), ensure_ascii=False))
            elif as_json:
                emit_json(_import_json(report))
            elif not quiet:  # --watch prints only the syncs that changed something
                click.echo(render_import(report, verbose=not watch))
            if not watch:
                break
            first = False
            time.sleep(interval)
    if report.errors:
        ctx.exit(1)


def embedder_option(default: str | None) -> Callable[[F], F]:
    """The shared ``--embedder`` option (env ``RECALLBOX_EMBEDDER``)."""
    return click.option(
        "--embedder",
        envvar="RECALLBOX_EMBEDDER",
        default=default,
        show_default=True,
        help="Embedding model: minilm, multilingual or hash (env RECALLBOX_EMBEDDER).",
    )


def render_hits(hits: list[Any]) -> str:
    """Text rendering of ranked hits: a header line per hit, then its text indented."""
    if not hits:
        return "no hits"
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        legs = []
        if hit.keyword is not None:
            legs.append(f"k={hit.keyword:.3f}")
        if hit.vector is not None:
            legs.append(f"v={hit.vector:.3f}")
        lines.append(
            f"{rank}. {hit.score:.3f} {hit.id} [{hit.channel}] {hit.role or ''} ({' '.join(legs)})"
        )
        lines.extend("    " + line for line in hit.text.splitlines() or [""])
    return "\n".join(lines)


@cli.command()
@click.argument("query")
@click.option(
    "--domain",
    default="sessions",
    show_default=True,
    help="memory, knowledge, sessions, transcripts or code (sessions and transcripts in "
    "this version).",
)
@click.option("--channel", default=None, help="Only this thread.")
@click.option("--limit", type=int, default=10, show_default=True, help="At most this many hits.")
@click.option("--no-embed", is_flag=True, help="Keyword ranking only (no embedder call).")
@embedder_option(None)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    domain: str,
    channel: str | None,
    limit: int,
    no_embed: bool,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Ranked hits for QUERY (hybrid BM25 + vectors when an embedder is given).

    Example: recallbox search "deploy billing" --channel ops --limit 5 --json
    """
    with open_box(ctx, embedder) as box:
        hits = box.search(
            query, domain=domain, channel=channel, limit=limit, allow_embed=not no_embed
        )
    if as_json:
        emit_json(hits)
    else:
        click.echo(render_hits(hits))


@cli.command()
@click.option("--all", "embed_all", is_flag=True, help="Embed every message without a vector.")
@click.option("--lazy", is_flag=True, help="Embed only messages recall drilled into.")
@click.option("--rebuild", is_flag=True, help="Drop vectors of any other model, then embed.")
@click.option("--batch-size", type=int, default=None, help="Messages per embedder call.")
@embedder_option("minilm")
@json_option
@click.pass_context
def embed(
    ctx: click.Context,
    embed_all: bool,
    lazy: bool,
    rebuild: bool,
    batch_size: int | None,
    embedder: str,
    as_json: bool,
) -> None:
    """Write message vectors (nothing is embedded at write time); resumable, Ctrl-C safe.

    Example: recallbox embed --all --embedder minilm
    """
    if embed_all == lazy and not rebuild:
        raise click.UsageError("choose one of --all, --lazy (or --rebuild)")
    from rich.progress import Progress

    with open_box(ctx, embedder) as box:
        with Progress(transient=True, disable=as_json) as bar:
            task = bar.add_task("embedding", total=None)

            def progress(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            count = box.embed_all(
                rebuild=rebuild, lazy=lazy, batch_size=batch_size, progress=progress
            )
        model = box.embedder.model_id if box.embedder is not None else None
    if as_json:
        emit_json({"embedded": count, "model_id": model, "lazy": lazy, "rebuild": rebuild})
    else:
        click.echo(f"embedded {count} message(s) with {model}")


@cli.command()
@click.option("--http", is_flag=True, help="Serve streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP bind address.")
@click.option("--port", type=int, default=8765, show_default=True, help="HTTP port.")
@click.option(
    "--allow-remote", is_flag=True, help="Allow a non-loopback --host (exposes your history)."
)
@click.pass_context
def mcp(ctx: click.Context, http: bool, host: str, port: int, allow_remote: bool) -> None:
    """Run the MCP server (stdio by default; --http for streamable HTTP on 127.0.0.1).

    Example: claude mcp add recallbox -- recallbox --db ~/agent.db mcp
    """
    if http and host not in LOOPBACK_HOSTS and not allow_remote:
        raise click.UsageError(f"--host {host} is not a loopback address; add --allow-remote")
    from recallbox.config import load_settings
    from recallbox.mcp_server import serve

    serve(load_settings(ctx.obj.get("db")), http=http, host=host, port=port)


@cli.group()
def hook() -> None:
    """Helpers that agent hooks call (they never block the agent: errors go to stderr, exit 0).

    Example: recallbox hook claude-code < hook-payload.json
    """


@hook.command("claude-code")
@click.pass_context
def hook_claude_code(ctx: click.Context) -> None:
    """Handle one Claude Code hook event (its JSON payload on stdin).

    PreCompact/SessionEnd import the transcript; SessionStart after a compaction also prints the
    thread's channel, the closed generation's resource directory and how to search it.

    Example: recallbox hook claude-code   (registered as a hook command in ~/.claude/settings.json)
    """
    from recallbox import RecallError
    from recallbox import open as open_recallbox
    from recallbox.config import load_settings
    from recallbox.hooks import handle_claude_code_hook

    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the hook payload is not a JSON object")
        with open_recallbox(load_settings(ctx.obj.get("db")).db) as box:
            text = handle_claude_code_hook(box, payload)
    except (ValueError, OSError, RecallError) as exc:
        click.echo(f"recallbox hook: {exc}", err=True)
        return
    if text:
        click.echo(text)


def main() -> None:
    """Console-script entry point."""
    cli(obj={})
