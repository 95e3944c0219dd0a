"""``recallbox ui``: serve the local web inspector (issue #20) over the command's database."""

from __future__ import annotations

import click

from recallbox.cli.shared import EXIT_USAGE, RecallboxCommand, one_line, open_box
from recallbox.errors import InvalidArgument

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
ENV_TOKEN = "RECALLBOX_UI_TOKEN"


class Refused(click.ClickException):
    """A refused bind: one ``Error:`` line and exit 2, without the usage block."""

    exit_code = EXIT_USAGE


@click.command("ui", cls=RecallboxCommand)
@click.option("--host", default=DEFAULT_HOST, show_default=True, help="Address to bind.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=DEFAULT_PORT, show_default=True,
    help="Port to listen on (0 picks a free one).",
)  # fmt: skip
@click.option(
    "--token", envvar=ENV_TOKEN, default=None, metavar="T",
    help=f"Require this token on every request (env {ENV_TOKEN}); needed off loopback.",
)  # fmt: skip
@click.pass_context
def ui(ctx: click.Context, host: str, port: int, token: str | None) -> None:
    """Serve the web inspector: threads, messages, search, memory, knowledge, code, hit-log,
    policy. The first line on stdout is its URL; Ctrl-C stops it.

    Example: recallbox ui --db agent.db --port 0
    """
    from recallbox.web.serve import check_bind, serve

    try:  # before the database is opened: a refusal changes nothing
        check_bind(host, token)
    except InvalidArgument as exc:  # one line, exit 2 (no usage block: the option is fine)
        raise Refused(one_line(str(exc))) from exc
    with open_box(ctx) as box:
        serve(box, host, port, token)  # Ctrl-C: the error edge says "interrupted", exit 130


def register(group: click.Group) -> None:
    """Add this module's command to ``group``."""
    group.add_command(ui)
