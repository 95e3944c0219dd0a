"""Recall and what it feeds: ``recall``, ``resume``, ``expand`` and ``stats hits`` (#12)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from recallbox.cli.shared import (
    RecallboxCommand,
    RecallboxGroup,
    clip,
    echo_err,
    emit_json,
    json_option,
    jsonable,
    open_box,
    usage_error,
)

if TYPE_CHECKING:
    from recallbox.recall_types import HitStats

DEFAULT_BUDGET_CHARS = 12_000
DEFAULT_CONTEXT_WINDOW = 200_000
DEFAULT_STATS_TOP = 10
#: The most of the channel ``resume --json`` echoes (the text's checkpoint names it, cut too).
CHANNEL_ECHO_MAX_CHARS = 200
DOMAIN_NAMES = ("memory", "knowledge", "sessions", "transcripts", "code")


def split_domains(value: str | None, ctx: click.Context) -> list[str] | None:
    """``"memory,code"`` → ``["memory", "code"]`` (``None`` for every domain)."""
    if value is None:
        return None
    names = [part.strip() for part in value.split(",") if part.strip()]
    if not names:
        raise usage_error(f"--domains names none of {', '.join(DOMAIN_NAMES)}", ctx)
    return names


@click.command(cls=RecallboxCommand)
@click.argument("query")
@click.option(
    "--domains",
    default=None,
    metavar="LIST",
    help=f"Comma-separated buckets to fill (default: all of {', '.join(DOMAIN_NAMES)}).",
)
@click.option(
    "--budget",
    type=int,
    default=DEFAULT_BUDGET_CHARS,
    show_default=True,
    help="The whole result's size in characters (1 000 to 12 000).",
)
@click.option("--scope", default=None, help="A project: its knowledge and code (plus the library).")
@click.option(
    "--exclude",
    "excluded",
    multiple=True,
    metavar="SOURCE",
    help="Deny a source name or path for this call too (repeatable).",
)
@click.option(
    "--embedder",
    envvar="RECALLBOX_EMBEDDER",
    default=None,
    help="Embed the query once with this model (minilm, multilingual, hash); default keyword only.",
)
@json_option
@click.pass_context
def recall(
    ctx: click.Context,
    query: str,
    domains: str | None,
    budget: int,
    scope: str | None,
    excluded: tuple[str, ...],
    embedder: str | None,
    as_json: bool,
) -> None:
    """Recall QUERY from every domain at once: one bucket each, never a mixed ranking.

    Example: recallbox recall "billing deploy" --domains sessions,transcripts --budget 4000
    """
    from recallbox.recall import LAYER_HYBRID

    names = split_domains(domains, ctx)
    with open_box(ctx, embedder=embedder) as box:
        result = box.recall(
            query,
            domains=names,
            budget_chars=budget,
            allow_embed=embedder is not None,
            excluded=excluded,
            scope=scope,
        )
    if embedder is not None and not any(b.layer == LAYER_HYBRID for b in result.buckets.values()):
        # Trigger: --embedder, and no bucket ranked by vectors. Why: the database holds no
        # vectors of that model (never embedded), or the embedder failed; the answer would be
        # keyword-only without a word. Outcome: one warning on stderr (stdout unchanged).
        echo_err(no_vectors_warning(embedder))
    if as_json:
        emit_json({**result.to_json(), "query": clip(query)})  # an echo: cut like every echo
    else:
        click.echo(result.render())


def no_vectors_warning(embedder: str) -> str:
    """The one stderr line of a ``recall --embedder`` that no bucket ranked by vectors."""
    name = clip(embedder, CHANNEL_ECHO_MAX_CHARS)
    return (
        f"recallbox: warning: no bucket was ranked with vectors of --embedder {name} (no "
        f"vectors of it are stored, or it failed); keyword ranking only. Embed the database "
        f"with: recallbox embed --all --embedder {name}"
    )


@click.command(cls=RecallboxCommand)
@click.argument("channel")
@click.option(
    "--context-window",
    type=click.IntRange(min=1),
    default=DEFAULT_CONTEXT_WINDOW,
    show_default=True,
    help="The model's context window in tokens (the budget is 2 % of it).",
)
@click.option(
    "--budget", type=click.IntRange(min=1), default=None, help="The budget in characters instead."
)
@json_option
@click.pass_context
def resume(
    ctx: click.Context, channel: str, context_window: int, budget: int | None, as_json: bool
) -> None:
    """Print where thread CHANNEL stood: a checkpoint, conclusions, tool actions, last turns.

    Example: recallbox resume claude-code:7f3c2a10-5b6d-4e8f-9a01-23456789abcd --budget 6000
    """
    with open_box(ctx) as box:
        text = box.resume_context(channel, context_window=context_window, budget_chars=budget)
    if as_json:
        emit_json({"channel": clip(channel, CHANNEL_ECHO_MAX_CHARS), "text": text})
    else:
        click.echo(text)


@click.command(cls=RecallboxCommand)
@click.argument("handle")
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Character offset into the original.",
)
@json_option
@click.pass_context
def expand(ctx: click.Context, handle: str, offset: int, as_json: bool) -> None:
    """Print a stored tool output's original, a page (<= 12 000 chars) at a time.

    Example: recallbox expand o_0123456789abcdef --offset 12000
    """
    with open_box(ctx) as box:
        text = box.expand(handle, offset=offset)
    if as_json:
        emit_json({"handle": handle, "offset": offset, "text": text})
    else:
        click.echo(text)


@click.group(cls=RecallboxGroup)
def stats() -> None:
    """Statistics about a database.

    Example: recallbox stats hits --json
    """


def render_hit_stats(report: HitStats) -> str:
    """``stats hits`` as text."""
    lines = [
        f"hit-log: {report.rows} rows ({report.hit_rows} hits, {report.drill_rows} drills), "
        f"{report.dropped} dropped while the database was busy",
        f"bounded at {report.max_rows} rows; {report.held} over it kept until `recallbox "
        "decay` and `recallbox embed --lazy` have read them"
        + (
            " (watermarks: " + ", ".join(f"{k} {v}" for k, v in report.watermarks.items()) + ")"
            if report.watermarks
            else ""
        ),
        "per domain:",
    ]
    lines += [
        f"  {d.domain}: {d.hits} hits, {d.drills} drills, {d.targets} targets"
        for d in report.domains
    ] or ["  (nothing recorded yet)"]
    lines.append("most recalled:")
    lines += [
        f"  {t.hits:>5} hits {t.drills:>4} drills  {t.domain} {t.target_id}"
        for t in report.most_recalled
    ] or ["  (none)"]
    lines.append("never recalled:")
    for never in report.never_recalled:
        examples = f" (oldest: {', '.join(never.examples)})" if never.examples else ""
        lines.append(f"  {never.corpus}: {never.count}{examples}")
    return "\n".join(lines)


@stats.command("hits")
@click.option(
    "--top",
    type=click.IntRange(1, 1_000),
    default=DEFAULT_STATS_TOP,
    show_default=True,
    help="How many of the most recalled targets to list.",
)
@json_option
@click.pass_context
def stats_hits(ctx: click.Context, top: int, as_json: bool) -> None:
    """Summarise the hit-log: most recalled, never recalled, per domain, dropped rows.

    Example: recallbox stats hits --top 20
    """
    with open_box(ctx) as box:
        report = box.hit_stats(top=top)
    if as_json:
        emit_json(jsonable(report))
    else:
        click.echo(render_hit_stats(report))


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    for command in (recall, resume, expand, stats):
        group.add_command(command)
