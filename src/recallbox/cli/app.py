"""The ``recallbox`` group: global options, the error edge, and the command groups it holds.

Each command group lives in ``recallbox.cli.commands.<group>`` and is registered below;
errors, exit codes, ``--json`` and ``--db`` come from :mod:`recallbox.cli.shared`.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from recallbox import __version__
from recallbox.cli.commands import (
    agents,
    code,
    imports,
    knowledge,
    maintenance,
    memory,
    policy,
    recall,
    search,
    secrets,
    threads,
    transfer,
    ui,
)
from recallbox.cli.shared import (
    DB_HELP,
    ENV_DEBUG,
    EXIT_OK,
    RecallboxGroup,
    edge_flags,
    handle_error,
    root_db_callback,
)

VERSION = __version__


class RootGroup(RecallboxGroup):
    """The root group: every error of every command ends here as one line and an exit code."""

    group_class = RecallboxGroup

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> NoReturn:
        argv = list(sys.argv[1:] if args is None else args)
        flags = edge_flags(argv)
        try:
            result = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
        except SystemExit:
            raise
        except BaseException as exc:  # the edge: nothing gets past it as a traceback
            sys.exit(handle_error(exc, flags))
        # click returns the code of ctx.exit(n) here, or the command's own return value
        sys.exit(result if isinstance(result, int) else EXIT_OK)


def _debug_callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        logging.basicConfig(stream=sys.stderr, level=logging.DEBUG)


@click.group(cls=RootGroup)
@click.version_option(VERSION, prog_name="recallbox")
@click.option(
    "--db",
    envvar="RECALLBOX_DB",
    default=None,
    expose_value=False,
    callback=root_db_callback,
    metavar="PATH",
    help=DB_HELP + " Also accepted after the command.",
)
@click.option(
    "--debug",
    is_flag=True,
    envvar=ENV_DEBUG,
    expose_value=False,
    callback=_debug_callback,
    help=f"Log to stderr and show tracebacks (env {ENV_DEBUG}=1).",
)
def cli() -> None:
    """recallbox: verbatim, bounded recall for AI agents.

    Example: recallbox demo
    """


for _module in (
    threads,
    policy,
    imports,
    search,
    agents,
    maintenance,
    memory,
    knowledge,
    code,
    recall,
    ui,
):
    _module.register(cli)
for _module in (secrets, transfer):
    _module.register(cli)


def main() -> None:
    """Console-script entry point."""
    cli.main()
