"""``migrate``: copy a whole database to another one, across backends (#16 item 5).

``--from`` must exist (a missing path is refused, like every reader); ``--to`` is created when
missing (and said so), or resumed when it holds a stopped copy of the same source. A progress
bar per table shows on stderr at a terminal; the result lists every table's verified count.
"""

from __future__ import annotations

from pathlib import Path

import click

from recallbox.cli.shared import (
    DbUse,
    RecallboxCommand,
    clip,
    echo_err,
    emit_json,
    is_url,
    json_option,
    jsonable,
    location_exists,
)
from recallbox.errors import InvalidArgument, StoreUnavailable


def resolve_location(location: str, use: DbUse) -> str:
    """An explicit database ``location`` (``--from``/``--to``), as :data:`DATABASE_USE`
    treats an explicit ``--db``.

    Raises:
        InvalidArgument: an empty location.
        StoreUnavailable: a directory, or a missing path for a command that only reads it.
    """
    if not location.strip():
        raise InvalidArgument("a database location is empty; pass a path or a postgresql:// URL")
    if is_url(location):
        return location
    path = Path(location).expanduser()
    if path.is_dir():
        raise StoreUnavailable(f"{clip(location)} is a directory; name a database file")
    if use is DbUse.REQUIRES and not path.exists():
        raise StoreUnavailable(f"no database at {clip(location)} (run `recallbox init`)")
    return str(path)


@click.command(cls=RecallboxCommand)
@click.option(
    "--from", "source", required=True, metavar="PATH_OR_URL", help="The database to copy."
)
@click.option(
    "--to",
    "destination",
    required=True,
    metavar="PATH_OR_URL",
    help="Where to copy it: a new (or partly copied) database.",
)
@json_option
def migrate(source: str, destination: str, as_json: bool) -> None:
    """Copy a whole database across backends (SQLite <-> PostgreSQL); run it again to resume.

    Example: recallbox migrate --from ~/recallbox.db --to postgresql://me@db.example/recall
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from recallbox.transfer import migrate_store

    origin = resolve_location(source, DbUse.REQUIRES)
    target = resolve_location(destination, DbUse.CREATES)
    existed = location_exists(target)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=as_json,
    ) as bar:
        tasks: dict[str, object] = {}

        def progress(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(f"copying {what}", total=total)
            bar.update(tasks[what], completed=done, total=total)  # type: ignore[arg-type]

        report = migrate_store(origin, target, progress=progress)
    if not existed:
        echo_err(f"recallbox: created database {clip(target)}")
    if as_json:
        emit_json(jsonable(report))
        return
    rows = sum(n for name, n in report.counts.items() if not name.startswith("vectors"))
    vectors = sum(n for name, n in report.counts.items() if name.startswith("vectors"))
    how = "resumed and finished" if report.resumed else "copied"
    click.echo(
        f"{how}: {rows} rows in {len(report.counts)} tables and spaces, {vectors} vectors; "
        f"every count verified ({report.copied} copied in this run)"
    )


def register(group: click.Group) -> None:
    """Add this module's commands to ``group``."""
    group.add_command(migrate)
