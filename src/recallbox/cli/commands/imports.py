"""Transcript import: ``import FORMAT [PATH…] [--watch]`` and its report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from recallbox.cli.shared import (
    RecallboxCommand,
    emit_json,
    json_option,
    jsonable,
    open_box,
    usage_error,
)

if TYPE_CHECKING:
    from recallbox.box import Box
    from recallbox.types import ImportProgress, ImportReport

TRANSCRIPT_FORMATS = ("claude-code", "codex", "openai")
WATCH_INTERVAL_S = 5.0
"""How often ``recallbox import --watch`` re-syncs."""
WATCH_MIN_INTERVAL_S = 0.1
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
    if report.hint:
        lines.append(f"  {report.hint}")
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
        if f.duplicates:
            detail += f", {f.duplicates} already imported from another file of the session"
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
        if f.other_session_ids and f.channels:
            others = ", ".join(f.other_session_ids)
            lines.append(f"    also names session(s) {others}; imported into {f.channels[0]}")
    return "\n".join(lines)


def import_json(report: ImportReport) -> dict[str, Any]:
    """The ``--json`` document of an import."""
    return {
        "format": report.format,
        "files": jsonable(report.files),
        "records": report.records,
        "added": report.added,
        "skipped": report.skipped,
        "errors": len(report.errors),
        "unknown_records": report.unknown_records,
        "hint": report.hint,
    }


def run_import(box: Box, format: str, paths: list[str] | None, *, bar: bool) -> ImportReport:
    """One sync, with a progress bar on stderr for long imports at a terminal."""
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

    def update(state: ImportProgress) -> None:
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


@click.command("import", cls=RecallboxCommand)
@click.argument("format", type=click.Choice(TRANSCRIPT_FORMATS))
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--watch", is_flag=True, help="Re-sync every --interval seconds until Ctrl-C.")
@click.option(
    "--interval",
    type=click.FloatRange(min=WATCH_MIN_INTERVAL_S),
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
    archived_sessions). Each transcript becomes the thread FORMAT:<session id>, the session id
    its records name (a copy of a transcript under another name adds nothing twice). With
    --watch the import repeats every --interval seconds until Ctrl-C, printing only the syncs
    that changed something (with --json: one JSON document per line). Exit code 1 when a file
    failed (the others are still imported; a file that looks like another format is refused
    with a "wrong format?" hint).

    Example: recallbox import claude-code ~/.claude/projects/-home-me-app --json
    """
    import time

    if format == "openai" and not paths:
        raise usage_error("OpenAI-format chats have no default location; name the files", ctx)
    named = list(paths) or None
    first = True
    with open_box(ctx) as box:
        while True:
            report = run_import(box, format, named, bar=not as_json)
            quiet = not first and all(f.status == "unchanged" for f in report.files)
            if quiet:  # --watch prints only the syncs that changed something (#17)
                pass
            elif as_json:
                emit_json(import_json(report), indent=None if watch else 2)
            else:
                click.echo(render_import(report, verbose=not watch))
            if not watch:
                break
            first = False
            time.sleep(interval)
    if report.errors:
        ctx.exit(1)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(import_command)
