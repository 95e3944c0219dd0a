"""What agents run: the MCP server (``mcp``) and the hook helpers (``hook claude-code``)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from recallbox.cli.shared import (
    RecallboxCommand,
    RecallboxGroup,
    describe,
    echo_err,
    open_box,
    usage_error,
)
from recallbox.config import ENV_MCP_TOKEN, MCP_HTTP_PORT

if TYPE_CHECKING:
    from recallbox.mcp_server import HttpOptions

MAX_PORT = 65_535
HTTP_ONLY_OPTIONS = ("host", "port", "allow_remote", "allowed_host", "token")
"""Options that mean nothing without ``--http`` (given on the command line: a usage error)."""


def http_options(
    ctx: click.Context,
    *,
    http: bool,
    host: str | None,
    port: int,
    allow_remote: bool,
    allowed_host: tuple[str, ...],
    token: str | None,
) -> tuple[HttpOptions | None, bool]:
    """The HTTP settings (``None`` for stdio) and whether the token was generated here."""
    if not http:
        for name in HTTP_ONLY_OPTIONS:
            if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE:
                flag = "--" + name.replace("_", "-")
                raise usage_error(f"{flag} needs --http (stdio has no address)", ctx)
        return None, False
    from recallbox.mcp_server import LOOPBACK_HOST, HttpOptions, is_loopback, new_token

    host = host or LOOPBACK_HOST
    generated = False
    if not is_loopback(host):
        if not allow_remote:
            raise usage_error(
                f"--host {host} is not a loopback address: it exposes your history; "
                "add --allow-remote (a bearer token is then required)",
                ctx,
            )
        if not token:
            token, generated = new_token(), True
    return HttpOptions(host, port, token or None, allowed_host), generated


@click.command(cls=RecallboxCommand)
@click.option("--http", is_flag=True, help="Serve streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default=None, help="HTTP bind address [default: 127.0.0.1].")
@click.option(
    "--port",
    type=click.IntRange(1, MAX_PORT),
    default=MCP_HTTP_PORT,
    show_default=True,
    help="HTTP port.",
)
@click.option(
    "--allow-remote",
    is_flag=True,
    help="Allow a non-loopback --host (exposes your history; needs a bearer token).",
)
@click.option(
    "--token",
    envvar=ENV_MCP_TOKEN,
    default=None,
    help=f"Bearer token every HTTP request must carry (env {ENV_MCP_TOKEN}); generated and "
    "printed once for a non-loopback --host when not given.",
)
@click.option(
    "--allowed-host",
    multiple=True,
    help="Another name the Host header may carry (repeatable; loopback names and --host are "
    "always allowed).",
)
@click.pass_context
def mcp(
    ctx: click.Context,
    http: bool,
    host: str | None,
    port: int,
    allow_remote: bool,
    token: str | None,
    allowed_host: tuple[str, ...],
) -> None:
    """Run the MCP server (stdio by default; --http serves streamable HTTP at /mcp).

    The database is created when missing (its path is logged on stderr), so the server can be
    registered before `recallbox init`.

    Example: claude mcp add recallbox -- recallbox mcp --db ~/agent.db
    """
    options, generated = http_options(
        ctx,
        http=http,
        host=host,
        port=port,
        allow_remote=allow_remote,
        allowed_host=allowed_host,
        token=token,
    )
    from recallbox.mcp_server import serve

    with open_box(ctx) as box:
        if options is not None and generated:
            echo_err(
                "recallbox: no --token given; this run's bearer token (send "
                f"'Authorization: Bearer <token>'): {options.token}"
            )
        try:
            serve(box, http=options)
        except SystemExit as exc:  # uvicorn exits (code 3) when it cannot bind
            if exc.code in (0, None) or options is None:
                raise
            raise click.ClickException(
                f"the MCP server could not listen on {options.host}:{options.port} "
                "(the reason is logged above; pick another --port)"
            ) from exc


class HookGroup(RecallboxGroup):
    """Hook commands never block the agent: every error goes to stderr and the exit code is 0."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            message, _ = describe(exc)
            echo_err(f"recallbox hook: {message}")
            return None


@click.group(cls=HookGroup)
def hook() -> None:
    """Helpers that agent hooks call (they never block the agent: errors go to stderr, exit 0).

    Example: recallbox hook claude-code < hook-payload.json
    """


def _payload(text: str) -> dict[str, Any]:
    try:
        payload = json.loads(text or "{}")
    except json.JSONDecodeError as exc:
        raise click.ClickException(f"the hook payload is not valid JSON: {exc}") from exc
    if not isinstance(payload, dict):
        raise click.ClickException("the hook payload is not a JSON object")
    return payload


@hook.command("claude-code")
@click.pass_context
def hook_claude_code(ctx: click.Context) -> None:
    """Handle one Claude Code hook event (its JSON payload on stdin).

    PreCompact/SessionEnd import the transcript; SessionStart on resume or after a compaction
    also prints the session's resume context and the memory injection (<= 9 000 chars).

    Example: recallbox hook claude-code   (registered as a hook command in ~/.claude/settings.json)
    """
    from recallbox.hooks import handle_claude_code_hook

    payload = _payload(sys.stdin.read())
    with open_box(ctx) as box:
        result = handle_claude_code_hook(box, payload)
    for note in result.notes:
        echo_err(f"recallbox hook: {note}")
    if result.output:
        click.echo(result.output)


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(mcp)
    group.add_command(hook)
