"""Finding things: ``search``, ``search-memory``, ``read`` and the ``embed`` passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from recallbox.cli.shared import RecallboxCommand, emit_json, json_option, open_box, usage_error

if TYPE_CHECKING:
    from recallbox.types import Hit, Page

F = TypeVar("F", bound=Callable[..., object])

DEFAULT_SEARCH_LIMIT = 10
VIEWS = ("audit", "model")


def embedder_option(default: str | None) -> Callable[[F], F]:
    """The shared ``--embedder`` option (env ``RECALLBOX_EMBEDDER``)."""
    return click.option(
        "--embedder",
        envvar="RECALLBOX_EMBEDDER",
        default=default,
        show_default=True,
        help="Embedding model: minilm, multilingual or hash (env RECALLBOX_EMBEDDER).",
    )


def render_hits(hits: list[Hit]) -> str:
    """Text rendering of ranked hits: a header line per hit (its rank and its raw legs — never
    the min-max keyword score, DESIGN §4.2), then its text indented."""
    if not hits:
        return "no hits"
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        legs = []
        bm25 = hit.explain.get("bm25")
        if isinstance(bm25, float | int) and hit.keyword is not None:
            legs.append(f"bm25={bm25:.2f}")
        if hit.vector is not None:
            legs.append(f"vector={hit.vector:.3f}")
        where = hit.channel if hit.channel is not None else hit.source
        lines.append(f"{rank}. {hit.id} [{where}] {hit.role or ''} ({' '.join(legs) or 'no legs'})")
        lines.extend("    " + line for line in hit.text.splitlines() or [""])
    return "\n".join(lines)


@click.command(cls=RecallboxCommand)
@click.argument("query")
@click.option(
    "--domain",
    default="sessions",
    show_default=True,
    help="memory, knowledge, sessions, transcripts or code.",
)
@click.option("--channel", default=None, help="Only this thread.")
@click.option(
    "--scope", default=None, help="knowledge: this project's documents plus the global library."
)
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=DEFAULT_SEARCH_LIMIT,
    show_default=True,
    help="At most this many hits.",
)
@click.option("--no-embed", is_flag=True, help="Keyword ranking only (no embedder call).")
@embedder_option(None)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    domain: str,
    channel: str | None,
    scope: str | None,
    limit: int,
    no_embed: bool,
    embedder: str | None,
    as_json: bool,
) -> None:
    """Ranked hits for QUERY (hybrid BM25 + vectors when an embedder is given).

    Example: recallbox search "deploy billing" --channel ops --limit 5 --json
    """
    with open_box(ctx, embedder=embedder) as box:
        hits = box.search(
            query,
            domain=domain,
            channel=channel,
            limit=limit,
            allow_embed=not no_embed,
            scope=scope,
        )
    if as_json:
        emit_json(hits)
    else:
        click.echo(render_hits(hits))


@click.command("search-memory", cls=RecallboxCommand)
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


def continue_hint(message_id: str, page: Page) -> str:
    """The CLI's continuation line of a page that does not reach the end."""
    return f"Continue with `recallbox read {message_id} --offset {page.next_offset}`."


@click.command("read", cls=RecallboxCommand)
@click.argument("message_id")
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Character offset into the full text.",
)
@click.option(
    "--view",
    type=click.Choice(VIEWS),
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
        page = box.message_page(message_id, view=view, offset=offset)
    if as_json:
        emit_json({"message_id": message_id, "view": view, **_page_fields(page)})
        return
    click.echo(page.text)
    if page.next_offset is not None:
        click.echo(continue_hint(message_id, page))


def _page_fields(page: Page) -> dict[str, object]:
    return {
        "offset": page.offset,
        "next_offset": page.next_offset,
        "total_chars": page.total_chars,
        "text": page.text,
    }


@click.command(cls=RecallboxCommand)
@click.option("--all", "embed_all", is_flag=True, help="Embed every message without a vector.")
@click.option("--lazy", is_flag=True, help="Embed only messages recall drilled into.")
@click.option("--rebuild", is_flag=True, help="Drop vectors of any other model, then embed.")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=None, help="Messages per embedder call."
)
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
        raise usage_error("choose one of --all, --lazy (or --rebuild)", ctx)
    from rich.console import Console
    from rich.progress import Progress

    with (
        open_box(ctx, embedder=embedder) as box,
        Progress(console=Console(stderr=True), transient=True, disable=as_json) as bar,
    ):
        task = bar.add_task("embedding", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        count = box.embed_all(rebuild=rebuild, lazy=lazy, batch_size=batch_size, progress=progress)
        model = box.embedder.model_id if box.embedder is not None else None
    if as_json:
        emit_json({"embedded": count, "model_id": model, "lazy": lazy, "rebuild": rebuild})
    else:
        click.echo(f"embedded {count} message(s) with {model}")


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    for command in (search, search_memory, read, embed):
        group.add_command(command)
