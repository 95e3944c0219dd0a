"""Looking after a database: ``doctor``, and the bundled ``demo``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import (
    EXIT_RUNTIME_ERROR,
    RecallboxCommand,
    clip,
    db_choice,
    emit_json,
    is_url,
    json_option,
    jsonable,
    open_box,
)

if TYPE_CHECKING:
    from recallbox.samples.demo import CodeDemo, CuratedDemo
    from recallbox.types import DoctorReport

DEMO_DIR = "demo"
DEMO_DB_NAME = "demo.db"
DEMO_QUERY = "pg-replica-1"
SQLITE_SIDE_FILES = ("-wal", "-shm")


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


@click.command(cls=RecallboxCommand)
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
        emit_json({**jsonable(report), "healthy": report.healthy})
    else:
        click.echo(render_doctor(report))
    if not report.healthy:
        ctx.exit(EXIT_RUNTIME_ERROR)


def demo_location(ctx: click.Context) -> tuple[Path, bool]:
    """Where the demo database goes, and whether a previous demo database is replaced there.

    ``--db PATH`` must name a fresh path; without it the demo keeps one database under
    ``$RECALLBOX_HOME/demo/`` (replaced on each run). ``RECALLBOX_DB`` is ignored: the demo
    never loads its sample into your own database.
    """
    choice = db_choice(ctx)
    if choice.source == "option" and choice.value is not None:
        if is_url(choice.value):
            raise click.UsageError(
                "the demo makes a fresh SQLite file: --db takes a path here, not "
                f"{clip(choice.value)} (to try it on PostgreSQL: `recallbox migrate --from "
                "DEMO.db --to postgresql://…`)"
            )
        path = Path(choice.value).expanduser()
        if path.exists():
            raise click.ClickException(
                f"{choice.value} exists; the demo needs a fresh database path (or omit --db)"
            )
        return path, False
    from recallbox.config import default_home

    path = default_home() / DEMO_DIR / DEMO_DB_NAME
    replaced = path.exists()
    for name in (path.name, *(path.name + side for side in SQLITE_SIDE_FILES)):
        (path.parent / name).unlink(missing_ok=True)
    return path, replaced


@click.command(cls=RecallboxCommand)
@json_option
@click.pass_context
def demo(ctx: click.Context, as_json: bool) -> None:
    """Load the bundled sample agent thread into a fresh database and show what recallbox does.

    The database is kept (the first line says where): at --db PATH, a path that must not exist
    yet, or else at $RECALLBOX_HOME/demo/demo.db, replaced on each run.

    Example: recallbox demo --db /tmp/recallbox-demo.db
    """
    import recallbox
    from recallbox.samples.demo import run_demo

    path, replaced = demo_location(ctx)
    with recallbox.open(path) as box:
        result = run_demo(box, DEMO_QUERY)
    if as_json:
        emit_json(
            {
                "db": str(path),
                "replaced_previous": replaced,
                "thread": result.thread,
                "messages_per_generation": result.messages_per_generation,
                "notes": result.notes,
                "indexes_healthy": result.indexes_healthy,
                "search_memory": {
                    "query": result.query,
                    "channel": result.thread.channel,
                    "result": result.found,
                },
                "memory_keys": result.curated.memory_keys,
                "sections": result.curated.sections,
                "recall_context": {
                    "query": result.curated.query,
                    "source": result.curated.source,
                    "result": result.curated.context,
                },
                "recall": result.recalled.to_json() if result.recalled is not None else None,
                "ui": f"recallbox ui --db {path}",
                "code": result.code,
            }
        )
        return
    where = " (kept; the previous demo database was replaced)" if replaced else " (kept)"
    info, per_gen = result.thread, result.messages_per_generation
    click.echo(f"demo database: {path}{where}")
    click.echo(f"thread {info.channel!r} ({info.title})")
    click.echo(
        f"  {info.message_count} messages in {info.generation_count} generations: "
        + ", ".join(f"gen {n}: {c}" for n, c in per_gen.items())
    )
    click.echo(f"  sample notes: {', '.join(result.notes)}")
    click.echo(f"  full-text indexes: {'healthy' if result.indexes_healthy else 'UNHEALTHY'}")
    click.echo(f"next: recallbox --db {path} thread show {info.channel}")
    click.echo(
        f"\nsearch_memory({DEMO_QUERY!r}, channel={info.channel!r}) reaches back across the "
        f"compaction ({len(result.found)} characters, cap 12 000):\n"
    )
    click.echo(result.found)
    click.echo(f"\nnext: recallbox --db {path} read <message_id>")
    _echo_curated(result.curated, path)
    _echo_code_step(path, result.code)
    if result.recalled is not None:
        click.echo(
            f"\nrecall({result.recalled.query!r}) fills one bucket per domain "
            f"({len(result.recalled.render())} characters, budget "
            f"{result.recalled.budget_chars}):\n"
        )
        click.echo(result.recalled.render())
    click.echo(f"\nbrowse it: recallbox ui --db {path}")


def _echo_curated(curated: CuratedDemo, path: Path) -> None:
    """The knowledge and memory part of the demo's text output."""
    click.echo(
        f"\nremembered {', '.join(curated.memory_keys)}; indexed the sample notes "
        f"({curated.sections} sections)"
    )
    click.echo(
        f"recall_context({curated.query!r}, source={curated.source!r}) returns the exact "
        "entries, not the whole file:\n"
    )
    click.echo(curated.context.render() or "(nothing matched)")
    click.echo(f'\nnext: recallbox --db {path} recall-context "staging key"')


def _echo_code_step(path: Path, step: CodeDemo | None) -> None:
    if step is None:
        click.echo("\ncode index: skipped (pip install 'recallbox[code]' to index code)")
        return
    click.echo(
        f"\ncode index: {step.files} sample file(s), {step.symbols} symbol(s) as scope "
        f"{step.scope!r}; search({step.query!r}, domain='code'):"
    )
    for rank, hit in enumerate(step.hits, start=1):
        lines = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
        callers = f"  <- called by {', '.join(hit.callers)}" if hit.callers else ""
        click.echo(f"  {rank}. {hit.id} ({hit.source}{lines}){callers}")
    click.echo(f"next: recallbox --db {path} code callers '{step.hits[0].id}'" if step.hits else "")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(doctor)
    group.add_command(demo)
