"""Finding things: ``search``, ``search-memory``, ``read`` and the ``embed`` passes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from recallbox.cli.shared import (
    RecallboxCommand,
    clip,
    emit_json,
    json_option,
    open_box,
    usage_error,
)

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


#: Three significant digits: BM25 of a small corpus is ~1e-6, which ``.2f`` printed as 0.00
#: (#17 item 6: a real match never shows a zero).
LEG_FORMAT = ".3g"


#: A neighbour line shows at most this many characters of its text.
NEIGHBOUR_LINE_CHARS = 160


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _explain(hit: Hit) -> str:
    parts = [f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in hit.explain.items()]
    return "    explain: " + " ".join(parts)


def render_hits(hits: list[Hit], *, explain: bool = False) -> str:
    """Text rendering of ranked hits: a header line per hit — its rank, id, thread, time, who
    wrote it and its raw legs (never the min-max keyword score, DESIGN §4.2) — then its text
    indented and its episode's neighbours (``↑`` before, ``↓`` after); ``explain`` adds each
    leg and signal (``Hit.explain``)."""
    if not hits:
        return "no hits"
    lines: list[str] = []
    for rank, hit in enumerate(hits, start=1):
        head = [f"{rank}.", hit.id]
        lines_of = f":{hit.lines[0]}-{hit.lines[1]}" if hit.lines else ""
        if hit.channel is not None:
            head.append(f"[{hit.channel}]")
            if hit.source:
                head.append(hit.source + lines_of)
        elif hit.source:
            head.append(f"[{hit.source}]{lines_of}")
        if hit.created_at is not None:
            head.append(hit.created_at.isoformat(timespec="minutes"))
        who = hit.participant or hit.role
        if who:
            head.append(who if not hit.role or who == hit.role else f"{who} ({hit.role})")
        legs = []
        bm25 = hit.explain.get("bm25")
        if isinstance(bm25, float | int) and hit.keyword is not None:
            legs.append(f"bm25={bm25:{LEG_FORMAT}}")
        if hit.vector is not None:
            legs.append(f"vector={hit.vector:{LEG_FORMAT}}")
        head.append(f"({' '.join(legs) or 'no legs'})")
        lines.append(" ".join(head))
        lines.extend("    " + line for line in hit.text.splitlines() or [""])
        for n in hit.neighbours:
            mark = "↑" if n.offset < 0 else "↓"
            text = _one_line(n.text, NEIGHBOUR_LINE_CHARS)
            lines.append(f"    {mark} {n.id} ({n.role}) {text}")
        if explain:
            lines.append(_explain(hit))
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
@click.option("--explain", is_flag=True, help="Also print each leg and ranking signal.")
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
    explain: bool,
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
        click.echo(render_hits(hits, explain=explain))


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
        emit_json({"query": clip(query), "channel": channel, "result": result})  # an echo: cut
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
@click.option("--all", "embed_all", is_flag=True, help="Embed every row without a vector.")
@click.option("--lazy", is_flag=True, help="Embed only what recall drilled into.")
@click.option("--rebuild", is_flag=True, help="Drop vectors of any other model, then embed.")
@click.option(
    "--batch-size", type=click.IntRange(min=1), default=None, help="Rows per embedder call."
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
    """Write vectors (nothing is embedded at write time); resumable, Ctrl-C safe.

    Every corpus with vectors is embedded (messages, transcript chunks, …) and the report
    says how many vectors each got.

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

        report = box.embed_report(
            rebuild=rebuild, lazy=lazy, batch_size=batch_size, progress=progress
        )
    if as_json:
        emit_json(
            {
                "embedded": report.total,
                "by_corpus": report.counts,
                "model_id": report.model_id,
                "lazy": lazy,
                "rebuild": rebuild,
            }
        )
    else:
        kinds = ", ".join(corpus_count(c, n) for c, n in report.counts.items())
        click.echo(f"embedded {kinds or 'nothing'} with {report.model_id}")


CORPUS_NOUNS = {
    "memory_entry": ("memory entry", "memory entries"),
    "section": ("knowledge section", "knowledge sections"),
}
"""How a corpus reads in a report where its name does not (``message`` -> ``messages``)."""


def corpus_count(corpus: str, count: int) -> str:
    """``count`` rows of ``corpus`` in words: ``1 message``, ``3 transcript chunks``."""
    name = corpus.replace("_", " ")
    one, many = CORPUS_NOUNS.get(corpus, (name, f"{name}s"))
    return f"{count} {one if count == 1 else many}"


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    for command in (search, search_memory, read, embed):
        group.add_command(command)
