"""Threads: ``init``, ``append``, ``thread list|show`` and ``compact``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click

from recallbox.cli.shared import (
    RecallboxCommand,
    RecallboxGroup,
    emit_json,
    json_option,
    open_box,
    usage_error,
)
from recallbox.types import KINDS, ROLES

if TYPE_CHECKING:
    from recallbox.types import Message, Policy, Thread

SHOW_WIDTH_CHARS = 160
"""``thread show`` prints at most this many characters of each message by default."""


@click.command(cls=RecallboxCommand)
@json_option
@click.pass_context
def init(ctx: click.Context, as_json: bool) -> None:
    """Create the database (idempotent) and print where it is.

    Example: recallbox --db ./agent.db init
    """
    with open_box(ctx) as box:
        info = {"db": box.location, "schema_version": box.schema_version()}
    if as_json:
        emit_json(info)
    else:
        click.echo(f"recallbox database ready at {info['db']} (schema {info['schema_version']})")


def _json_value(ctx: click.Context, text: str | None, option: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise usage_error(f"{option}: not valid JSON: {exc}", ctx) from exc


@click.command(cls=RecallboxCommand)
@click.argument("channel")
@click.argument("role", type=click.Choice(ROLES))
@click.argument("content", required=False)
@click.option("--tool-call-id", default=None, help="Link a tool result to its call.")
@click.option(
    "--tool-calls", default=None, help="Tool calls as a JSON list of {id,name,arguments}."
)
@click.option("--kind", type=click.Choice(KINDS), default="message", show_default=True)
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
    calls = _json_value(ctx, tool_calls, "--tool-calls")
    meta = _json_value(ctx, metadata, "--metadata")
    if content is None:
        content = sys.stdin.read()
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


@click.group(cls=RecallboxGroup)
def thread() -> None:
    """Inspect threads (the audit view: everything stored, never the text of a denied thread).

    Example: recallbox thread list
    """


def _thread_line(t: Thread) -> str:
    marks = [
        name for name, on in (("quarantined", t.quarantined), ("excluded source", t.excluded)) if on
    ]
    flag = "".join(f" [{mark}]" for mark in marks)
    return f"{t.channel}{flag}  generations={t.generation_count} messages={t.message_count}" + (
        f"  {t.title}" if t.title else ""
    )


def _policy_footer(policy: Policy) -> list[str]:
    if not policy.excluded_sources:
        return []
    return [
        f"excluded sources (their threads and files are hidden from recall): "
        f"{', '.join(policy.excluded_sources)}"
    ]


@thread.command("list")
@json_option
@click.pass_context
def thread_list(ctx: click.Context, as_json: bool) -> None:
    """List every thread; quarantined threads and threads of excluded sources are marked
    (each thread's `quarantined` and `excluded` under --json).

    Example: recallbox thread list --json
    """
    with open_box(ctx) as box:
        threads = box.threads()
        policy = box.policy()
    if as_json:  # a list of threads, as before; `policy show --json` has the excluded sources
        emit_json(threads)
        return
    lines = [_thread_line(t) for t in threads] or ["no threads yet"]
    click.echo("\n".join(lines + _policy_footer(policy)))


def quarantine_notice(t: Thread) -> str:
    """What ``thread show`` prints instead of a quarantined thread's messages."""
    return (
        f"quarantined — {t.message_count} messages hidden "
        f"(`recallbox policy unquarantine {t.channel}` shows them again)"
    )


def excluded_notice(t: Thread) -> str:
    """What ``thread show`` prints instead of the messages of an excluded source's thread."""
    return (
        f"excluded source — {t.message_count} messages hidden (`recallbox policy show` lists "
        "the exclusions; `recallbox policy include NAME` lifts one)"
    )


def denial_notice(t: Thread) -> str | None:
    """The notice of a thread whose text a person-facing rendering must not show (DESIGN §5),
    or ``None`` when it may be shown."""
    if t.quarantined:
        return quarantine_notice(t)
    if t.excluded:
        return excluded_notice(t)
    return None


def _print_messages(messages: list[Message], width: int) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    current = 0
    for m in messages:
        if m.generation != current:
            current = m.generation
            console.print(f"[bold cyan]── generation {current} ──[/bold cyan]")
        flags = [
            name
            for name, on in (
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
            else m.content[:width] + (f"… [{len(m.content)} chars]")
        )
        console.print(f"[dim]{escape(head)}[/dim] {escape(text)}")
        for call in m.tool_calls or []:
            args = json.dumps(call["arguments"], ensure_ascii=False)[:width]
            console.print(f"    [magenta]→ {escape(call['name'])}[/magenta] {escape(args)}")


@thread.command("show")
@click.argument("channel")
@click.option(
    "--generation", type=click.IntRange(min=1), default=None, help="Only this generation (1-based)."
)
@click.option(
    "--width",
    type=click.IntRange(min=1),
    default=SHOW_WIDTH_CHARS,
    show_default=True,
    help="Characters per message.",
)
@json_option
@click.pass_context
def thread_show(
    ctx: click.Context, channel: str, generation: int | None, width: int, as_json: bool
) -> None:
    """Show a thread's messages (the audit view), generation by generation.

    A quarantined thread, or one of an excluded source, shows its metadata and how many
    messages are hidden, never its text.

    Example: recallbox thread show demo:deploy-staging --generation 1
    """
    with open_box(ctx) as box:
        info = box.thread(channel)
        notice = denial_notice(info)
        messages = [] if notice is not None else box.messages(channel, generation)
    if as_json:
        hidden = info.message_count if notice is not None else 0
        emit_json({"thread": info, "messages": messages, "hidden_messages": hidden})
        return
    click.echo(f"{info.channel} {info.title or ''}".rstrip())
    if notice is not None:
        click.echo(notice)
        return
    _print_messages(messages, width)


@click.command(cls=RecallboxCommand)
@click.argument("channel")
@click.option("--summary", default=None, help="The summary text.")
@click.option(
    "--summary-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    help="Read the summary from this file ('-' reads stdin).",
)
@json_option
@click.pass_context
def compact(
    ctx: click.Context, channel: str, summary: str | None, summary_file: Any, as_json: bool
) -> None:
    """Close the thread's generation; the next one opens with the summary + resource directory.

    Give the summary with --summary TEXT or --summary-file FILE.

    Example: recallbox compact ops --summary-file summary.md
    """
    if (summary is None) == (summary_file is None):
        raise usage_error("give exactly one of --summary or --summary-file", ctx)
    text = summary if summary is not None else summary_file.read()
    with open_box(ctx) as box:
        generation = box.compact(channel, text)
    if as_json:
        emit_json(generation)
    else:
        click.echo(f"{channel}: generation {generation.number} opened ({generation.id})")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    for command in (init, append, thread, compact):
        group.add_command(command)
