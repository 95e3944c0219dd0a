"""Memory entries: ``remember``, ``memory list|export|import``, ``decay``, ``recall-context``.

``memory list`` is a person-facing rendering (DESIGN §5): every entry with its metadata; when
the policy excludes ``MEMORY.md`` an entry shows its metadata and "excluded source", never its
text. ``recall-context`` prints what the agent-facing verb returns: the evidence header and
the slice, or why there is none.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import (
    RecallboxCommand,
    RecallboxGroup,
    clip,
    emit_json,
    json_option,
    jsonable,
    open_box,
    usage_error,
)

if TYPE_CHECKING:
    from recallbox.types import DecayReport, MemoryEntry, MemoryImportReport, RecallResult

MEMORY_TYPES = ("principle", "correction", "decision", "guideline", "pitfall", "process", "model")
MEMORY_STATES = ("active", "dormant", "archived")
LIST_TEXT_CHARS = 120
"""``memory list`` prints at most this many characters of an entry's text."""
EXCLUDED_NOTICE = "excluded source"
STDOUT_PATH = "-"
NO_CONTEXT_LINE = "(no entry of this source shares a word with the query)"


@click.command(cls=RecallboxCommand)
@click.argument("text")
@click.option(
    "--type",
    "memory_type",
    type=click.Choice(MEMORY_TYPES),
    default="guideline",
    show_default=True,
    help="The kind of lesson.",
)
@click.option("--title", default=None, help="A short name for the entry.")
@click.option("--evergreen/--no-evergreen", default=None, help="Never decays (default by type).")
@click.option("--supersedes", default=None, metavar="KEY", help="Mark this older entry replaced.")
@json_option
@click.pass_context
def remember(
    ctx: click.Context,
    text: str,
    memory_type: str,
    title: str | None,
    evergreen: bool | None,
    supersedes: str | None,
    as_json: bool,
) -> None:
    """Save a durable lesson as a memory entry and print its key.

    Ask first: would it still help in another project? Yes: remember it. A reference fact goes
    to knowledge (`recallbox knowledge sync`), a project judgement to that project's docs.

    Example: recallbox remember "Run migrations before deploying billing" --type pitfall
    """
    with open_box(ctx) as box:
        entry = box.remember(
            text, type=memory_type, title=title, evergreen=evergreen, supersedes=supersedes
        )
    if as_json:
        emit_json(entry)
    else:
        click.echo(entry.key)


@click.group(cls=RecallboxGroup)
def memory() -> None:
    """The curated memory entries: list them, export MEMORY.md, import a person's edits.

    Example: recallbox memory export MEMORY.md
    """


def entry_line(entry: MemoryEntry) -> str:
    """One ``memory list`` line: key, type, state, dates, counts; the text unless excluded."""
    flags = []
    if entry.evergreen:
        flags.append("evergreen")
    if entry.superseded_by is not None:
        flags.append(f"superseded by {entry.superseded_by}")
    head = (
        f"{entry.key:<7} {entry.type:<10} {entry.state:<8} since {entry.state_since or '-'}  "
        f"refs={entry.ref_count} last={entry.last_referenced or '-'}"
        + (f"  [{', '.join(flags)}]" if flags else "")
    )
    if entry.excluded:
        return f"{head}  {EXCLUDED_NOTICE}"
    text = entry.title if entry.title is not None else entry.body
    return f"{head}  {clip(' '.join(text.split()), LIST_TEXT_CHARS)}"


def entry_json(entry: MemoryEntry) -> dict[str, object]:
    """An entry for ``memory list --json`` (metadata only when excluded)."""
    data = jsonable(entry)
    assert isinstance(data, dict)
    if entry.excluded:
        data.pop("title", None)
        data.pop("body", None)
        data["notice"] = EXCLUDED_NOTICE
    return data


@memory.command("list")
@click.option("--state", type=click.Choice(MEMORY_STATES), default=None, help="Only this state.")
@json_option
@click.pass_context
def memory_list(ctx: click.Context, state: str | None, as_json: bool) -> None:
    """List every memory entry with its lifecycle (entries of an excluded MEMORY.md: metadata
    only).

    Example: recallbox memory list --state dormant
    """
    with open_box(ctx) as box:
        entries = box.memories(state)
    if as_json:
        emit_json({"entries": [entry_json(e) for e in entries]})
        return
    click.echo("\n".join(entry_line(e) for e in entries) if entries else "no memory entries")


@memory.command("export")
@click.argument("path", required=False, default=STDOUT_PATH)
@json_option
@click.pass_context
def memory_export(ctx: click.Context, path: str, as_json: bool) -> None:
    """Write every memory entry as MEMORY.md (PATH, or stdout with - or no PATH).

    Edit titles, bodies, state= or evergreen= in the file, then apply it with
    `recallbox memory import PATH`.

    Example: recallbox memory export ~/notes/MEMORY.md
    """
    with open_box(ctx) as box:
        text = box.export_memory()
        count = len(box.memories())
    if path == STDOUT_PATH and not as_json:
        click.echo(text, nl=False)
        return
    if path != STDOUT_PATH:
        with Path(path).expanduser().open("w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    if as_json:
        emit_json({"path": path, "entries": count, **({"text": text} if path == "-" else {})})
    else:
        click.echo(f"exported {count} memory entries to {path}")


def render_import(report: MemoryImportReport) -> str:
    """The text report of ``memory import``."""
    lines = [
        f"created {len(report.created)}, added {len(report.added)}, updated "
        f"{len(report.updated)}, unchanged {report.unchanged}, not in the file "
        f"{len(report.removed)} (kept)"
    ]
    lines += [f"  updated {c.key}: {', '.join(c.fields)}" for c in report.updated]
    lines += [f"  added {key}" for key in report.added]
    if report.removed:
        lines.append(f"  not in the file (kept): {', '.join(report.removed)}")
    lines += [f"  line {p.line}: {p.reason}" for p in (*report.ignored, *report.unknown)]
    return "\n".join(lines)


@memory.command("import")
@click.argument("path")
@json_option
@click.pass_context
def memory_import(ctx: click.Context, path: str, as_json: bool) -> None:
    """Apply an edited MEMORY.md (all or nothing; a malformed line is named by its number).

    Example: recallbox memory import ~/notes/MEMORY.md
    """
    try:
        if path == STDOUT_PATH:
            text = sys.stdin.read()
        else:
            with Path(path).expanduser().open(encoding="utf-8", newline="") as handle:
                text = handle.read()
    except UnicodeDecodeError as exc:
        raise usage_error(f"{clip(path)} is not UTF-8 text", ctx) from exc
    with open_box(ctx) as box:
        report = box.import_memory(text)
    if as_json:
        emit_json(report)
    else:
        click.echo(render_import(report))


def render_decay(report: DecayReport) -> str:
    """The text report of ``decay``: every transition with its reason."""
    mode = " (dry run: nothing written)" if report.dry_run else ""
    lines = [
        f"decay {report.today}{mode}: {report.checked} entries checked, "
        f"{len(report.transitions)} transition(s), {report.references_folded} reference(s) "
        f"folded in"
        + (f", {report.references_deferred} left for later" if report.references_deferred else "")
    ]
    lines += [
        f"  {t.key}: {t.from_state} -> {t.to_state} on {t.on} ({t.reason})"
        for t in report.transitions
    ]
    return "\n".join(lines)


def _day(ctx: click.Context, value: str | None) -> date | None:
    if value is None:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError as exc:
        raise usage_error(f"--today {clip(value)!r} is not a date (YYYY-MM-DD)", ctx) from exc


@click.command(cls=RecallboxCommand)
@click.option("--dry-run", is_flag=True, help="Report the transitions without writing them.")
@click.option("--today", default=None, metavar="DATE", help="Run as of this day (YYYY-MM-DD).")
@json_option
@click.pass_context
def decay(ctx: click.Context, dry_run: bool, today: str | None, as_json: bool) -> None:
    """Move idle memory entries to dormant and archived (never deletes; idempotent per day).

    Example: recallbox decay --dry-run --today 2025-06-01
    """
    day = _day(ctx, today)
    with open_box(ctx) as box:
        report = box.decay(day, dry_run=dry_run)
    if as_json:
        emit_json(report)
    else:
        click.echo(render_decay(report))


def render_context_text(result: RecallResult) -> str:
    """What ``recall-context`` prints: the rendered slice, or why there is none."""
    if not result.allowed:
        return f"recall_context: {result.reason}"
    return result.render() or NO_CONTEXT_LINE


@click.command("recall-context", cls=RecallboxCommand)
@click.argument("query")
@click.option("--source", default="MEMORY.md", show_default=True, help="MEMORY.md or a document.")
@json_option
@click.pass_context
def recall_context(ctx: click.Context, query: str, source: str, as_json: bool) -> None:
    """The exact entries of one source that match QUERY (<= 2 000 tokens, <= 3 sections).

    Example: recallbox recall-context "rollback staging" --source deploy-runbook.md
    """
    with open_box(ctx) as box:
        result = box.recall_context(query, source=source)
    if as_json:
        emit_json(result)
    else:
        click.echo(render_context_text(result))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    for command in (remember, memory, decay, recall_context):
        group.add_command(command)
