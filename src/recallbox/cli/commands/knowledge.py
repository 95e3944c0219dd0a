"""The knowledge library: ``knowledge sync DIR [--scope S]`` and its report."""

from __future__ import annotations

from contextlib import ExitStack
from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import RecallboxGroup, emit_json, json_option, open_box

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

    from recallbox.types import SyncReport

PROGRESS_MIN_FILES = 20
"""Syncs of fewer files show no progress bar."""
REPORT_SKIPPED_FILES = 20
"""Skipped files listed in the text report (the rest are counted)."""


@click.group(cls=RecallboxGroup)
def knowledge() -> None:
    """Markdown notes indexed by section, for recall_context and knowledge search.

    Example: recallbox knowledge sync ~/notes --scope billing
    """


def render_sync(report: SyncReport) -> str:
    """The text report of a sync: files and sections by what happened, then the skipped."""
    scope = report.scope if report.scope is not None else "global library"
    lines = [
        f"synced {report.root} into {scope}: {report.files_seen} file(s) seen, "
        f"{report.files_added} added, {report.files_changed} changed, "
        f"{report.files_unchanged} unchanged, {report.files_removed} removed, "
        f"{len(report.skipped)} skipped",
        f"  sections: {report.sections_added} added, {report.sections_updated} updated, "
        f"{report.sections_renamed} renamed, {report.sections_moved} moved, "
        f"{report.sections_restored} restored, {report.sections_unchanged} unchanged, "
        f"{report.sections_removed} removed",
    ]
    lines += [f"  skipped {s.source}: {s.reason}" for s in report.skipped[:REPORT_SKIPPED_FILES]]
    if len(report.skipped) > REPORT_SKIPPED_FILES:
        lines.append(f"  … {len(report.skipped) - REPORT_SKIPPED_FILES} more skipped file(s)")
    return "\n".join(lines)


@knowledge.command("sync")
@click.argument("directory", type=click.Path(file_okay=False, path_type=str))
@click.option("--scope", default=None, help="A project name (default: the global library).")
@json_option
@click.pass_context
def knowledge_sync(ctx: click.Context, directory: str, scope: str | None, as_json: bool) -> None:
    """Index the .md, .markdown and .txt files under DIRECTORY, by section (incremental).

    Unchanged sections are skipped; a deleted file's sections are kept as removed; unreadable,
    binary or non-UTF-8 files are skipped with their reason.

    Example: recallbox knowledge sync ~/notes --scope billing --json
    """
    from rich.console import Console
    from rich.progress import Progress

    with open_box(ctx) as box, ExitStack() as stack:
        bars: list[tuple[Progress, TaskID]] = []

        def progress(done: int, total: int) -> None:
            if not bars and not as_json and total >= PROGRESS_MIN_FILES:
                bar = stack.enter_context(Progress(console=Console(stderr=True), transient=True))
                bars.append((bar, bar.add_task("syncing notes", total=total)))
            for bar, task in bars:
                bar.update(task, completed=done, total=total)

        report = box.sync_directory(directory, scope, progress=progress)
    if as_json:
        emit_json(report)
    else:
        click.echo(render_sync(report))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(knowledge)
