"""Erasing and copying a database: ``redact``, ``purge``, ``backup`` (DESIGN §7a).

Person-facing only: these are never MCP tools. ``purge`` asks for confirmation unless
``--yes`` (or ``--json``, which never prompts).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import (
    EXIT_RUNTIME_ERROR,
    RecallboxCommand,
    emit_json,
    json_option,
    jsonable,
    open_box,
    usage_error,
)

if TYPE_CHECKING:
    from recallbox.types import PurgeReport


def _targets(func: click.decorators.FC) -> click.decorators.FC:
    for option in reversed(
        (
            click.option("--message", "message_id", metavar="ID", help="One message id."),
            click.option("--channel", metavar="CHANNEL", help="A whole thread."),
            click.option("--key", metavar="KEY", help="One memory entry (e.g. PIT03)."),
            click.option(
                "--source",
                metavar="NAME",
                help="Knowledge documents and code files (a basename or a path).",
            ),
            click.option("--handle", metavar="HANDLE", help="One stored tool output."),
        )
    ):
        func = option(func)
    return func


def render_purge(report: PurgeReport) -> str:
    """The text of a purge report."""
    parts = [
        f"{getattr(report, name)} {name}"
        for name in ("messages", "threads", "chunks", "sections", "memories", "outputs", "files")
        if getattr(report, name)
    ]
    line = "purged " + (", ".join(parts) or "nothing")
    line += f"; {report.vectors} vectors and {report.hits} hit-log rows removed"
    if report.tables_rewritten:
        line += f"; {report.tables_rewritten} tables rewritten (VACUUM FULL)"
    if not report.wal_truncated:
        line += (
            "\nwarning: another process kept reading, so the -wal file may still hold old "
            "copies; run the purge again when it is done"
        )
    if not report.physical:
        line += (
            "\nnote: the rows are gone for every reader, but PostgreSQL keeps their old bytes "
            "in its table files until they are rewritten: add --vacuum-full (it locks each "
            "table while it runs)"
        )
    return line


@click.command(cls=RecallboxCommand)
@click.argument("pattern")
@_targets
@click.option("--regex", is_flag=True, help="PATTERN is a Python regular expression.")
@json_option
@click.pass_context
def redact(
    ctx: click.Context,
    pattern: str,
    message_id: str | None,
    channel: str | None,
    key: str | None,
    source: str | None,
    handle: str | None,
    regex: bool,
    as_json: bool,
) -> None:
    """Replace PATTERN by [REDACTED] in what you name (and in hit-log queries), for good.

    Example: recallbox redact 'sk-live-1234' --channel claude-code:abc
    """
    try:
        compiled: str | re.Pattern[str] = re.compile(pattern) if regex else pattern
    except re.error as exc:
        raise usage_error(f"--regex: {pattern!r} is not a regular expression ({exc})", ctx) from exc
    with open_box(ctx) as box:
        count = box.redact(
            message_id, compiled, channel=channel, handle=handle, key=key, source=source
        )
    if as_json:
        emit_json({"replacements": count})
    else:
        click.echo(f"redacted {count} occurrence{'s' if count != 1 else ''}")


@click.command(cls=RecallboxCommand)
@_targets
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--vacuum-full",
    is_flag=True,
    help="PostgreSQL: also rewrite every table (VACUUM FULL) so no old copy stays on disk.",
)
@json_option
@click.pass_context
def purge(
    ctx: click.Context,
    message_id: str | None,
    channel: str | None,
    key: str | None,
    source: str | None,
    handle: str | None,
    yes: bool,
    vacuum_full: bool,
    as_json: bool,
) -> None:
    """Delete what you name for good: rows, index entries, vectors, hit-log rows.

    Example: recallbox purge --channel claude-code:abc --yes
    """
    if not (yes or as_json) and not click.confirm(
        "Delete it for good? This cannot be undone", err=True
    ):
        click.echo("nothing purged", err=True)
        ctx.exit(EXIT_RUNTIME_ERROR)
    with open_box(ctx) as box:
        report = box.purge(
            message_id,
            channel=channel,
            handle=handle,
            key=key,
            source=source,
            vacuum_full=vacuum_full,
        )
    if as_json:
        emit_json(jsonable(report))
    else:
        click.echo(render_purge(report))


@click.command(cls=RecallboxCommand)
@click.argument("path", type=click.Path(dir_okay=False))
@json_option
@click.pass_context
def backup(ctx: click.Context, path: str, as_json: bool) -> None:
    """Copy the live database to the new file PATH (writers may go on).

    Example: recallbox backup ~/recallbox-2026-12-01.db
    """
    with open_box(ctx) as box:
        pages = box.backup(path)
    if as_json:
        emit_json({"path": path, "pages": pages})
    else:
        click.echo(f"backed up to {path} ({pages} pages)")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(redact)
    group.add_command(purge)
    group.add_command(backup)
