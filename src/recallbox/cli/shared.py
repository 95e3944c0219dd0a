"""What every ``recallbox`` command shares: exit codes, errors, ``--json`` and the database.

One layer, so a command only parses, calls the Box and renders (DESIGN §8, STYLE §9):

* **Exit codes** — :data:`EXIT_CODES`. Library errors are translated here and nowhere else: an
  :class:`~recallbox.errors.InvalidArgument` raised from a command-line value becomes a usage
  error (exit 2), every other :class:`~recallbox.errors.RecallError` a runtime error (exit 1).
  :func:`handle_error` is the last edge: it prints one line (never a traceback, unless
  ``--debug`` or ``RECALLBOX_DEBUG=1``) and, under ``--json``, the error object
  ``{"error": "<one line>", "code": <exit code>}`` on stdout.
* **The database** — :data:`DATABASE_USE` says, per command, whether a missing explicit
  ``--db`` / ``RECALLBOX_DB`` path is created (commands that store user content) or refused
  ("no database at PATH (run `recallbox init`)"). A new command adds one line there; the default
  ``$RECALLBOX_HOME`` database is created on first use by any command. :func:`open_box` applies
  the rule; ``--db`` is accepted before or after the subcommand (:class:`RecallboxCommand`).
* **Output** — :func:`json_option` and :func:`emit_json`: exactly one JSON document on stdout.

Only ``click`` is imported at module level, so ``recallbox --version`` stays fast.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, is_dataclass
from datetime import date, datetime
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import click
from click.core import ParameterSource
from click.exceptions import NoArgsIsHelpError

from recallbox.errors import InvalidArgument, RecallError, StoreUnavailable

if TYPE_CHECKING:
    from recallbox.box import Box

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK = 0
EXIT_RUNTIME_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_CODES: dict[int, str] = {
    EXIT_OK: "ok",
    EXIT_RUNTIME_ERROR: "runtime error: unknown id or channel, no database at PATH, a database "
    "that cannot be opened or is newer than this recallbox, a missing extra, an unhealthy "
    "`doctor`, a failed import file",
    EXIT_USAGE: "usage error: a bad option or argument, an invalid value (role, domain, "
    'offset, JSON), `--db ""`, `--host` without `--http`',
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
"""Every exit code of the CLI (``hook …`` always exits 0); the README's table is checked."""

ECHO_MAX_CHARS = 80
"""An argument echoed in a message (a path, an id) is cut to this many characters."""
ERROR_LINE_MAX_CHARS = 400
"""An error line never exceeds this; a longer one keeps its start and its end (the fix)."""
ENV_DEBUG = "RECALLBOX_DEBUG"
DEBUG_VALUES = frozenset({"1", "true", "yes", "on"})
MEMORY_LOCATION = ":memory:"
JSON_FLAG = "--json"
DEBUG_FLAG = "--debug"
END_OF_OPTIONS = "--"
META_DB = "recallbox.db"


class DbUse(Enum):
    """How a command treats a missing explicit database path."""

    CREATES = "creates"
    """It stores user content: the missing path is created (and the creation logged)."""
    REQUIRES = "requires"
    """It only reads (or only changes what exists): the missing path is refused."""


DATABASE_USE: dict[str, DbUse] = {
    # stores user content: a missing explicit path is created
    "init": DbUse.CREATES,
    "append": DbUse.CREATES,
    "import": DbUse.CREATES,
    "hook claude-code": DbUse.CREATES,
    "compact": DbUse.CREATES,
    "remember": DbUse.CREATES,
    "memory import": DbUse.CREATES,
    "knowledge sync": DbUse.CREATES,
    "code index": DbUse.CREATES,
    "embed": DbUse.CREATES,
    "policy quarantine": DbUse.CREATES,
    "policy unquarantine": DbUse.CREATES,
    "policy exclude": DbUse.CREATES,
    "policy include": DbUse.CREATES,
    "migrate --to": DbUse.CREATES,
    "demo": DbUse.CREATES,
    "mcp": DbUse.CREATES,  # it serves `remember`; `claude mcp add` must work before `init`
    # reads: a missing explicit path is refused
    "search": DbUse.REQUIRES,
    "search-memory": DbUse.REQUIRES,
    "read": DbUse.REQUIRES,
    "thread": DbUse.REQUIRES,
    "recall": DbUse.REQUIRES,
    "recall-context": DbUse.REQUIRES,
    "resume": DbUse.REQUIRES,
    "expand": DbUse.REQUIRES,
    "stats": DbUse.REQUIRES,
    "policy show": DbUse.REQUIRES,
    "memory list": DbUse.REQUIRES,
    "memory export": DbUse.REQUIRES,
    "code search": DbUse.REQUIRES,
    "code callers": DbUse.REQUIRES,
    "code callees": DbUse.REQUIRES,  # issue #11 item 4 (DESIGN §8 lists `code callers` only)
    "doctor": DbUse.REQUIRES,
    "decay": DbUse.REQUIRES,
    "redact": DbUse.REQUIRES,
    "purge": DbUse.REQUIRES,
    "backup": DbUse.REQUIRES,
    "migrate --from": DbUse.REQUIRES,
    "ui": DbUse.REQUIRES,
}
"""DESIGN §8, one line per command path (a group's entry covers its subcommands)."""


def database_use(command: str) -> DbUse | None:
    """The entry for ``command`` (``"thread show"`` falls back to ``"thread"``), or ``None``."""
    words = command.split()
    while words:
        use = DATABASE_USE.get(" ".join(words))
        if use is not None:
            return use
        words.pop()
    return None


# -- text ------------------------------------------------------------------------------------
def clip(value: object, limit: int = ECHO_MAX_CHARS) -> str:
    """``value`` as text, cut to ``limit`` characters (with ``…``) for echoing in a message."""
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = ERROR_LINE_MAX_CHARS) -> str:
    """Whitespace collapsed; past ``limit`` the middle is cut so the fix at the end survives."""
    line = " ".join(str(text).split())
    if len(line) <= limit:
        return line
    half = (limit - 3) // 2
    return line[:half] + " … " + line[-half:]


def echo_err(message: str) -> None:
    """A diagnostic line on stderr."""
    click.echo(message, err=True)


# -- --json ------------------------------------------------------------------------------------
def jsonable(value: Any) -> Any:
    """Dataclasses, datetimes, tuples and dicts as plain JSON values."""
    if is_dataclass(value) and not isinstance(value, type):
        return {k: jsonable(v) for k, v in asdict(value).items()}
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return value


def json_text(value: Any, *, indent: int | None = None) -> str:
    """``value`` as JSON that is always valid UTF-8: a lone surrogate (a command-line argument
    that was not UTF-8) makes the whole document ASCII, the surrogate a ``\\udXXX`` escape."""
    text = json.dumps(value, ensure_ascii=False, indent=indent)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, ensure_ascii=True, indent=indent)
    return text


def emit_json(value: Any, *, indent: int | None = 2) -> None:
    """Print exactly one JSON document on stdout (``indent=None``: one line, for streams)."""
    click.echo(json_text(jsonable(value), indent=indent))


def json_option(func: F) -> F:
    """The shared ``--json`` flag (the command receives it as ``as_json``)."""
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON document.")(func)


# -- --db --------------------------------------------------------------------------------------
DbSource = Literal["option", "env", "default"]


@dataclass(frozen=True, slots=True)
class DbChoice:
    """The database the user asked for: ``value`` is ``None`` for the default one."""

    value: str | None
    source: DbSource

    @property
    def explicit(self) -> bool:
        """True for ``--db`` or ``RECALLBOX_DB`` (the default database is always created)."""
        return self.source != "default"


DB_HELP = "Database path (env RECALLBOX_DB; default $RECALLBOX_HOME/recallbox.db)."


def _checked(value: str) -> str:
    if value == "":
        raise click.BadParameter("is empty; omit --db for the default database", param_hint="--db")
    return value


def root_db_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``recallbox --db PATH …`` (or ``RECALLBOX_DB``)."""
    source = ctx.get_parameter_source(param.name or "db")
    if value is None or source not in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
        choice = DbChoice(None, "default")
    else:
        from_env = source is ParameterSource.ENVIRONMENT
        choice = DbChoice(_checked(value), "env" if from_env else "option")
    ctx.meta[META_DB] = choice


def command_db_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``recallbox COMMAND … --db PATH``: the same option after the subcommand."""
    if value is None:
        return
    root = ctx.find_root()
    before: DbChoice | None = root.meta.get(META_DB)
    if before is not None and before.source == "option" and before.value != value:
        raise click.BadParameter(
            f"given twice ({clip(before.value)!r} and {clip(value)!r}); give it once",
            param_hint="--db",
        )
    root.meta[META_DB] = DbChoice(_checked(value), "option")


def db_choice(ctx: click.Context) -> DbChoice:
    """What ``--db`` / ``RECALLBOX_DB`` asked for (the default database when neither)."""
    choice: DbChoice | None = ctx.find_root().meta.get(META_DB)
    return choice if choice is not None else DbChoice(None, "default")


def command_key(ctx: click.Context) -> str:
    """``"thread show"`` for ``recallbox thread show …`` (the path below the root group)."""
    names: list[str] = []
    while ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def is_url(location: str) -> bool:
    """Whether a database location is not a file path (``:memory:`` or a ``…://`` URL)."""
    return location == MEMORY_LOCATION or "://" in location


def location_exists(location: str) -> bool:
    """Whether ``location`` names something already there (a URL always does)."""
    return is_url(location) or Path(location).expanduser().exists()


def resolve_db(ctx: click.Context, use: DbUse) -> str:
    """The database location for this command, applying :data:`DATABASE_USE`.

    Raises:
        StoreUnavailable: an explicit path that is missing (for a command that only reads) or
            that is a directory.
    """
    from recallbox.config import load_settings

    choice = db_choice(ctx)
    location = load_settings(choice.value).db
    if not choice.explicit or is_url(location):
        return location
    path = Path(location).expanduser()
    if path.is_dir():
        raise StoreUnavailable(f"{clip(location)} is a directory; --db takes a database file")
    if use is DbUse.REQUIRES and not path.exists():
        raise StoreUnavailable(f"no database at {clip(location)} (run `recallbox init`)")
    return location


MIGRATION_LOGGER = "recallbox.storage.sqlite.migrations"


@contextmanager
def open_box(
    ctx: click.Context, *, embedder: str | None = None, key: str | None = None
) -> Iterator[Box]:
    """Open the Box for this command's database, as :data:`DATABASE_USE` allows.

    ``key`` names the table entry when it is not the command path (``"migrate --to"``). A
    database this call creates is logged on stderr. ``RECALLBOX_HIT_LOG=0`` turns the hit-log
    off.
    """
    from recallbox import open as open_recallbox
    from recallbox.config import hit_log_enabled

    use = database_use(key or command_key(ctx)) or DbUse.REQUIRES
    location = resolve_db(ctx, use)
    existed = location_exists(location)
    with migration_bar():
        opened = open_recallbox(location, embedder=embedder, hit_log=hit_log_enabled())
    with opened as box:
        if not existed:
            echo_err(f"recallbox: created database {location}")
        yield box


class _MigrationBar(logging.Handler):
    """Draws the migration progress records as bars on stderr (made on the first record, so
    opening an up-to-date database imports nothing)."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}

    def emit(self, record: logging.LogRecord) -> None:
        name = getattr(record, "migration", None)
        if name is None:
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

            console = Console(stderr=True)
            self.bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
                disable=not console.is_terminal,
            )
            self.bar.start()
        if name not in self.tasks:
            self.tasks[name] = self.bar.add_task(f"upgrading: {name}", total=None)
        done, total = getattr(record, "done", 0), getattr(record, "total", 0)
        self.bar.update(self.tasks[name], completed=done, total=total or None)


@contextmanager
def migration_bar() -> Iterator[None]:
    """A progress bar on stderr (a terminal only) for the migrations an open applies."""
    handler = _MigrationBar()
    log = logging.getLogger(MIGRATION_LOGGER)
    level = log.level
    log.addHandler(handler)
    if not level or level > logging.INFO:
        log.setLevel(logging.INFO)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
        if handler.bar is not None:
            handler.bar.stop()


def db_option() -> click.Option:
    """``--db`` after a subcommand (``recallbox mcp --db PATH``)."""
    return click.Option(
        ["--db"], expose_value=False, callback=command_db_callback, help=DB_HELP, metavar="PATH"
    )


# -- errors --------------------------------------------------------------------------------------
def usage_error(message: str, ctx: click.Context | None = None) -> click.UsageError:
    """A usage error (exit 2) with a one-line message."""
    return click.UsageError(one_line(message), ctx)


@contextmanager
def translated_errors(ctx: click.Context) -> Iterator[None]:
    """Library errors as click errors: ``InvalidArgument`` exit 2, other ``RecallError`` exit 1."""
    try:
        yield
    except InvalidArgument as exc:
        raise usage_error(str(exc), ctx) from exc
    except RecallError as exc:
        raise click.ClickException(one_line(str(exc))) from exc


class RecallboxCommand(click.Command):
    """A command that takes ``--db`` too and translates library errors (see module docs)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.params.append(db_option())

    def invoke(self, ctx: click.Context) -> Any:
        with translated_errors(ctx):
            return super().invoke(ctx)


class RecallboxGroup(click.Group):
    """A group whose commands are :class:`RecallboxCommand` and whose groups are its own kind."""

    command_class = RecallboxCommand
    group_class: type[click.Group | type] | None = type


@dataclass(frozen=True, slots=True)
class EdgeFlags:
    """What the error edge needs from the raw arguments (errors can precede option parsing)."""

    as_json: bool
    debug: bool


def edge_flags(argv: Sequence[str]) -> EdgeFlags:
    """``--json`` / ``--debug`` among the options (before ``--``), or ``RECALLBOX_DEBUG=1``."""
    args = list(argv)
    if END_OF_OPTIONS in args:
        args = args[: args.index(END_OF_OPTIONS)]
    debug = DEBUG_FLAG in args or os.environ.get(ENV_DEBUG, "").lower() in DEBUG_VALUES
    return EdgeFlags(as_json=JSON_FLAG in args, debug=debug)


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> tuple[str, int]:
    """The one error line and the exit code of ``exc``."""
    exc = _leaf(exc)
    if isinstance(exc, NoArgsIsHelpError):
        return f"a command is needed; see `{exc.ctx.command_path} --help`", exc.exit_code
    if isinstance(exc, click.ClickException):
        return one_line(exc.format_message()), exc.exit_code
    if isinstance(exc, click.Abort | KeyboardInterrupt):
        return "interrupted", EXIT_INTERRUPTED
    if isinstance(exc, InvalidArgument):
        return one_line(str(exc)), EXIT_USAGE
    if isinstance(exc, RecallError):
        return one_line(str(exc)), EXIT_RUNTIME_ERROR
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {clip(exc.filename)}" if exc.filename else ""
        return one_line(f"{exc.strerror}{where}"), EXIT_RUNTIME_ERROR
    # Trigger: an error no layer translated (a bug: the store turns every driver error a
    # person can act on into StoreUnavailable, ARCHITECTURE §2 "Errors at the boundary").
    # Why: a user must never see a traceback. Outcome: one line, and how to see the traceback.
    name = type(exc).__name__
    detail = clip(str(exc) or "no detail", ERROR_LINE_MAX_CHARS // 2)
    return (
        one_line(f"unexpected {name}: {detail} ({ENV_DEBUG}=1 shows the traceback)"),
        EXIT_RUNTIME_ERROR,
    )


def handle_error(exc: BaseException, flags: EdgeFlags) -> int:
    """Report ``exc`` (one line on stderr, or the JSON error object on stdout); its exit code."""
    message, code = describe(exc)
    if flags.debug:
        traceback.print_exception(exc, file=sys.stderr)
    leaf = _leaf(exc)
    if code == EXIT_INTERRUPTED:
        echo_err(message)
    elif flags.as_json:
        click.echo(json_text({"error": message, "code": code}))
    elif isinstance(leaf, NoArgsIsHelpError):
        leaf.show()  # the help text, on stderr
    else:
        if isinstance(leaf, click.UsageError) and leaf.ctx is not None:
            echo_err(leaf.ctx.get_usage())
            help_hint = f"{leaf.ctx.command_path} {leaf.ctx.help_option_names[0]}"
            echo_err(f"Try '{help_hint}' for help.\n")
        echo_err(f"Error: {message}")
    return code
